"""Server mode: workbench processes, each with its own data dir (two hosts, as far as they
can tell), on one PostgreSQL and one Chroma server. The test process is the first workbench,
command lines started from it are the others.

A document ingested through one is found through the other; a run paused on one is resumed
on the other; of two processes resuming the same run exactly one wins, and the race is real:
both are held at the claim's UPDATE by a row lock the test takes, then let go together.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import psycopg
import pytest

from ingest.pipeline import Ingestor
from masis_core.config import Settings, get_settings
from masis_core.errors import ConfigError
from masis_core.services.runs import RunService
from masis_core.storage.db import PostgresDatabase
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import make_pdf
from tests.proc import run_module, start_module
from tests.servers import ChromaServer
from tests.texts import BOILER, PUMP

pytestmark = pytest.mark.slow

OFF_TOPIC = "What was Apple's revenue in Q4 2024?"
PUMP_QUESTION = "How often must the hydraulic pump be inspected?"


@pytest.fixture
def team(
    tmp_path: Path,
    postgres_url: str,
    chroma_server: ChromaServer,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, Path]:
    """The two processes' data dirs; the servers through the environment they inherit."""
    monkeypatch.setenv("MASIS_POSTGRES_URL", postgres_url)
    monkeypatch.setenv("MASIS_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("MASIS_CHROMA_PORT", str(chroma_server.port))
    get_settings.cache_clear()
    return tmp_path / "host-a", tmp_path / "host-b"


def cli(args: list[str], data_dir: Path) -> dict:
    done = run_module(args, data_dir)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def workbench(data_dir: Path) -> Workbench:
    """This process's workbench, on its own data dir and the servers."""
    return Workbench(Settings(data_dir=data_dir))


def ingest_manual(bench: Workbench) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "manual.pdf").status == (
        "ingested"
    )


def pause_a_run(bench: Workbench) -> str:
    paused = RunService(bench).ask("plant", OFF_TOPIC)
    assert paused.status == "needs_human"
    return paused.run_id


def test_a_document_ingested_through_one_process_is_found_through_the_other(
    team: tuple[Path, Path],
) -> None:
    host_a, host_b = team
    ingest_manual(workbench(host_a))
    answer = cli(["masis_core", "ask", "-w", "plant", PUMP_QUESTION, "--json"], host_b)
    assert answer["status"] == "completed"
    assert "500 operating hours" in answer["answer"]
    assert {c["filename"] for c in answer["citations"]} == {"manual.pdf"}
    assert not (host_a / "masis.db").exists() and not (host_b / "masis.db").exists()
    # An operator can see where the shared state is, without the credentials.
    status = cli(["masis_core", "status", "--json"], host_b)
    assert status["database"].startswith("postgresql://127.0.0.1:")
    assert status["vectors"].startswith("Chroma server 127.0.0.1:")
    assert [ws["id"] for ws in status["workspaces"]] == ["plant"]


def test_a_run_paused_on_one_process_is_resumed_on_the_other(team: tuple[Path, Path]) -> None:
    host_a, host_b = team
    bench = workbench(host_a)
    ingest_manual(bench)
    run_id = pause_a_run(bench)
    response = json.dumps({"action": "rephrase", "text": PUMP_QUESTION})
    done = cli(["masis_core", "resume", run_id, "--response", response, "--json"], host_b)
    assert done["run_id"] == run_id
    assert done["status"] == "completed"
    assert "500 operating hours" in done["answer"]
    # the checkpointed first pass is kept: one trace, both passes, human review once
    nodes = [e["node"] for e in done["trace"]]
    assert nodes.count("human_review") == 1 and nodes.count("synthesizer") == 2


def waiting_on_locks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_two_processes_resuming_the_same_run_exactly_one_wins(
    team: tuple[Path, Path], postgres_url: str
) -> None:
    host_a, host_b = team
    bench = workbench(host_a)
    ingest_manual(bench)
    run_id = pause_a_run(bench)
    response = json.dumps({"action": "cancel"})
    args = ["masis_core", "resume", run_id, "--response", response, "--json"]
    with psycopg.connect(postgres_url) as gate:
        # Hold the run's row: both claims' UPDATEs queue behind it, then race when it goes.
        gate.execute("SELECT 1 FROM runs WHERE run_id = %s FOR UPDATE", (run_id,))
        procs = [start_module(args, host) for host in (host_a, host_b)]
        deadline = time.monotonic() + 120
        while waiting_on_locks(postgres_url) < 2:  # readiness poll, bounded
            for p in procs:
                assert p.poll() is None, p.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the two resumes never reached the claim"
            time.sleep(0.1)
        gate.commit()
    results = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] == 0 and codes[1] != 0, results
    won = next(out for p, (out, _) in zip(procs, results, strict=True) if p.returncode == 0)
    lost = next(err for p, (_, err) in zip(procs, results, strict=True) if p.returncode != 0)
    assert json.loads(won)["status"] == "cancelled"
    assert "was just taken by another tab or process" in lost
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute("SELECT status, trace FROM runs WHERE run_id = %s", (run_id,)).fetchone()
    assert row is not None and row[0] == "cancelled"
    assert [e["node"] for e in json.loads(row[1])].count("human_review") == 1


def test_an_unreachable_postgres_is_one_line_without_the_password(tmp_path: Path) -> None:
    url = "postgresql://analyst:s3cret@127.0.0.1:9/masis"  # nothing listens on port 9
    done = run_module(["masis_core", "status"], tmp_path, {"MASIS_POSTGRES_URL": url})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: PostgreSQL at postgresql://127.0.0.1:9/masis cannot be used")
    assert "MASIS_POSTGRES_URL" in lines[0] and "s3cret" not in done.stderr


def test_a_malformed_postgres_url_says_how_to_write_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="postgresql://user:password@host:5432/database"):
        PostgresDatabase("postgresql://host:notaport/x?bogus_option=1")


def test_an_old_database_gains_later_columns_and_two_processes_may_start_at_once(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url) as conn:
        conn.execute(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, question "
            "TEXT NOT NULL, engine TEXT NOT NULL, status TEXT NOT NULL, answer TEXT, citations "
            "TEXT NOT NULL DEFAULT '[]', confidence DOUBLE PRECISION, hitl TEXT, metrics TEXT "
            "NOT NULL DEFAULT '{}', trace TEXT NOT NULL DEFAULT '[]', error TEXT, created_at "
            "TEXT NOT NULL, updated_at TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO runs (run_id, workspace_id, question, engine, status, created_at, "
            "updated_at) VALUES ('old', 'w', 'q?', 'offline', 'completed', 't', 't')"
        )
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PostgresDatabase(postgres_url).close()
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT question, thread, rowid FROM runs").fetchall()
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
    assert rows == [("q?", None, 1)]
    assert {"workspaces", "documents", "bm25_chunks", "web_cache", "evaluations"} <= tables
