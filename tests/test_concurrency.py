"""Two analysts at once on one data dir, as threads (one Streamlit server) and as processes
(two command lines): no "database is locked", no cross-talk between runs."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ingest.pipeline import Ingestor
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import filler, make_pdf
from tests.proc import start_module

pytestmark = pytest.mark.slow

TOPICS = {"alpha": "turbine blade", "beta": "reactor vessel"}


def analyst(bench: Workbench, research: RunService, ws_id: str, errors: list, runs: dict) -> None:
    try:
        ws = bench.create_workspace(ws_id, "wordllama")
        ingestor = Ingestor(bench)
        for n in range(3):
            text = f"{ws_id} manual {n}. " + filler(f"{TOPICS[ws_id]} {n}", 220)
            assert ingestor.ingest_bytes(ws, make_pdf([text]), f"{ws_id}-{n}.pdf").status == (
                "ingested"
            )
        runs[ws_id] = [
            research.ask(ws_id, f"How does the {TOPICS[ws_id]} section work in practice?")
            for _ in range(3)
        ]
    except Exception as exc:  # reported to the main thread
        errors.append(f"{ws_id}: {type(exc).__name__}: {exc}")


def test_two_analysts_in_threads_share_one_server(bench: Workbench) -> None:
    research = RunService(bench)
    errors: list[str] = []
    runs: dict[str, list] = {}
    threads = [
        threading.Thread(target=analyst, args=(bench, research, ws, errors, runs)) for ws in TOPICS
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert errors == []
    for ws_id, recs in runs.items():
        assert len(recs) == 3
        for rec in recs:
            assert rec.status != "failed", rec.error
            assert rec.workspace_id == ws_id
            assert all(c["filename"].startswith(ws_id) for c in rec.citations)
            stored = research.store.get(rec.run_id)
            assert stored.workspace_id == ws_id and stored.question == rec.question


def test_two_analysts_in_separate_processes(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    folders = {}
    for ws_id, topic in TOPICS.items():
        folder = tmp_path / ws_id
        folder.mkdir()
        for n in range(4):
            text = f"{ws_id} manual {n}. " + filler(f"{topic} {n}", 220)
            (folder / f"{ws_id}-{n}.pdf").write_bytes(make_pdf([text]))
        folders[ws_id] = folder
    ingests = [
        start_module(["ingest", "-w", ws_id, "--no-calibrate", str(folder), "--json"], data_dir)
        for ws_id, folder in folders.items()
    ]
    outputs = [p.communicate(timeout=600) for p in ingests]
    for proc, (out, err) in zip(ingests, outputs, strict=True):
        assert proc.returncode == 0, err[-2000:]
        assert "database is locked" not in err
        assert json.loads(out)["totals"]["ingested"] == 4
    asks = [
        start_module(
            ["masis_core", "ask", "-w", ws_id, f"How does the {topic} work?", "--json"], data_dir
        )
        for ws_id, topic in TOPICS.items()
        for _ in range(2)
    ]
    for proc, ws_id in zip(asks, [w for w in TOPICS for _ in range(2)], strict=True):
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        assert "database is locked" not in err
        rec = json.loads(out)
        assert rec["status"] != "failed"
        assert rec["citations"] and all(c["filename"].startswith(ws_id) for c in rec["citations"])


def open_in_thread(
    path: Path, reached: threading.Event
) -> tuple[threading.Thread, dict[str, object]]:
    """Open the SQLite database on another thread. A failure is kept in the outcome and sets
    ``reached``, so the test does not wait for a point the opener never got to."""
    from masis_core.storage.db import SqliteDatabase

    outcome: dict[str, object] = {}

    def open_it() -> None:
        try:
            outcome["db"] = SqliteDatabase(path)
        except Exception as exc:  # the failure under test
            outcome["error"] = exc
            reached.set()

    opener = threading.Thread(target=open_it)
    opener.start()
    return opener, outcome


def test_a_new_database_opened_while_another_process_writes_it_waits_its_turn(
    tmp_path: Path,
) -> None:
    """Switching a SQLite file to WAL needs it to itself, and SQLite says "database is locked"
    at once rather than waiting: two ingests started together on a new data dir failed one
    run in fifty. Here another connection holds the write lock; opening the database must
    wait for it (we release it only once the opener has met the lock), not fail."""
    import logging
    import sqlite3

    path = tmp_path / "masis.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE elsewhere (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO elsewhere VALUES (1)")

    met_the_lock = threading.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "locked while switching" in record.getMessage():
                met_the_lock.set()

    logger = logging.getLogger("masis_core.storage.db")
    handler, level = Watch(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        opener, outcome = open_in_thread(path, met_the_lock)
        assert met_the_lock.wait(timeout=60)
        assert "error" not in outcome, outcome.get("error")
        other.execute("COMMIT")
        opener.join(timeout=60)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        other.close()
    assert "error" not in outcome, outcome.get("error")
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert check.execute("SELECT x FROM elsewhere").fetchall() == [(1,)]
    check.close()


def test_two_processes_adding_a_missing_column_together_do_not_collide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new (or older) data dir lacks the later columns, and every opener adds them. Two
    ingests opening one together both found ``ocr_pages`` missing; the second ALTER failed
    with "duplicate column name". Here another connection adds the column, uncommitted,
    while the opener runs: we commit it only once the opener is at its first write, after
    any look it took at the columns, so without the lock around look and write it fails."""
    import sqlite3

    from masis_core.storage import db

    path = tmp_path / "masis.db"
    db.SqliteDatabase(path)
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("ALTER TABLE documents DROP COLUMN ocr_pages")  # a data dir from before it
    old.execute("BEGIN IMMEDIATE")
    old.execute("ALTER TABLE documents ADD COLUMN ocr_pages TEXT NOT NULL DEFAULT '[]'")

    at_first_write = threading.Event()

    class Watched(sqlite3.Connection):
        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
            if sql.lstrip().upper().startswith(("BEGIN IMMEDIATE", "ALTER TABLE")):
                at_first_write.set()
            return super().execute(sql, *args)

    real_connect = sqlite3.connect
    monkeypatch.setattr(
        db.sqlite3, "connect", lambda *a, **kw: real_connect(*a, factory=Watched, **kw)
    )
    try:
        opener, outcome = open_in_thread(path, at_first_write)
        assert at_first_write.wait(timeout=60)
        old.execute("COMMIT")
        opener.join(timeout=60)
    finally:
        old.close()
    assert not opener.is_alive()
    assert "error" not in outcome, outcome.get("error")
    check = real_connect(path)
    columns = [r[1] for r in check.execute("PRAGMA table_info(documents)")]
    check.close()
    assert columns.count("ocr_pages") == 1
