"""The analyst's review responses: a rephrase is a question like the first, a rejected source
stays out of every later pass, a passage the analyst picks leads the answer."""

from __future__ import annotations

import json
import re

import pytest
from langgraph.runtime import Runtime

from ingest.pipeline import Ingestor
from masis_core.__main__ import main as cli
from masis_core.answers.engine import OfflineEngine
from masis_core.answers.questions import MAX_QUESTION_CHARS
from masis_core.errors import InputError, ReviewError
from masis_core.graph.context import RunContext
from masis_core.graph.nodes import evaluator, human_review, web_searcher
from masis_core.graph.reviews import lead_with, other_passages
from masis_core.services.calibration import verdict_points
from masis_core.services.runs import RunService
from masis_core.services.web import to_evidence, web_id
from masis_core.text.sentences import strip_markers
from tests.ollama_helpers import REVIEW_OK, draft, ollama_plant, replies
from tests.ollama_helpers import ask as ask_ollama
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_QUESTION

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


LOW_CONFIDENCE = {
    "kind": "low_confidence",
    "options": ["rephrase", "accept", "cancel"],
    "details": {"passages": ["Another passage.", "A third passage."]},
}


@pytest.mark.parametrize("lead", [3, -1, True, "1", 1.0])
def test_a_chosen_lead_must_be_one_of_the_offered_passages(lead) -> None:
    with pytest.raises(ReviewError, match="0 for the lead, 1 to 2"):
        human_review.validate(LOW_CONFIDENCE, {"action": "accept", "lead": lead})


def test_a_chosen_lead_needs_passages_to_choose_from() -> None:
    assert human_review.validate(LOW_CONFIDENCE, {"action": "accept", "lead": 2})["lead"] == 2
    for details in ({}, None, {"passages": None}):
        alone = {**LOW_CONFIDENCE, "details": details}
        with pytest.raises(ReviewError, match="no other passage"):
            human_review.validate(alone, {"action": "accept", "lead": 1})


def test_lead_with_moves_one_passage_to_the_front_and_keeps_the_rest_in_order() -> None:
    draft = "Lead. [1]\n\nSecond. [2]\n\n[4]\n\nThird. [3] More. [3]"
    # A paragraph of markers alone is no passage: the numbers offered and applied agree.
    assert other_passages(draft) == ["Second.", "Third. More."]
    for n, text in enumerate(other_passages(draft), start=1):  # as the evaluator shows it
        shown = evaluator.check(lead_with(draft, n), [{"text": "x"}] * 4)["answer"]
        assert strip_markers(shown.split("\n\n")[0]) == text
    blank = "Lead. [1]\n\nA. [2]\n\n\n\n... [3]\n\nB. [2]"
    assert other_passages(blank) == ["A.", "B."]
    assert lead_with(blank, 2).startswith("B. [2]\n\nLead. [1]")
    assert lead_with(draft, 2) == "Third. [3] More. [3]\n\nLead. [1]\n\nSecond. [2]"
    assert lead_with(draft, 1) == "Second. [2]\n\nLead. [1]\n\nThird. [3] More. [3]"


def test_the_analyst_leads_with_another_passage_and_the_run_ends_judged_again(
    bench, boiler_log
) -> None:
    """Paused on a weak lead, the review offers the draft's other passage; choosing it puts
    it first, renumbers the citations, judges the new lead and completes the same run."""
    research = RunService(bench)
    rec = research.ask(boiler_log.id, BOILER_LOG_QUESTION)
    assert rec.status == "needs_human" and rec.hitl["kind"] == "low_confidence"
    assert rec.answer.startswith("The boiler log is kept in the plant office")
    assert rec.hitl["details"]["passages"] == [BOILER_LOG_ENTRIES]
    critics = sum(e["node"] == "critic" for e in rec.trace)

    done = research.resume(rec.run_id, {"action": "accept", "lead": 1})
    assert done.status == "completed" and done.run_id == rec.run_id
    lead, also = done.answer.split("\n\n")
    assert lead == f"{BOILER_LOG_ENTRIES} [1]"
    assert also.startswith("The boiler log is kept in the plant office") and also.endswith("[2]")
    assert [c["filename"] for c in done.citations] == ["log.txt", "office.txt"]
    assert done.metrics["accepted_by_analyst"] is True
    after = done.trace[[e["node"] for e in done.trace].index("human_review") :]
    assert [e["node"] for e in after] == ["human_review", "critic", "evaluator", "supervisor"]
    assert after[0]["lead"] == 1 and after[-1]["lead_chosen"] is True
    assert sum(e["node"] == "critic" for e in done.trace) == critics + 1
    assert done.confidence == after[1]["confidence"]
    with pytest.raises(InputError, match="is completed"):  # the run is over
        research.resume(rec.run_id, {"action": "accept", "lead": 1})
    # The choice is the analyst's verdict: the lead passed over was wrong, the chosen right.
    assert done.feedback is True and research.get(rec.run_id).feedback is True
    last = [e for e in rec.trace if e["node"] == "critic"][-1]
    before = last.get("judged_confidence") or last["confidence"]
    points = verdict_points(research.runs(boiler_log.id))
    assert [(p.score, p.right) for p in points] == [(before, False), (done.confidence, True)]


def test_an_ollama_draft_is_not_offered_as_passages(bench, fake_ollama) -> None:
    """A model's draft is prose cut into paragraphs where its citations change, not passages
    of one place each, and its critic reads the whole answer: the review offers no lead."""
    research, fake = ollama_plant(bench, fake_ollama)
    schedule = b"The pump inspection happens every 500 operating hours, says the schedule."
    ws = bench.open_workspace("plant", create=False)
    Ingestor(bench).ingest_bytes(ws, schedule, "schedule.txt")
    fake.state.default_reply = replies(
        draft(
            ("The technician checks the seals and the relief valve.", [1]),
            ("Inspections happen every 500 operating hours.", [2]),  # a citation is required
        ),
        review={**REVIEW_OK, "confidence": 0.3},
    )
    rec = ask_ollama(research)
    assert rec.status == "needs_human" and rec.hitl["kind"] == "low_confidence", rec.error
    assert "\n\n" in rec.answer and rec.hitl["details"]["passages"] == []
    with pytest.raises(ReviewError, match="no other passage"):
        research.resume(rec.run_id, {"action": "accept", "lead": 1})
    assert research.get(rec.run_id).status == "needs_human"


def test_the_command_line_lists_the_passages_and_resumes_with_one(boiler_log, capsys) -> None:
    assert cli(["ask", "-w", boiler_log.id, BOILER_LOG_QUESTION]) == 0
    out = capsys.readouterr().out
    assert f"  also relevant 1: {BOILER_LOG_ENTRIES}\n" in out
    run_id = re.search(r"^run (\w+): needs_human$", out, re.M).group(1)
    response = json.dumps({"action": "accept", "lead": 1})
    assert cli(["resume", run_id, "--response", response, "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["status"] == "completed"
    assert done["answer"].startswith(BOILER_LOG_ENTRIES)
