"""The analyst's review responses: a rephrase is a question like the first, a rejected source
stays out of every later pass."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from ingest.pipeline import Ingestor
from masis_core.answers.engine import OfflineEngine
from masis_core.answers.questions import MAX_QUESTION_CHARS
from masis_core.errors import InputError, ReviewError
from masis_core.graph.context import RunContext
from masis_core.graph.nodes import human_review, web_searcher
from masis_core.services.runs import RunService
from masis_core.services.web import to_evidence, web_id

NO_EVIDENCE = {"kind": "no_evidence", "options": ["rephrase", "cancel"]}


def test_a_rephrase_obeys_the_question_length_limit() -> None:
    too_long = "x" * (MAX_QUESTION_CHARS + 1)
    with pytest.raises(ReviewError, match=r"20,001 characters long; the limit"):
        human_review.validate(NO_EVIDENCE, {"action": "rephrase", "text": too_long})
    at_limit = "x" * MAX_QUESTION_CHARS
    ok = human_review.validate(NO_EVIDENCE, {"action": "rephrase", "text": f"  {at_limit} "})
    assert ok["text"] == at_limit


@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_a_rephrase_needs_a_question(text) -> None:
    with pytest.raises(ReviewError, match="question is empty"):
        human_review.validate(NO_EVIDENCE, {"action": "rephrase", "text": text})


def test_a_too_long_rephrase_is_refused_and_the_run_stays_paused(bench) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"The pump is inspected every 500 hours.", "p.txt")
    research = RunService(bench)
    rec = research.ask(ws.id, "What was Apple's revenue in Q4 2024?")
    assert rec.status == "needs_human" and "rephrase" in rec.hitl["options"]
    huge = {"action": "rephrase", "text": "How often? " * 5_000}
    with pytest.raises(InputError, match="the limit is 20,000"):
        research.resume(rec.run_id, huge)
    assert research.store.get(rec.run_id).status == "needs_human"


def test_web_searcher_drops_excluded_sources_from_fresh_results(bench) -> None:
    rejected, kept = "https://a.example/claim", "https://b.example/other"
    results = [to_evidence({"url": u, "title": u, "content": "text"}) for u in (rejected, kept)]

    def search(queries, trusted=None, domains=None):
        return {"results": results, "api_calls": len(queries)}

    config = Runtime(context=RunContext(bench, OfflineEngine(), search))
    state = {"plan": {"web_queries": ["q"]}, "excluded_docs": [web_id(rejected)]}
    out = web_searcher.node(state, config)
    assert [e["url"] for e in out["web_evidence"]] == [kept]
    assert out["trace"][0]["excluded"] == 1 and out["trace"][0]["results"] == 1
