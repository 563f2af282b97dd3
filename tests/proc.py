"""Run one of the project's command lines as a real process on a given data dir."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_env(data_dir: Path, extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """Offline, on its own data dir, with Ollama pointed at a dead loopback port."""
    return {
        **os.environ,
        **(extra_env or {}),
        "MASIS_DATA_DIR": str(data_dir),
        "MASIS_PROVIDER": "offline",
        "OLLAMA_HOST": "http://127.0.0.1:9",
    }


def start_module(args: list[str], data_dir: Path) -> subprocess.Popen[str]:
    """The same, started in the background (for processes that must overlap)."""
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=module_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_module(
    args: list[str],
    data_dir: Path,
    extra_env: dict[str, str] | None = None,
    timeout_s: float = 300,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=module_env(data_dir, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def _stat_fields(pid: str) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, …; [] once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return []


def group_members(pgid: int) -> list[int]:
    """Processes of a process group that still run (a zombie holds no memory or file)."""
    members = []
    for entry in Path("/proc").iterdir():
        fields = _stat_fields(entry.name) if entry.name.isdigit() else []
        if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def still_there(find: Callable[[], list[int]], within_s: float = 5.0) -> list[int]:
    """What ``find`` still reports after waiting up to ``within_s`` for it to report nothing."""
    deadline = time.monotonic() + within_s
    while (found := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found
