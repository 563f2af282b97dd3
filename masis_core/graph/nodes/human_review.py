"""Human review: pause the run with ``interrupt()`` and apply the analyst's response.

Everything before ``interrupt`` re-runs on resume, so this node computes nothing beforehand.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from masis_core.answers.questions import check_question
from masis_core.errors import InputError, ReviewError
from masis_core.graph.context import RunContext
from masis_core.graph.reviews import ACTIONS, lead_with, lead_with_list, pick_features
from masis_core.policy import POLICY
from masis_core.retrieval.thresholds import FLOOR, threshold_for
from masis_core.state import ResearchState, all_evidence
from masis_core.workspaces.picks import PickStore

log = logging.getLogger(__name__)

THRESHOLD_STEP = POLICY.review_threshold_step


def validate(payload: Mapping[str, Any], response: Any) -> dict[str, Any]:
    """The response checked against what the review offered (a rephrase's text stripped)."""
    if not isinstance(response, dict) or response.get("action") not in ACTIONS:
        raise ReviewError(f"The response needs an action, one of: {', '.join(ACTIONS)}.")
    action = response["action"]
    if action not in payload.get("options", []):
        raise ReviewError(
            f"'{action}' is not offered for a {payload.get('kind')} review; "
            f"choose one of: {', '.join(payload.get('options', []))}."
        )
    if action == "rephrase":
        # A rephrase is a new question: the rules of the first ask apply, or it would be the
        # way around the length limit.
        try:
            response = {**response, "text": check_question(str(response.get("text") or ""))}
        except InputError as exc:
            raise ReviewError(str(exc)) from exc
    if action == "choose_source" and not response.get("source"):
        raise ReviewError("Choosing a source needs its doc_id in 'source'.")
    if action == "accept" and response.get("lead") is not None:
        offered = len((payload.get("details") or {}).get("passages") or [])
        lead = response["lead"]
        if isinstance(lead, bool) or not isinstance(lead, int) or not 0 <= lead <= offered:
            raise ReviewError(
                f"'lead' is the number of the passage that answers: 0 for the lead, 1 to "
                f"{offered} for the others."
                if offered
                else "This review offers no other passage to lead with."
            )
    return response


def _fresh_pass(**changes: Any) -> dict[str, Any]:
    """Keys that make the supervisor treat the next cycle as a new first run."""
    return {"hitl": None, "draft_answer": None, "critique": {}, "decision": "plan", **changes}


def _remember(state: ResearchState, picks: PickStore, lead: int) -> None:
    """The pick as a lesson for the workspace's passage scorer (``workspaces.picks``): the
    analyst's choice stands whether or not it can be kept."""
    learned = pick_features(
        state.get("question", ""), state.get("draft_answer") or "", all_evidence(state), lead
    )
    if learned is None or not state.get("run_id") or not state.get("workspace_id"):
        return
    try:
        picks.record(str(state["workspace_id"]), str(state["run_id"]), *learned)
    except Exception:  # a lost lesson, never a lost answer
        log.warning("the pick of run %s was not kept", state.get("run_id"), exc_info=True)


def _accepted(
    state: ResearchState,
    response: dict[str, Any],
    entry: dict[str, Any],
    pick: PickStore | None = None,
) -> dict[str, Any]:
    """The draft accepted as it stands, or with the passage the analyst picked as its lead
    (judged like any other, then the run ends: supervisor); either is the analyst's word."""
    by = str(response.get("by") or "")
    if response.get("lead") is None:
        return {
            "hitl": None,
            "status": "completed",
            "decision": "end",
            "confidence": (state.get("critique") or {}).get("confidence"),
            "metrics": {"accepted_by_analyst": True, "confirmed_by": by},
            "trace": [entry],
        }
    entry["lead"] = response["lead"]
    if state.get("engine") == "offline" and pick is not None:
        _remember(state, pick, response["lead"])
    headings = state.get("draft_headings") or []
    return {
        "hitl": None,
        "draft_answer": lead_with(state.get("draft_answer") or "", response["lead"]),
        "draft_headings": lead_with_list(headings, response["lead"]),
        "lead_chosen": True,
        "decision": "judge",
        "metrics": {"lead_chosen_by_analyst": response["lead"], "confirmed_by": by},
        "trace": [entry],
    }


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    payload = state.get("hitl") or {}
    response = validate(payload, interrupt(payload))
    action = response["action"]
    entry = {"node": "human_review", "kind": payload.get("kind"), "action": action}
    if action == "cancel":
        return {"hitl": None, "status": "cancelled", "decision": "end", "trace": [entry]}
    if action == "accept":
        return _accepted(state, response, entry, PickStore(runtime.context.bench.db))
    if action == "rephrase":
        text = response["text"]
        entry["question"] = text
        return {
            **_fresh_pass(question=text, retry_count=0, threshold_override=None),
            "trace": [entry],
        }
    if action == "retry_lower_threshold":
        current = threshold_for(
            state["embed_model"],
            int(state.get("retry_count") or 0),
            state.get("threshold_override"),
        )
        lowered = round(max(FLOOR, current - THRESHOLD_STEP), 3)
        entry["threshold"] = lowered
        return {**_fresh_pass(threshold_override=lowered), "trace": [entry]}
    # choose_source: drop the other sides of every conflict the chosen source is part of.
    # Documents and web pages alike (a web page's doc_id is its ``web:`` id): the researcher
    # filters inside the search, the web searcher drops them from fresh and cached results.
    chosen = str(response["source"])
    others = {
        s["doc_id"]
        for c in (payload.get("details") or {}).get("conflicts", [])
        if any(s["doc_id"] == chosen for s in c["sources"])
        for s in c["sources"]
        if s["doc_id"] != chosen
    }
    entry["source"] = chosen
    excluded = sorted({*(state.get("excluded_docs") or []), *others})
    return {**_fresh_pass(excluded_docs=excluded, conflict_resolved=True), "trace": [entry]}
