"""Parse and preview children never outlive their parent, and hold no pipe but their own.

Linux only (the process table is read from /proc)."""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from ingest import isolate
from ingest.isolate import ChildCall
from tests.proc import ROOT, group_members, still_there

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


# A parent with a parse child under way (its result, ~2 MB, is far over the 64 KiB a pipe
# buffers), killed without a chance to clean up. "watcher" disables prctl to test the fallback.
ORPHANING = """
import os, signal, sys
from ingest import isolate
if sys.argv[1] == "watcher":
    isolate._prctl = None
pending = isolate.PendingParse(b"turbine blade " * 150_000, "big.txt", 60)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("mode", ["prctl", "watcher"])
def test_children_die_with_their_parent(mode: str) -> None:
    with tempfile.TemporaryFile("w+") as err:  # a pipe would stay open while an orphan lives
        proc = subprocess.Popen(
            [sys.executable, "-c", ORPHANING, mode],
            cwd=ROOT,
            stderr=err,
            start_new_session=True,  # its own process group: the children are found by it
        )
        proc.wait(timeout=120)
        err.seek(0)
        assert proc.returncode < 0, err.read()[-2000:]
    orphans = still_there(lambda: group_members(proc.pid))
    if orphans:
        os.killpg(proc.pid, signal.SIGKILL)
    assert orphans == []


def death_signal() -> int:
    """The signal this process gets when its parent dies (``PR_GET_PDEATHSIG``)."""
    value = ctypes.c_int(-1)
    assert isolate._prctl is not None
    assert isolate._prctl(2, ctypes.byref(value), 0, 0, 0) == 0
    return value.value


@pytest.mark.skipif(isolate._prctl is None, reason="prctl is Linux's")
def test_a_child_asks_for_sigkill_when_its_parent_dies() -> None:
    assert ChildCall(death_signal, (), 60).outcome() == ("ok", signal.SIGKILL)


def receive_ends() -> set[int]:
    """Pipes this process can read from (both ends of a pipe share its inode)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            info = os.fstat(int(fd))
            flags = int(Path(f"/proc/self/fdinfo/{fd}").read_text().split()[3], 8)
        except OSError:  # the fd listdir itself used
            continue
        if stat.S_ISFIFO(info.st_mode) and flags & os.O_ACCMODE == os.O_RDONLY:
            inodes.add(info.st_ino)
    return inodes


def test_a_child_holds_no_receive_end_of_its_own_or_its_siblings() -> None:
    blocked = ChildCall(threading.Event().wait, (), 60)
    try:
        probe = ChildCall(receive_ends, (), 60)
        ours = {os.fstat(c._receive.fileno()).st_ino for c in (blocked, probe)}
        assert ours <= receive_ends()  # as the parent sees them
        kind, theirs = probe.outcome()
    finally:
        blocked.cancel()
    assert kind == "ok"
    assert not theirs & ours
