"""Crash safety: the ingest process is SIGKILLed at 20 points; re-running the same command
leaves exactly what a clean ingest leaves, and no process of the killed ingest lives on."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from masis_core.config import Settings
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import filler, make_pdf
from tests.proc import ROOT, group_members, module_env, still_there

pytestmark = pytest.mark.slow

KILL_POINTS = 20
# Crash points a clean ingest of the folder below passes: 5 per document (claimed, file kept,
# chunks written, keyword rows written, visible) for 4 documents.
POINTS_PER_RUN = 20


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    for n, topic in enumerate(["pump", "boiler", "valve"]):
        pages = [filler(f"{topic} part {p}", 260) for p in range(3)]
        (d / f"{topic}-{n}.pdf").write_bytes(make_pdf(pages))
    # The second file in order: it is parsed in its child while the first is stored (kill
    # points 1-5), and its result (~90 KB) is more than a pipe buffers, so that child is still
    # there, blocked on sending, when its parent is killed.
    (d / "notes.md").write_text("# Notes\n\n" + filler("turbine", 15_000))
    return d


def snapshot(data_dir: Path) -> dict[str, Any]:
    """Everything an analyst could see or that could leak: registry, chunks, keyword rows,
    stored files."""
    bench = Workbench(Settings(data_dir=data_dir, provider="offline"))
    col = bench.store.collection("wordllama", "w")
    got = col.get(include=["metadatas"])
    docs = bench.registry.list_documents("w", status=None)
    files = sorted(p.relative_to(data_dir).as_posix() for p in (data_dir / "files").rglob("*"))
    return {
        "documents": sorted((d.doc_id, d.filename, d.status, d.pages, d.chunks) for d in docs),
        "chunks": sorted(got["ids"]),
        "visible": sorted(
            i for i, m in zip(got["ids"], got["metadatas"], strict=True) if m.get("visible")
        ),
        "keyword_rows": sorted(bench.bm25.rows("w").items()),
        "files": [f for f in files if not f.endswith("/") and "." not in Path(f).name],
        "partial_files": [f for f in files if f.endswith(".part")],
    }


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    pid: int  # also its process group


def ingest(folder: Path, data_dir: Path, kill_at: int | None = None) -> Ran:
    """``python -m ingest`` in a process group of its own, so whatever it started can be found
    after it is gone. Output goes to files: a pipe would stay open while an orphan holds it."""
    env = {"MASIS_TEST_KILL_AT": str(kill_at)} if kill_at else {}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ingest",
                "--workspace",
                "w",
                "--no-calibrate",
                str(folder),
                "--json",
            ],
            cwd=ROOT,
            env=module_env(data_dir, env),
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        proc.wait(timeout=300)
        out.seek(0)
        err.seek(0)
        return Ran(proc.returncode, out.read(), err.read(), proc.pid)


def test_kill_at_twenty_points_then_rerun_equals_a_clean_ingest(folder, tmp_path) -> None:
    clean_dir = tmp_path / "clean"
    assert ingest(folder, clean_dir).returncode == 0
    reference = snapshot(clean_dir)
    assert len(reference["documents"]) == 4
    assert reference["chunks"] == reference["visible"]
    assert {d[2] for d in reference["documents"]} == {"ready"}

    points = sorted(random.Random(20).sample(range(1, POINTS_PER_RUN + 1), KILL_POINTS))
    for point in points:
        data_dir = tmp_path / f"killed-{point}"
        killed = ingest(folder, data_dir, kill_at=point)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stderr[-500:])
        orphans = still_there(partial(group_members, killed.pid))
        if orphans:
            os.killpg(killed.pid, signal.SIGKILL)
        assert orphans == [], f"kill point {point}: children of the killed ingest live on"
        again = ingest(folder, data_dir)
        assert again.returncode == 0, (point, again.stdout[-1000:], again.stderr[-1000:])
        after = snapshot(data_dir)
        assert after == reference, f"kill point {point}"
