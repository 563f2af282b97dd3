"""Stored originals written by several writers at once, and the sweep of partial writes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ingest.pipeline import STALE_AFTER, Ingestor, doc_id_for
from masis_core.workspaces.workbench import Workbench


def leftovers(bench: Workbench) -> list[str]:
    return sorted(p.name for p in bench.settings.files_dir.rglob("*") if p.is_file())


def test_two_writers_keeping_the_same_bytes_at_once_both_succeed(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workspaces ingesting one file at the same moment: both have written their partial
    file before either renames it into place (a barrier in ``os.replace`` makes sure)."""
    data = os.urandom(256 * 1024)
    doc_id = doc_id_for(data)
    both_written = threading.Barrier(2, timeout=30)
    real_replace = os.replace

    def replace_together(src: str | Path, dst: str | Path) -> None:
        both_written.wait()
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_together)
    with ThreadPoolExecutor(2) as pool:
        paths = list(pool.map(lambda _: bench.keep_file(doc_id, data), range(2)))
    assert paths == [bench.file_path(doc_id)] * 2
    assert leftovers(bench) == [doc_id]
    assert paths[0].read_bytes() == data


def part_of(bench: Workbench, doc_id: str, pid: int) -> Path:
    """A partial file as ``keep_file`` names it, for writer ``pid``."""
    folder = bench.file_path(doc_id).parent
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f"{doc_id}.{pid}.x1y2z3.part"
    part.write_bytes(b"half a file")
    return part


def test_the_sweep_removes_partial_files_of_dead_writers_only(bench: Workbench) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    live = part_of(bench, "a" * 64, os.getpid())  # e.g. the UI keeping a file right now
    dead = part_of(bench, "b" * 64, ended.pid)
    Ingestor(bench).sweep_stale()
    assert live.exists()
    assert not dead.exists()


def test_the_sweep_retires_old_partial_files_whatever_their_name(bench: Workbench) -> None:
    """A pid reused since, or a name from before writers were recorded: age decides."""
    reused = part_of(bench, "c" * 64, os.getpid())
    legacy = reused.with_name("c" * 64 + ".part")
    legacy.write_bytes(b"old")
    Ingestor(bench).sweep_stale()
    assert reused.exists() and legacy.exists()
    Ingestor(bench).sweep_stale(now=datetime.now(UTC) + STALE_AFTER + timedelta(minutes=1))
    assert not reused.exists() and not legacy.exists()
