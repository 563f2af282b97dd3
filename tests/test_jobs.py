"""Long work as jobs: interruptions, orphans, claims and cancellation leave nothing stuck.

Streamlit stops a script by raising a ``BaseException`` subclass at the next ``st.*`` call;
these tests raise Streamlit's own ``StopException`` where a page's callback would have been
interrupted, on real Chroma, SQLite checkpoints and LangGraph.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from ingest.pipeline import Ingestor, Source, doc_id_for
from masis_core.errors import RunBusy, WorkspaceError
from masis_core.services import heartbeat
from masis_core.services.jobs import JobManager
from masis_core.services.runs import INTERRUPTED, RunService
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import filler, make_pdf

VALVE = (
    "The pressure relief valve of the pump opens at 230 bar. The valve is tested every year "
    "and its seal is replaced whenever the test shows a leak of more than two drops a minute."
)
# The run store, its claim and the checkpoints: the same tests on SQLite and PostgreSQL.
pytestmark = pytest.mark.usefixtures("backend")

OFF_TOPIC = "What was the population of Mongolia's capital city in 1990?"


@pytest.fixture
def ws(bench: Workbench):
    ws = bench.create_workspace("plant", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, make_pdf([VALVE]), "valve.pdf")
    assert report.status == "ingested"
    return ws


@pytest.fixture
def research(bench: Workbench) -> RunService:
    return RunService(bench)


def stop_after(n: int):
    """An ``on_event`` that behaves like a page whose script is stopped at its n-th event."""
    seen = {"n": 0}

    def on_event(kind: str, _payload: dict[str, Any]) -> None:
        if kind == "node":
            seen["n"] += 1
            if seen["n"] >= n:
                raise StopException()

    return on_event


def test_a_stopped_script_mid_run_leaves_a_resumable_run(research: RunService, ws) -> None:
    with pytest.raises(StopException):
        research.ask(ws.id, "At what pressure does the relief valve open?", on_event=stop_after(2))
    (rec,) = research.store.list(ws.id)
    assert rec.status == "failed" and rec.error == INTERRUPTED
    assert rec.owner is None  # nobody holds it
    done = research.resume(rec.run_id, None)
    assert done.status == "completed"
    assert "230 bar" in (done.answer or "")
    assert done.run_id == rec.run_id


def test_a_verdict_given_on_a_paused_run_survives_its_resume(research: RunService, ws) -> None:
    """The thumbs sit under a paused run's draft too; the run is saved again when resumed,
    verdict included (PostgreSQL stores it as an integer, not a Python bool)."""
    paused = research.ask(ws.id, OFF_TOPIC)
    assert paused.status == "needs_human"
    research.mark(paused.run_id, True)
    response = {"action": "rephrase", "text": "At what pressure does the relief valve open?"}
    done = research.resume(paused.run_id, response)
    assert done.status == "completed", done.error
    stored = research.store.get(paused.run_id)
    assert stored is not None and stored.feedback is True


def test_a_stopped_script_mid_resume_is_not_left_paused(research: RunService, ws) -> None:
    paused = research.ask(ws.id, OFF_TOPIC)
    assert paused.status == "needs_human"
    response = {"action": "rephrase", "text": "At what pressure does the relief valve open?"}
    with pytest.raises(StopException):
        research.resume(paused.run_id, response, on_event=stop_after(1))
    rec = research.store.get(paused.run_id)
    # Not a stale 'needs_human' whose checkpoint has moved on: failed, and resumable as such.
    assert rec.status == "failed" and rec.error == INTERRUPTED
    done = research.resume(rec.run_id, None)
    assert done.status == "completed"
    assert done.question == "At what pressure does the relief valve open?"
    assert "230 bar" in (done.answer or "")


def test_two_threads_resuming_one_paused_run_exactly_one_runs(
    bench: Workbench, research: RunService, ws
) -> None:
    paused = research.ask(ws.id, OFF_TOPIC)
    other = RunService(bench)  # another tab's or process's handle on the same data
    gate = threading.Barrier(2)
    outcomes: list[str] = []

    def claim(r: RunService) -> None:
        gate.wait()
        try:
            rec = r.resume(paused.run_id, {"action": "cancel"})
            outcomes.append(rec.status)
        except RunBusy as exc:
            outcomes.append(f"busy: {exc}")

    threads = [threading.Thread(target=claim, args=(r,)) for r in (research, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.split(":")[0] for o in outcomes) == ["busy", "cancelled"], outcomes
    trace = research.store.get(paused.run_id).trace
    assert [e["node"] for e in trace].count("human_review") == 1  # once, not per claimant


def test_a_run_whose_process_died_is_swept_and_resumes(
    bench: Workbench, research: RunService, ws
) -> None:
    rec, _state = research.start(ws.id, "At what pressure does the relief valve open?")
    # As a killed process leaves it: 'running', owned by a pid that no longer exists (above
    # Linux's largest pid), before any node ran.
    rec.owner = f"{socket.gethostname()}:{2**22 + 7}"
    research.store.save(rec)
    assert RunService(bench).store.get(rec.run_id).status == "failed"  # swept at start-up
    done = research.resume(rec.run_id, None)
    assert done.status == "completed"


def test_a_live_run_is_not_swept_and_cannot_be_claimed(research: RunService, ws) -> None:
    rec, _state = research.start(ws.id, "At what pressure does the relief valve open?")
    assert research.store.sweep_orphans() == 0
    with pytest.raises(RunBusy):
        research.resume(rec.run_id, None)


def test_the_heartbeat_thread_ends_when_no_run_is_driven(
    research: RunService, ws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle service holds no thread: a thread left beating forever also kept its service,
    Chroma client and graph alive (hundreds of them in one test session)."""
    monkeypatch.setattr(heartbeat, "HEARTBEAT_S", 0.001)
    started: list[threading.Thread] = []
    beats = research.driver.heartbeat
    original = beats.beating

    def beating(run_id: str, on: bool) -> None:
        original(run_id, on)
        if on and beats.thread is not None:
            started.append(beats.thread)

    monkeypatch.setattr(beats, "beating", beating)
    rec = research.ask(ws.id, "At what pressure does the relief valve open?")
    assert rec.status == "completed"
    assert started, "no heartbeat thread ran during the run"
    started[0].join(timeout=60)
    assert not started[0].is_alive()
    assert beats.thread is None


