"""Real Word, PowerPoint, Excel, CSV, HTML, EPUB and e-mail files (tests/fixtures/
fetch-office-corpus.sh), and the checks every kind's ingest must pass on them."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama
from tests.ollama_helpers import draft, replies
from tests.proc import run_module
from tests.test_hostile_inputs import leftovers

CORPUS_ENV = "MASIS_OFFICE_CORPUS"


def office_corpus(kind: str) -> Path:
    """The corpus folder of one kind (docx, pptx, xlsx, csv, html, epub, eml); a skip with
    the reason when it was not fetched, a failure in CI, which fetches it."""
    value = os.environ.get(CORPUS_ENV)
    folder = Path(value) / kind if value else None
    if folder is None or not folder.is_dir() or not any(folder.iterdir()):
        reason = (
            f"{CORPUS_ENV} does not name a folder made by tests/fixtures/fetch-office-corpus.sh DIR"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the real-file tests, but {reason}", pytrace=False)
        pytest.skip(reason)
    return folder


def ingest_all_cleanly(folder: Path, data_dir: Path, minimum: int) -> list[dict]:
    """Ingest every file of ``folder`` with the CLI, as a real process: each ends ingested,
    duplicate or failed with a one-line reason, no traceback, a failure leaves nothing, and
    what is visible is whole. The files' reports."""
    paths = sorted(p for p in folder.iterdir() if p.is_file())
    assert len(paths) >= minimum, f"{folder} looks incomplete ({len(paths)} files)"
    proc = run_module(
        ["ingest", "--workspace", "office", "--no-calibrate", *map(str, paths), "--json"],
        data_dir,
        {"MASIS_PARSE_TIMEOUT_S": "60"},
        timeout_s=1800,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["totals"]["files"] == len(paths)
    bench = Workbench(Settings(data_dir=data_dir, provider="offline"))
    ready = bench.registry.list_documents("office")
    for f in out["files"]:
        assert f["status"] in ("ingested", "duplicate", "failed"), f
        if f["status"] == "failed":
            assert f["error"] and "\n" not in f["error"], f
            if f["doc_id"] not in {d.doc_id for d in ready}:
                assert leftovers(bench, "office", f["doc_id"]) == [], f
    assert all(d.status == "ready" for d in bench.registry.list_documents("office", status=None))
    assert sum(d.chunks for d in ready) == bench.store.count("wordllama", "office")
    assert not list((data_dir / "files").rglob("*.part"))
    return list(out["files"])


def cited_places(
    research: RunService,
    ws_id: str,
    question: str,
    fake: FakeOllama | None = None,
    answer: str = "",
) -> list[tuple[str, str]]:
    """(file, place) of each citation of the answer to ``question``: the offline engine's, or
    with ``fake`` the Ollama engine's, its draft ``answer`` citing the first passage found
    (the offline engine quotes sentences, and a table's rows are none)."""
    if fake is None:
        rec = research.ask(ws_id, question)
    else:
        fake.state.default_reply = replies(draft((answer, [1])))
        rec = research.ask(ws_id, question, engine="ollama")
    return [(str(c.get("filename")), str(c.get("place") or "")) for c in rec.citations]


def rezip(data: bytes, change: dict[str, bytes | None]) -> bytes:
    """A copy of a zip with some members replaced, added, or (``None``) left out."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for member in source.infolist():
            if member.filename not in change:
                copy.writestr(member, source.read(member))
        for name, body in change.items():
            if body is not None:
                copy.writestr(name, body)
    return out.getvalue()


def zip_bomb(member: str, unzipped_mb: int) -> bytes:
    """A zip whose ``member`` inflates to ``unzipped_mb`` MB of zeros (a few hundred KB
    packed), beside an otherwise harmless ``[Content_Types].xml``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb:
        bomb.writestr("[Content_Types].xml", "<Types/>")
        with bomb.open(member, "w", force_zip64=True) as fh:
            block = bytes(1024 * 1024)
            for _ in range(unzipped_mb):
                fh.write(block)
    return out.getvalue()
