"""Crash safety: the ingest process is SIGKILLed at 20 points; re-running the same command
leaves exactly what a clean ingest leaves."""

from __future__ import annotations

import random
import signal
from pathlib import Path
from typing import Any

import pytest

from masis_core.config import Settings
from masis_core.services import Workbench
from tests.pdfs import filler, make_pdf
from tests.proc import run_module

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
    (d / "notes.md").write_text("# Notes\n\n" + filler("turbine", 300))
    return d


def snapshot(data_dir: Path) -> dict[str, Any]:
    """Everything an analyst could see or that could leak: registry, chunks, keyword rows,
    stored files."""
    bench = Workbench(Settings(data_dir=data_dir, provider="offline"))
    col = bench.store.collection("wordllama")
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


def ingest(folder: Path, data_dir: Path, kill_at: int | None = None):
    env = {"MASIS_TEST_KILL_AT": str(kill_at)} if kill_at else {}
    return run_module(["ingest", "--workspace", "w", str(folder), "--json"], data_dir, env)


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
        again = ingest(folder, data_dir)
        assert again.returncode == 0, (point, again.stdout[-1000:], again.stderr[-1000:])
        after = snapshot(data_dir)
        assert after == reference, f"kill point {point}"
