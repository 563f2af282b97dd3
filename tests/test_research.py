"""The research graph end to end on real Chroma, SQLite checkpoints and LangGraph (offline)."""

from __future__ import annotations

import json

import pytest

from ingest.pipeline import Ingestor
from masis_core.errors import InputError
from masis_core.graph.nodes import planner, researcher
from masis_core.graph.nodes.supervisor import MAX_RETRIES_LIMIT
from masis_core.retrieval.hybrid import Candidate, retrieve
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.graphs import researcher_state, runtime_for
from tests.pdfs import make_pdf
from tests.proc import run_module
from tests.texts import BOILER, BRIDGE_A, BRIDGE_B, PUMP, REVENUE_A, REVENUE_B


@pytest.fixture
def workspace(bench: Workbench):
    ws = bench.create_workspace("plant", "wordllama")
    ingestor = Ingestor(bench)
    pdf = make_pdf([BOILER, PUMP])  # the pump is on page 2
    assert ingestor.ingest_bytes(ws, pdf, "plant-manual.pdf").status == "ingested"
    return ws


@pytest.fixture
def research(bench: Workbench) -> RunService:
    return RunService(bench)


def test_cited_answer_with_right_pages(research: RunService, workspace, bench) -> None:
    rec = research.ask(workspace.id, "How often must the hydraulic pump be inspected?")
    assert rec.status == "completed", rec.hitl
    assert "500 operating hours" in rec.answer
    assert rec.citations
    stored = bench.store.get_chunks("wordllama", "plant", [c["chunk_id"] for c in rec.citations])
    for c in rec.citations:
        assert c["chunk_id"] in stored
        assert c["filename"] == "plant-manual.pdf"
    pump_cite = next(c for c in rec.citations if "500 operating hours" in c["text"])
    assert pump_cite["page"] <= 2 <= pump_cite["page_end"]
    assert "[1]" in rec.answer
    nodes = [t["node"] for t in rec.trace]
    assert nodes[:3] == ["supervisor", "planner", nodes[2]]
    assert {"researcher", "web_searcher", "synthesizer", "critic", "evaluator"} <= set(nodes)
    res = next(t for t in rec.trace if t["node"] == "researcher")
    assert set(res) >= {
        "chunks",
        "filtered_out",
        "avg_score",
        "threshold_used",
        "augmented_query_used",
        "duration_ms",
    }
    # The critic names the fitted model its confidence came from (short test pages: the
    # development model; a library's ~200-word chunks get the document model).
    critic = next(t for t in rec.trace if t["node"] == "critic")
    assert critic["confidence_model"] in ("development", "documents")
    assert research.store.get(rec.run_id).status == "completed"


@pytest.mark.usefixtures("backend")
def test_off_topic_question_pauses_then_rephrase_completes(research, workspace) -> None:
    rec = research.ask(workspace.id, "What was Apple's revenue in Q4 2024?")
    assert rec.status == "needs_human"
    assert rec.hitl["kind"] == "no_evidence"
    assert "rephras" in rec.hitl["message"].lower()
    assert not any(t["node"] in ("critic", "evaluator") for t in rec.trace)
    synth = next(t for t in rec.trace if t["node"] == "synthesizer")
    assert synth.get("skipped") is True  # no model call after an empty retrieval

    done = research.resume(
        rec.run_id, {"action": "rephrase", "text": "How often is the hydraulic pump inspected?"}
    )
    assert done.status == "completed"
    assert done.question == "How often is the hydraulic pump inspected?"
    assert "500" in done.answer


def test_empty_workspace_says_upload(research, bench) -> None:
    bench.create_workspace("empty", "wordllama")
    rec = research.ask("empty", "How often is the pump inspected?")
    assert rec.hitl["kind"] == "no_evidence"
    assert "Upload documents" in rec.hitl["message"]
    assert rec.hitl["options"] == ["rephrase", "cancel"]


def test_invalid_review_response_is_refused_and_the_run_stays_paused(research, workspace):
    rec = research.ask(workspace.id, "What was Apple's revenue in Q4 2024?")
    with pytest.raises(Exception, match="not offered"):
        research.resume(rec.run_id, {"action": "choose_source", "source": "x"})
    assert research.store.get(rec.run_id).status == "needs_human"
    cancelled = research.resume(rec.run_id, {"action": "cancel"})
    assert cancelled.status == "cancelled"


def test_retries_out_of_range_and_a_response_to_a_failed_run_are_refused(
    research: RunService, workspace
) -> None:
    """Nine retries went past the graph's recursion limit and failed the run with LangGraph's
    words; a response to a failed run was dropped without a word."""
    for bad in (-1, MAX_RETRIES_LIMIT + 1):
        with pytest.raises(InputError, match=f"max_retries is {bad}: give 0 to 5"):
            research.start(workspace.id, "How is the pump primed?", max_retries=bad)
    assert research.store.list(workspace.id) == []
    rec = research.ask(workspace.id, "How is the pump primed?", max_retries=MAX_RETRIES_LIMIT)
    assert rec.status in ("completed", "needs_human")
    rec.status, rec.error = "failed", "Ollama is not reachable"
    research.store.save(rec)
    with pytest.raises(InputError, match="failed; it resumes from its last checkpoint as it is"):
        research.resume(rec.run_id, {"action": "cancel"})
    assert research.store.get(rec.run_id).status == "failed"


