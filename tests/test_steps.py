"""A run's steps in the analyst's words (issue 54, point 10): the Research and Runs pages had
shown the trace's own field names ("HITL_triggered", "quality_issue_detected", "2 KB / 0 web
queries", "web_searcher · skipped" on every pass)."""

from __future__ import annotations

from masis_core.services.steps import step_words

RAW = ("HITL_triggered", "quality_issue_detected", "KB", "web_searcher", "_", "threshold")


def words(*entries: dict) -> list[str | None]:
    return [step_words(e) for e in entries]


def test_each_step_says_what_the_agent_did() -> None:
    said = words(
        {"node": "supervisor", "decision": "first_run"},
        {"node": "planner", "rag_queries": 2, "web_queries": 0, "duration_ms": 3},
        {"node": "researcher", "chunks": 17, "filtered_out": 3, "threshold_used": 0.27},
        {"node": "synthesizer", "sentences": 4, "evidence": 17},
        {"node": "critic", "confidence": 0.22},
        {"node": "evaluator", "citations": 3, "citation_violations": [], "flagged": 0},
        {
            "node": "supervisor",
            "decision": "retry",
            "retry_count": 1,
            "reason": "quality_issue_detected",
            "confidence": 0.41,
        },
        {
            "node": "supervisor",
            "decision": "HITL_triggered",
            "kind": "low_confidence",
            "confidence": 0.22,
        },
        {"node": "human_review", "kind": "low_confidence", "action": "accept", "lead": 1},
    )
    assert said == [
        "Started: planning the search",
        "Planned 2 searches of your documents",
        "Searched your documents: 17 passages kept, 3 below the bar",
        "Wrote the draft: 4 cited sentences",
        "Judged the draft: confidence 22%",
        "Checked the citations: 3 citations, none flagged",
        "Tried again (attempt 1): the answer was not good enough (41%)",
        "Paused for your review: the best passage may not answer (22%)",
        "Reviewed: accepted the draft, leading with “Also relevant” passage 1",
    ]
    assert not [s for s in said if s and any(raw in s for raw in RAW)]


def test_steps_that_did_nothing_are_left_out() -> None:
    """A web search nobody asked for was a "web_searcher · skipped" panel on every pass."""
    assert words(
        {"node": "web_searcher", "skipped": True, "queries": 0, "results": 0},
        {"node": "synthesizer", "skipped": True, "reason": "no evidence"},
        {"node": "researcher", "skipped": True, "reason": "web only"},
    ) == [None, None, None]
    assert (
        step_words({"node": "web_searcher", "queries": 2, "results": 5, "duplicates_dropped": 1})
        == "Searched the web: 5 results from 2 queries (1 duplicate dropped)"
    )
    assert (
        step_words(
            {
                "node": "researcher",
                "chunks": 0,
                "filtered_out": 9,
                "warning": "no_qualifying_evidence",
            }
        )
        == "Searched your documents: no passage cleared the bar (9 below it)"
    )
    assert step_words({"node": "planner", "rag_queries": 1, "web_queries": 2}) == (
        "Planned 1 search of your documents and 2 searches of the web"
    )