def test_run_job_finishes_without_its_page(bench: Workbench, research: RunService, ws) -> None:
    workers = JobManager(research, Ingestor(bench))
    job = workers.ask(ws.id, "At what pressure does the relief valve open?")
    assert research.store.get(job.id).status in ("running", "completed")
    assert job.wait(120)
    rec = research.store.get(job.id)
    assert rec.status == "completed"
    assert sorted(e["node"] for e in job.trace()) == sorted(e["node"] for e in rec.trace)
    assert job.record is not None and job.record.answer == rec.answer


def test_batch_job_reports_each_file_and_can_be_cancelled(bench: Workbench) -> None:
    ws = bench.create_workspace("batch", "wordllama")
    ingestor = Ingestor(bench)
    workers = JobManager(RunService(bench), ingestor)
    sources = [
        Source.of_bytes(f"doc-{i}.pdf", make_pdf([filler(f"topic {i}", 150)])) for i in range(4)
    ]
    first_done = threading.Event()
    release = threading.Event()
    real_complete = ingestor._complete

    def complete_then_hold(*args: Any, **kwargs: Any):
        report = real_complete(*args, **kwargs)
        first_done.set()
        release.wait(60)  # the page's cancel arrives while file 1 is being reported
        return report

    ingestor._complete = complete_then_hold  # type: ignore[method-assign]
    job = workers.ingest(ws, sources)
    assert first_done.wait(60)
    job.cancel()
    release.set()
    assert job.wait(120)
    assert job.state == "cancelled"
    stages = [f.stage for f in job.files]
    assert stages[0] == "ingested"
    assert stages[1:] == ["cancelled"] * 3
    assert [d.filename for d in bench.documents(ws.id)] == ["doc-0.pdf"]
    assert not bench.registry.stale_documents()