def test_disagreeing_documents_end_in_a_conflict_review(research, bench) -> None:
    ws = bench.create_workspace("finance", "wordllama")
    ingestor = Ingestor(bench)
    a = ingestor.ingest_bytes(ws, REVENUE_A.encode(), "annual-report.txt")
    ingestor.ingest_bytes(ws, REVENUE_B.encode(), "press-summary.txt")
    rec = research.ask(ws.id, "What total revenue did Northwind Traders report for 2023?")
    assert rec.status == "needs_human"
    assert rec.hitl["kind"] == "conflict"
    reasons = rec.metrics["retry_reasons"]
    # Two retries; the calibrated confidence of a draft whose sources disagree is below 0.65
    # too, so the supervisor may label them as a quality issue as well as a conflict.
    assert len(reasons) == 2
    assert {r["reason"] for r in reasons} <= {
        "conflicting_evidence_attempting_resolution",
        "quality_issue_detected",
    }
    (conflict,) = rec.hitl["details"]["conflicts"]
    assert {s["filename"] for s in conflict["sources"]} == {
        "annual-report.txt",
        "press-summary.txt",
    }
    assert "42" in conflict["reason"] and "37" in conflict["reason"]

    done = research.resume(rec.run_id, {"action": "choose_source", "source": a.doc_id})
    assert done.status == "completed"
    assert {c["filename"] for c in done.citations} == {"annual-report.txt"}
    assert "42 million" in done.answer


@pytest.mark.usefixtures("backend")
def test_documents_giving_different_years_for_the_asked_fact_end_in_a_conflict(
    research, bench
) -> None:
    ws = bench.create_workspace("bridges", "wordllama")
    ingestor = Ingestor(bench)
    for name, text in (("survey.md", BRIDGE_A), ("history.md", BRIDGE_B)):
        assert ingestor.ingest_bytes(ws, text.encode(), name).status == "ingested"
    rec = research.ask(ws.id, "When was the Zorblat Bridge opened to traffic?")
    assert rec.status == "needs_human" and rec.hitl["kind"] == "conflict"
    (conflict,) = rec.hitl["details"]["conflicts"]
    assert conflict["reason"] in (
        "the sources answer it differently (1931 vs 1952)",
        "the sources answer it differently (1952 vs 1931)",
    )
    shown = {s["filename"]: s["text"] for s in conflict["sources"]}
    assert "1931" in shown["survey.md"] and "1952" in shown["history.md"]


