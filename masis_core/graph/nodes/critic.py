"""Critic: confidence, gaps, unsupported claims and conflicts between sources."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.graph.context import RunContext, timed
from masis_core.state import ResearchState, all_evidence


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = runtime.context
    runtime.stream_writer({"node": "critic", "status": "reviewing the draft"})
    with timed() as t:
        result = ctx.engine.critique(
            state["question"], state.get("draft_answer") or "", all_evidence(state)
        )
    critique = dict(result.value)
    if state.get("conflict_resolved"):
        critique["conflicts"] = []  # the analyst already chose a source
    entry = {
        "node": "critic",
        "engine": ctx.engine.name,
        "confidence": critique.get("confidence"),
        "confidence_model": critique.get("confidence_model"),
        "logical_gaps": critique.get("logical_gaps", []),
        "unsupported_claims": critique.get("unsupported_claims", []),
        "conflicts": len(critique.get("conflicts", [])),
        "hallucination": critique.get("hallucination", False),
        "recommend_retry": critique.get("recommend_retry", False),
        "model_calls": result.calls,
        "duration_ms": t["ms"],
    }
    if result.error:
        entry["error"] = result.error
    return {"critique": critique, "trace": [entry]}
