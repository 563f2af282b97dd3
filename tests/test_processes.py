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


# An evaluation over two worker processes, its parent killed once both workers run.
EVALUATING = """
import json, os, signal, sys, threading
from pathlib import Path
from evaluation import governance

cases = Path(sys.argv[1])
cases.write_text("".join(
    json.dumps({"id": f"c{n}", "query": "What does upsmon do?", "expected_mode": "answer",
                "contexts": ["upsmon shuts the system down on a low battery state."]}) + "\\n"
    for n in range(400)
))
original = governance._run_shard

def announce() -> None:
    marker = Path(sys.argv[2])
    while not marker.exists():
        threading.Event().wait(0.05)
    os.kill(os.getpid(), signal.SIGKILL)

threading.Thread(target=announce, daemon=True).start()
governance.run_governance(cases, workers=2)
"""


def test_evaluation_workers_die_with_their_parent(tmp_path: Path) -> None:
    """``eval governance`` splits the cases over spawned workers; a killed evaluation must not
    leave them running (they used to finish their whole share as orphans)."""
    marker = tmp_path / "workers-started"
    watcher = (
        "import sys, time, pathlib\n"
        "from tests.proc import group_members\n"
        "pg = int(sys.argv[1])\n"
        "while len(group_members(pg)) < 4: time.sleep(0.05)\n"  # parent, tracker, 2 workers
        "pathlib.Path(sys.argv[2]).touch()\n"
    )
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", EVALUATING, str(tmp_path / "cases.jsonl"), str(marker)],
            cwd=ROOT,
            stderr=err,
            start_new_session=True,
        )
        subprocess.run(
            [sys.executable, "-c", watcher, str(proc.pid), str(marker)],
            cwd=ROOT,
            timeout=180,
            check=True,
        )
        proc.wait(timeout=120)
        err.seek(0)
        assert proc.returncode == -signal.SIGKILL, err.read()[-2000:]
    orphans = still_there(lambda: group_members(proc.pid), within_s=30)
    if orphans:
        os.killpg(proc.pid, signal.SIGKILL)
    assert orphans == []