def test_resume_in_a_new_process(research, workspace, settings) -> None:
    rec = research.ask(workspace.id, "What was Apple's revenue in Q4 2024?")
    response = json.dumps({"action": "rephrase", "text": "When is the boiler descaled?"})
    proc = run_module(
        ["masis_core", "resume", rec.run_id, "--response", response, "--json"], settings.data_dir
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "completed"
    assert "once a year" in out["answer"]
    assert research.store.get(rec.run_id).status == "completed"


# -- researcher behaviours against real Chroma -----------------------------------------------


def test_limits_thresholds_and_trace_per_pass(bench, workspace) -> None:
    cfg = runtime_for(bench)
    first = researcher.node(researcher_state("plant", "pump inspection"), cfg)
    retry = researcher.node(researcher_state("plant", "pump inspection", retry_count=1), cfg)
    (t1,), (t2,) = first["trace"], retry["trace"]
    assert (t1["limit"], t2["limit"]) == (10, 20)
    assert (t1["threshold_used"], t2["threshold_used"]) == (0.27, 0.22)
    assert researcher.clamp_limit(0) == 1 and researcher.clamp_limit(99) == 20
    for e in first["evidence"]:
        if e["kept_by"] == "keyword":
            assert e["coverage"] >= researcher.KEYWORD_COVERAGE and e["keyword_rank"]
        else:
            assert e["score"] >= 0.27


def test_variants_dedup_keeping_each_chunks_best_score(bench, workspace) -> None:
    one = retrieve(bench.index("plant", "wordllama"), ["pump inspection"], 10, mode="dense")
    two = retrieve(
        bench.index("plant", "wordllama"),
        ["pump inspection", "steam boiler descaling"],
        10,
        "dense",
    )
    assert len({c.chunk_id for c in two}) == len(two)
    by_id = {c.chunk_id: c for c in one}
    for c in two:
        if c.chunk_id in by_id:
            assert c.dense >= by_id[c.chunk_id].dense
            assert c.dense == max(d for d, _, _ in c.per_query)


def test_threshold_filters_and_counts(bench, workspace) -> None:
    out = researcher.node(
        researcher_state(
            "plant", "pump inspection", threshold_override=0.99, retrieval_mode="dense"
        ),
        runtime_for(bench),
    )
    assert out["evidence"] == []
    assert out["trace"][0]["filtered_out"] >= 1
    assert out["hitl"]["kind"] == "no_evidence"
    assert "retry_lower_threshold" in out["hitl"]["options"]


def test_workspace_filter_applies_to_retrieval(bench, workspace) -> None:
    other = bench.create_workspace("other", "wordllama")
    Ingestor(bench).ingest_bytes(other, ("pump inspection " * 60).encode(), "other.txt")
    out = researcher.node(researcher_state("plant", "pump inspection"), runtime_for(bench))
    assert out["evidence"]
    assert {e["filename"] for e in out["evidence"]} == {"plant-manual.pdf"}


def test_stub_chunks_are_dropped_unless_nothing_else_is_left(bench) -> None:
    ws = bench.create_workspace("stubs", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"Pump inspection every week.", "stub.txt")
    out = researcher.node(researcher_state("stubs", "pump inspection"), runtime_for(bench))
    (trace,) = out["trace"]
    assert trace["quality_fallback"] is True  # a stub scores 0, but it is all there is
    assert [e["quality"] for e in out["evidence"]] == [0.0]


def test_withheld_pages_touch_only_chunks_of_their_own_document() -> None:
    """A chunk is withheld when its pages meet a withheld range of its document: one running
    into the range, one without a last page (or with 0) by its first; the ranges as lists,
    as a checkpointed state gives them back (JSON has no tuples)."""

    def chunk(doc: str, start: int, end: int | None = None) -> Candidate:
        meta = {"doc_id": doc, "page_start": start}
        return Candidate("c", "text", meta if end is None else {**meta, "page_end": end})

    pages = json.loads(json.dumps([("d", 4, 5)]))
    assert pages == [["d", 4, 5]]
    assert researcher.withheld(chunk("d", 3, 4), pages)
    assert researcher.withheld(chunk("d", 5, 7), pages)
    assert researcher.withheld(chunk("d", 4), pages) and researcher.withheld(
        chunk("d", 5, 0), pages
    )
    assert not researcher.withheld(chunk("d", 2, 3), pages)
    assert not researcher.withheld(chunk("d", 6, 6), pages)
    assert not researcher.withheld(chunk("d", 3, 0), pages)
    assert not researcher.withheld(chunk("e", 4, 5), pages)  # another document's pages
    assert not researcher.withheld(chunk("d", 4, 5), [])


def test_withheld_pages_are_read_past_then_left_out(bench, workspace, monkeypatch) -> None:
    """With pages withheld the researcher reads ``WITHHELD_READ`` times deeper, then drops
    them before the thresholds: they are not "filtered out", and the limit stays the pass's."""
    asked: list[int] = []

    def recording(index, queries, k, **kw):
        asked.append(k)
        return retrieve(index, queries, k, **kw)

    monkeypatch.setattr(researcher, "retrieve", recording)
    cfg, doc = runtime_for(bench), bench.documents("plant")[0].doc_id
    plain = researcher.node(researcher_state("plant", "pump inspection"), cfg)
    elsewhere = [[doc, 5, 6]]  # no page of the manual: nothing left out
    same = researcher.node(
        researcher_state("plant", "pump inspection", withheld_pages=elsewhere), cfg
    )
    assert [e["chunk_id"] for e in same["evidence"]] == [e["chunk_id"] for e in plain["evidence"]]
    # the manual's one chunk runs over pages 1-2: withholding page 2 leaves nothing
    gone = researcher.node(
        researcher_state("plant", "pump inspection", retry_count=1, withheld_pages=[[doc, 2, 2]]),
        cfg,
    )
    assert gone["evidence"] == [] and gone["hitl"]["message"] == researcher.NOTHING_MATCHED_MESSAGE
    (trace,) = gone["trace"]
    assert (trace["limit"], trace["filtered_out"], trace["results_before_filter"]) == (20, 0, 0)
    assert asked == [10, 10 * researcher.WITHHELD_READ, 20 * researcher.WITHHELD_READ]


def test_planner_appends_critic_focus_on_retry(bench) -> None:
    state = {
        "question": "What is the pump pressure?",
        "retry_count": 1,
        "critique": {"unsupported_claims": ["relief valve"], "logical_gaps": ["units"]},
    }
    out = planner.node(state, runtime_for(bench))
    assert out["plan"]["rag_queries"][0] == "What is the pump pressure? relief valve units"
    assert out["plan"]["augmented"] is True
    assert out["plan"]["web_queries"] == []
    long_q = {"question": "pump " * 300, "retry_count": 0}
    plan = planner.node(long_q, runtime_for(bench))["plan"]
    assert all(len(q) <= 500 for q in plan["rag_queries"])
    assert len(plan["rag_queries"]) <= 3
