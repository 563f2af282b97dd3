"""Resource limits: huge questions, a thousand documents, a run that keeps conflicting."""

from __future__ import annotations

import pytest

from ingest.pipeline import Ingestor
from masis_core.answers.questions import MAX_QUESTION_CHARS
from masis_core.errors import MasisError
from masis_core.services.runs import RunService
from tests.texts import REVENUE_A, REVENUE_B

pytestmark = pytest.mark.slow


def test_a_huge_question_is_refused_with_the_limit_and_a_long_one_is_bounded(bench) -> None:
    ws = bench.create_workspace("w", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"The pump is inspected every 500 hours. " * 20, "p.txt")
    research = RunService(bench)
    with pytest.raises(MasisError, match=r"100,000 characters long; the limit is 20,000"):
        research.ask("w", "x" * 100_000)
    assert research.store.list("w") == []  # nothing half-created
    long_q = "How often is the pump inspected? " + "Context about pumps. " * 900
    assert len(long_q) <= MAX_QUESTION_CHARS
    rec = research.ask("w", long_q)
    assert rec.status != "failed", rec.error
    planner = next(t for t in rec.trace if t["node"] == "planner")
    assert all(len(a) <= 300 for a in planner["alternatives"])


def test_a_thousand_documents_in_one_workspace(bench) -> None:
    ws = bench.create_workspace("big", "wordllama")
    ingestor = Ingestor(bench)
    for n in range(1000):
        text = f"Record {n}: unit U{n:04d} was serviced in week {n % 52} by team {n % 7}."
        assert ingestor.ingest_bytes(ws, text.encode(), f"record-{n:04d}.txt").status == (
            "ingested"
        )
    assert len(bench.documents("big")) == 1000
    rec = RunService(bench).ask("big", "When was unit U0815 serviced?")
    assert rec.status != "failed", rec.error
    researcher = next(t for t in rec.trace if t["node"] == "researcher")
    assert researcher["limit"] == 10 and researcher["chunks"] <= 10 * researcher["queries"]
    assert any(c["filename"] == "record-0815.txt" for c in rec.citations)


def test_a_run_that_keeps_conflicting_ends_in_review_after_its_retries(bench) -> None:
    ws = bench.create_workspace("finance", "wordllama")
    ingestor = Ingestor(bench)
    ingestor.ingest_bytes(ws, REVENUE_A.encode(), "annual-report.txt")
    ingestor.ingest_bytes(ws, REVENUE_B.encode(), "press-summary.txt")
    question = "What total revenue did Northwind Traders report for 2023?"
    rec = RunService(bench).ask(ws.id, question, max_retries=5)
    assert rec.status == "needs_human" and rec.hitl["kind"] == "conflict"
    assert len(rec.metrics["retry_reasons"]) == 5
    assert sum(t["node"] == "researcher" for t in rec.trace) == 6  # bounded: 1 + 5 retries
