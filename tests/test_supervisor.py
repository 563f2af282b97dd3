"""Every supervisor path (seed 002), as a pure function of state."""

from masis_core.graph.nodes import supervisor


def state(**kw):
    base = {
        "draft_answer": "An answer [1]",
        "critique": {"confidence": 0.9},
        "metrics": {},
        "retry_count": 0,
        "max_retries": 2,
    }
    base.update(kw)
    return base


def test_first_run_guard_routes_to_planner_without_judging() -> None:
    out = supervisor.node({"draft_answer": None, "critique": {"confidence": 0.0}})
    assert out["decision"] == "plan"
    assert "retry_count" not in out


def test_good_answer_finalizes() -> None:
    out = supervisor.node(state())
    assert (out["decision"], out["status"]) == ("finalize", "completed")


def test_each_quality_signal_triggers_a_retry_with_its_reason() -> None:
    signals = [
        {"critique": {"confidence": 0.64}},
        {"critique": {"confidence": 0.9}, "metrics": {"citation_violations": ["[7]"]}},
        {"critique": {"confidence": 0.9, "hallucination": True}},
        {"critique": {"confidence": 0.9, "recommend_retry": True}},
    ]
    for extra in signals:
        out = supervisor.node(state(**extra))
        assert out["decision"] == "retry", extra
        assert out["retry_count"] == 1
        (reason,) = out["retry_reasons"]
        assert reason["reason"] == "quality_issue_detected"
        assert set(reason) == {
            "iteration",
            "confidence",
            "reason",
            "citation_issue",
            "hallucination",
        }
    cited = supervisor.node(state(metrics={"citation_violations": ["[9]"]}))
    assert cited["retry_reasons"][0]["citation_issue"] is True


def test_conflicts_retry_first_then_ask_for_a_source() -> None:
    conflict = {"confidence": 0.9, "conflicts": [{"topic": "revenue", "sources": []}]}
    first = supervisor.node(state(critique=conflict))
    assert first["decision"] == "retry"
    assert first["retry_reasons"][0]["reason"] == ("conflicting_evidence_attempting_resolution")
    last = supervisor.node(state(critique=conflict, retry_count=2))
    assert last["decision"] == "human_review"
    assert last["hitl"]["kind"] == "conflict"
    assert "choose_source" in last["hitl"]["options"]
    assert "pick the source" in last["hitl"]["message"]


def test_low_quality_after_retries_reports_the_confidence_reached() -> None:
    out = supervisor.node(state(critique={"confidence": 0.42}, retry_count=2))
    assert out["hitl"]["kind"] == "low_confidence"
    assert "After 2 refinement attempts, confidence remains 42%" in out["hitl"]["message"]
    once = supervisor.node(state(critique={"confidence": 0.42}, retry_count=1, max_retries=1))
    assert once["hitl"]["message"].startswith("After 1 refinement attempt, confidence remains")
    off = supervisor.node(state(critique={"confidence": 0.42}, max_retries=0))
    assert off["hitl"]["message"].startswith("With retries off, confidence is 42%.")


def test_the_confidence_reached_reads_as_on_the_answer_never_a_round_zero() -> None:
    """The review message and the answer show one number the same way (``percent``): a
    fitted 0.002 is "<1%", not a flat "0%" that reads as certainty."""
    out = supervisor.node(state(critique={"confidence": 0.002}, retry_count=2))
    assert "confidence remains <1%." in out["hitl"]["message"]


def test_max_retries_missing_or_none_means_two() -> None:
    low = {"confidence": 0.1}
    for value in (None, "missing"):
        s = state(critique=low, retry_count=1)
        if value == "missing":
            del s["max_retries"]
        else:
            s["max_retries"] = None
        assert supervisor.node(s)["decision"] == "retry"
        s["retry_count"] = 2
        assert supervisor.node(s)["decision"] == "human_review"
    zero = state(critique=low, max_retries=0)
    assert supervisor.node(zero)["decision"] == "human_review"


def test_a_lead_the_analyst_chose_ends_the_run_whatever_its_confidence() -> None:
    weak = {"confidence": 0.2, "recommend_retry": True}
    assert supervisor.node(state(critique=weak))["decision"] == "retry"
    out = supervisor.node(state(critique=weak, lead_chosen=True))
    assert (out["decision"], out["status"], out["confidence"]) == ("finalize", "completed", 0.2)
    assert out["metrics"] == {"accepted_by_analyst": True}


def test_the_low_confidence_review_offers_the_drafts_other_passages() -> None:
    draft = "Lead. [1]\n\nSecond passage. [2]\n\nThird [3] passage. [3]"
    weak = {"critique": {"confidence": 0.3}, "retry_count": 2, "draft_answer": draft}
    out = supervisor.node(state(engine="offline", **weak))
    assert out["hitl"]["details"]["passages"] == ["Second passage.", "Third passage."]
    model = supervisor.node(state(engine="ollama", **weak))  # prose, not passages
    assert model["hitl"]["details"]["passages"] == []
    alone = supervisor.node(state(engine="offline", critique={"confidence": 0.3}, retry_count=2))
    assert alone["hitl"]["details"]["passages"] == []