def test_an_interrupted_ingest_leaves_nothing_and_can_be_redone(bench: Workbench) -> None:
    ws = bench.create_workspace("stopped", "wordllama")
    ingestor = Ingestor(bench)
    data = make_pdf([filler("gearbox", 300), filler("clutch", 300)])

    def stop_while_storing(stage: str, _done: int, _total: int) -> None:
        if stage == "storing":
            raise StopException()

    with pytest.raises(StopException):
        ingestor.ingest_source(ws, Source.of_bytes("gearbox.pdf", data), stop_while_storing)
    assert bench.registry.get_document(ws.id, doc_id_for(data)) is None
    assert not bench.registry.stale_documents()
    assert bench.store.count(ws.embed_model, ws.id) == 0
    assert not list(bench.settings.files_dir.glob("*/*"))
    again = ingestor.ingest_bytes(ws, data, "gearbox.pdf")  # same process, no restart
    assert again.status == "ingested", again.error
    assert bench.store.count(ws.embed_model, ws.id) == again.chunks


def test_a_workspace_is_not_deleted_while_its_jobs_work(bench: Workbench) -> None:
    """The page's check can be stale (a job started after it was drawn): the delete itself
    refuses, and goes through once the work has ended."""
    ws = bench.create_workspace("busy", "wordllama")
    workers = JobManager(RunService(bench), Ingestor(bench))
    release = threading.Event()
    job = workers.task("evaluation", ws.id, "held", lambda job: release.wait(60))
    assert [j.id for j in workers.working(ws.id)] == [job.id]
    with pytest.raises(WorkspaceError, match="busy \\(evaluation\\)"):
        workers.delete_workspace(ws.id)
    assert [w.id for w in bench.workspaces()] == ["busy"]
    release.set()
    assert job.wait(60)
    assert workers.working(ws.id) == []
    workers.delete_workspace(ws.id)
    assert bench.workspaces() == []


def test_a_server_stopping_mid_run_leaves_a_resumable_run_and_no_traceback(
    research: RunService, ws, monkeypatch, caplog
) -> None:
    """When the server process exits under a run, the thread pools the graph runs its nodes
    on refuse new work (``concurrent.futures`` sets its exit flag first). That is an
    interruption, not a failure to debug: the run is marked interrupted, the log holds one
    warning without a traceback, and the run resumes from its checkpoint. The same refusal
    without the exit flag is a failure, logged with its traceback."""
    import concurrent.futures.thread as pools

    question = "At what pressure does the relief valve open?"

    def exiting_at_researcher(kind: str, payload: dict[str, Any]) -> None:
        if kind == "node" and payload.get("node") == "planner":
            monkeypatch.setattr(pools, "_shutdown", True)  # the interpreter begins to exit

    with caplog.at_level("WARNING"):
        rec = research.ask(ws.id, question, on_event=exiting_at_researcher)
    monkeypatch.setattr(pools, "_shutdown", False)
    assert rec.status == "failed" and rec.error == INTERRUPTED
    ours = [r for r in caplog.records if r.name == "masis_core.services.driving"]
    assert [r.levelname for r in ours] == ["WARNING"] and ours[0].exc_info is None
    done = research.resume(rec.run_id, None)
    assert done.status == "completed" and "230 bar" in (done.answer or "")
    assert done.run_id == rec.run_id
    # An executor shut down while the interpreter goes on is a bug to see, traceback and all.
    from masis_core.services import driving

    def refused(*_args: Any) -> None:
        raise RuntimeError("cannot schedule new futures after shutdown")

    monkeypatch.setattr(driving.RunDriver, "_stream", refused)
    caplog.clear()
    failed = research.ask(ws.id, question)
    assert failed.status == "failed" and failed.error.startswith("RuntimeError: cannot schedule")
    ours = [r for r in caplog.records if r.name == "masis_core.services.driving"]
    assert [r.levelname for r in ours] == ["ERROR"] and ours[0].exc_info is not None
