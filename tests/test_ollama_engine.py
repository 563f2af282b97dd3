"""The Ollama engine through the real langchain-ollama client and a scripted fake server."""

from __future__ import annotations

import json

import pytest

from masis_core.workspaces.workbench import Workbench
from tests.conftest import DEAD_HOST
from tests.fake_ollama import FakeOllama
from tests.ollama_helpers import REVIEW_OK, ask, draft, ollama_plant, replies, scripted


@pytest.fixture
def setup(bench: Workbench, fake_ollama: FakeOllama):
    return ollama_plant(bench, fake_ollama)


def test_fabricated_citation_is_removed_and_triggers_a_retry(setup) -> None:
    research, fake = setup
    fake.state.default_reply = replies(
        draft(("The pump is inspected every 500 operating hours.", [1, 99])),
        draft(("The pump is inspected every 500 operating hours.", [1])),
    )
    rec = ask(research)
    assert rec.status == "completed", rec.error
    assert rec.engine == "ollama"
    assert "[99]" not in rec.answer
    assert rec.answer == "The pump is inspected every 500 operating hours. [1]"
    (reason,) = rec.metrics["retry_reasons"]
    assert reason["citation_issue"] is True
    first_eval = next(t for t in rec.trace if t["node"] == "evaluator")
    assert first_eval["citation_violations"] == ["[99]"]
    synth_request = next(
        b for b in fake.requests_to("/api/chat") if (b.get("format") or {}).get("title") == "Draft"
    )
    prompt = " ".join(m["content"] for m in synth_request["messages"])
    assert "[1] (pump.txt, p. 1)" in prompt
    assert "documents first" in prompt  # the planner's strategy reaches the synthesizer
    # the same discipline as the offline composer: answer first, prose only
    assert "Answer first" in prompt and "One claim per sentence" in prompt
    assert "section headings" in prompt and "Never copy those" in prompt
    assert synth_request["options"]["num_ctx"] >= 8192


def test_malformed_json_gets_one_repair(setup) -> None:
    research, fake = setup
    fake.state.default_reply = replies(
        "Sure! Here is the answer: {sentences: oops",
        draft(("The pump is inspected every 500 operating hours.", [1])),
    )
    rec = ask(research)
    assert rec.status == "completed"
    synth = next(t for t in rec.trace if t["node"] == "synthesizer")
    assert synth["model_calls"] == 2
    assert "error" not in synth


def test_malformed_twice_is_a_clear_error_in_the_trace_not_a_crash(setup) -> None:
    research, fake = setup
    fake.state.default_reply = scripted(
        {
            "StrategicPlan": ["nope"],
            "Draft": ["still not json"],
            "Review": [json.dumps(REVIEW_OK)],
        }
    )
    rec = ask(research)
    assert rec.status in ("completed", "needs_human")
    planner = next(t for t in rec.trace if t["node"] == "planner")
    assert "query expansion failed, using the question" in planner["error"]
    synth = next(t for t in rec.trace if t["node"] == "synthesizer")
    assert "returned malformed Draft twice" in synth["error"]
    assert "extractive answer used instead" in synth["error"]
    assert rec.answer and "500" in rec.answer


def test_missing_chat_model_fails_clearly_and_the_run_resumes(setup) -> None:
    research, fake = setup
    fake.state.models = ["nomic-embed-text:latest"]
    rec = ask(research)
    assert rec.status == "failed"
    assert "ollama pull llama3.1:8b" in rec.error
    fake.state.models.append("llama3:latest")
    fake.state.default_reply = replies(
        draft(("The pump is inspected every 500 operating hours.", [1]))
    )
    resumed = research.resume(rec.run_id, None)
    assert resumed.status == "completed"


def test_server_down_fails_with_a_clear_message(setup, bench) -> None:
    research, _ = setup
    bench.settings.ollama_host = DEAD_HOST
    rec = ask(research)
    assert rec.status == "failed"
    assert "not reachable" in rec.error
