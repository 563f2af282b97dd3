"""Supervisor: pure-Python routing after every cycle — retry, ask, or finalize."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from masis_core.answers.confidence import LOW_CONFIDENCE
from masis_core.graph.reviews import candidates, other_passages, review
from masis_core.policy import POLICY
from masis_core.state import HitlPayload, ResearchState, RetryReason, all_evidence
from masis_core.text.markup import percent

DEFAULT_MAX_RETRIES = POLICY.default_max_retries
# Each retry runs planner to critic again; the graph's recursion limit holds five of them.
MAX_RETRIES_LIMIT = POLICY.max_retries_limit

CONFLICT_MESSAGE = (
    "Your documents disagree on this question and more retrieval did not settle it. "
    "Compare the competing claims below and pick the source you trust."
)


def max_retries_of(state: ResearchState) -> int:
    value = state.get("max_retries")
    return DEFAULT_MAX_RETRIES if value is None else max(0, int(value))


def quality_message(retries: int, confidence: float) -> str:
    """The seed's words, without "After 0 refinement attempts" when retries are off; the
    confidence as everywhere else (``percent``: never a round 0% or 100%)."""
    attempts = f"{retries} refinement attempt{'' if retries == 1 else 's'}"
    tried = (
        f"After {attempts}, confidence remains" if retries else "With retries off, confidence is"
    )
    return (
        f"{tried} {percent(confidence)}. "
        "You may refine your question or upload additional evidence."
    )


def node(state: ResearchState) -> dict[str, Any]:
    if state.get("draft_answer") is None:  # first-run guard: nothing to judge yet
        return {"decision": "plan", "trace": [{"node": "supervisor", "decision": "first_run"}]}
    critique = state.get("critique") or {}
    metrics = state.get("metrics") or {}
    confidence = float(critique.get("confidence", 0.0))
    citation_issue = bool(metrics.get("citation_violations"))
    hallucination = bool(critique.get("hallucination")) or bool(metrics.get("unsupported_claims"))
    quality_issue = (
        confidence < LOW_CONFIDENCE
        or citation_issue
        or hallucination
        or bool(critique.get("recommend_retry"))
    )
    conflicts = critique.get("conflicts") or []
    has_conflicts = bool(conflicts) and not state.get("conflict_resolved")
    retry_count = int(state.get("retry_count") or 0)
    max_retries = max_retries_of(state)
    base = {"node": "supervisor", "confidence": round(confidence, 3), "retry_count": retry_count}

    if state.get("lead_chosen"):  # reviewed already: the analyst chose the lead
        return {
            "decision": "finalize",
            "status": "completed",
            "confidence": confidence,
            "metrics": {"accepted_by_analyst": True},
            "trace": [{**base, "decision": "finalize", "lead_chosen": True}],
        }
    if (quality_issue or has_conflicts) and retry_count < max_retries:
        reason = (
            "conflicting_evidence_attempting_resolution"
            if has_conflicts and not quality_issue
            else "quality_issue_detected"
        )
        return _retry(base, retry_count, confidence, reason, citation_issue, hallucination)
    if has_conflicts:
        hitl = review(
            "conflict", CONFLICT_MESSAGE, {"conflicts": conflicts, "confidence": confidence}
        )
        return _pause(hitl, base, "conflict")
    if quality_issue:
        # Only the offline engine's paragraphs are passages of one place each, and only its
        # judge reads the lead alone: a model's prose is not reordered.
        offline = state.get("engine") == "offline"
        draft = (state.get("draft_answer") or "") if offline else ""
        picks = _candidates(state, draft)
        hitl = _low_confidence(critique, metrics, max_retries, confidence, draft, picks)
        return _pause(hitl, base, "low_confidence")
    return {
        "decision": "finalize",
        "status": "completed",
        "confidence": confidence,
        "trace": [{**base, "decision": "finalize"}],
    }


def _retry(
    base: dict[str, Any],
    retry_count: int,
    confidence: float,
    reason: str,
    citation_issue: bool,
    hallucination: bool,
) -> dict[str, Any]:
    """Another cycle, with the reason kept for the record's metrics."""
    entry: RetryReason = {
        "iteration": retry_count + 1,
        "confidence": round(confidence, 3),
        "reason": reason,
        "citation_issue": citation_issue,
        "hallucination": hallucination,
    }
    return {
        "retry_count": retry_count + 1,
        "decision": "retry",
        "retry_reasons": [entry],
        "trace": [{**base, "decision": "retry", "retry_count": retry_count + 1, "reason": reason}],
    }


def _candidates(state: ResearchState, draft: str) -> list[dict[str, Any]]:
    """The passage picker's cards for an offline draft (``graph.reviews.candidates``)."""
    if not draft:
        return []
    headings = state.get("draft_headings") or []
    return candidates(state.get("question", ""), draft, all_evidence(state), headings)


def _low_confidence(
    critique: Mapping[str, Any],
    metrics: Mapping[str, Any],
    max_retries: int,
    confidence: float,
    draft: str,
    picks: list[dict[str, Any]],
) -> HitlPayload:
    """The review shown when the retries are spent and the answer is still weak. It offers
    the draft's other passages too: the confidence speaks of the lead alone, and when one of
    the passages after it is the answer the analyst can say so (``human_review``)."""
    return review(
        "low_confidence",
        quality_message(max_retries, confidence),
        {
            "confidence": confidence,
            "logical_gaps": critique.get("logical_gaps", []),
            "unsupported_claims": critique.get("unsupported_claims", []),
            "citation_violations": metrics.get("citation_violations", []),
            "passages": other_passages(draft),
            "candidates": picks,
        },
    )


def _pause(hitl: HitlPayload, base: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "hitl": hitl,
        "decision": "human_review",
        "trace": [{**base, "decision": "HITL_triggered", "kind": kind}],
    }
