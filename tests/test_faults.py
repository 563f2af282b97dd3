"""Faults around a run that the other suites do not cover: the Chroma server stops mid-run.

The run ends failed with a specific message, keeps what it had done, and ``resume``
completes the same run once the server is back.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from ingest.pipeline import Ingestor
from masis_core.config import get_settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.conftest import DEAD_HOST
from tests.ollama_helpers import ask, draft, ollama_plant, replies
from tests.pdfs import make_pdf
from tests.servers import chroma_command
from tests.texts import BOILER, PUMP

pytestmark = pytest.mark.slow


def test_the_chroma_command_is_found_beside_python_without_the_venv_on_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "")
    found = chroma_command()
    assert found is not None
    assert Path(found).parent == Path(sys.executable).parent


def test_chroma_server_stopped_mid_run_then_resume_completes(settings, chroma, monkeypatch):
    monkeypatch.setenv("MASIS_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("MASIS_CHROMA_PORT", str(chroma.port))
    get_settings.cache_clear()
    bench = Workbench(get_settings())
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "m.pdf").status == (
        "ingested"
    )
    research = RunService(bench)

    def stop_after_planning(kind: str, event: dict) -> None:
        if kind == "node" and event.get("node") == "planner":
            chroma.stop()  # the researcher, next, finds the server gone

    rec = research.ask(
        ws.id, "How often must the hydraulic pump be inspected?", on_event=stop_after_planning
    )
    assert rec.status == "failed"
    assert f"Chroma server at 127.0.0.1:{chroma.port} is not answering" in rec.error
    assert [t["node"] for t in rec.trace][:2] == ["supervisor", "planner"]  # kept
    assert research.store.get(rec.run_id).status == "failed"

    chroma.start()
    done = research.resume(rec.run_id, None)
    assert done.run_id == rec.run_id
    assert done.status == "completed", done.error
    assert "500 operating hours" in done.answer
    assert sum(t["node"] == "planner" for t in done.trace) == 1  # not planned again


@pytest.fixture
def ollama_run(bench, fake_ollama):
    """The Ollama-engine workspace of ``test_ollama_engine``, for runs that meet faults."""
    return ollama_plant(bench, fake_ollama)


def _answerable(fake) -> None:
    fake.state.default_reply = replies(
        draft(("The pump is inspected every 500 operating hours.", [1]))
    )


def test_ollama_down_then_back_resumes_the_same_run(ollama_run, bench) -> None:
    research, fake = ollama_run
    bench.settings.ollama_host = DEAD_HOST
    rec = ask(research)
    assert rec.status == "failed" and "not reachable" in rec.error
    bench.settings.ollama_host = fake.url
    _answerable(fake)
    done = research.resume(rec.run_id, None)
    assert (done.run_id, done.status) == (rec.run_id, "completed")
    assert "500 operating hours" in done.answer


def test_ollama_slower_than_the_time_out_then_resumes(ollama_run, bench) -> None:
    research, fake = ollama_run
    bench.settings.ollama_timeout_s = 0.5
    fake.state.hang = threading.Event()
    rec = ask(research)
    assert rec.status == "failed"
    assert "did not answer in time for 'llama3.1:8b'" in rec.error
    assert research.store.get(rec.run_id).status == "failed"
    fake.state.hang.set()
    fake.state.hang = None
    _answerable(fake)
    done = research.resume(rec.run_id, None)
    assert done.status == "completed" and done.run_id == rec.run_id


def test_a_failed_run_shows_its_error_and_a_resume_button(ollama_run, bench) -> None:
    from tests.apptest import fresh_app, settle

    research, _ = ollama_run
    bench.settings.ollama_host = DEAD_HOST
    rec = ask(research)
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    assert not at.exception
    assert any("not reachable" in e.value for e in at.error), [e.value for e in at.error]
    resume = next(b for b in at.button if b.label == "Resume from the last checkpoint")
    settle(resume.click().run())  # the resumed run is a server job
    assert research.store.get(rec.run_id).status == "failed"  # still down: a clear state again
