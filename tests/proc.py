"""Run one of the project's command lines as a real process on a given data dir."""

from __future__ import annotations

import os
import subprocess
import sys
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
    args: list[str], data_dir: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=module_env(data_dir, extra_env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
