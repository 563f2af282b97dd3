"""Synthesizer: a cited draft from the evidence only, numbered markers mapped to chunk ids."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from masis_core.context import ctx_of, emit, timed
from masis_core.llm.offline import render_answer
from masis_core.state import Evidence, ResearchState


def all_evidence(state: ResearchState) -> list[Evidence]:
    """Knowledge-base evidence first, then web; the synthesizer's [n] indexes this list."""
    return [*(state.get("evidence") or []), *(state.get("web_evidence") or [])]


NO_EVIDENCE_ANYWHERE = (
    "Neither your documents nor the web returned anything usable for this question. "
    "Rephrase it, or upload documents that cover the topic."
)


def node(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
    evidence = all_evidence(state)
    hitl = state.get("hitl") or {}
    if not evidence:
        skipped = {"node": "synthesizer", "skipped": True, "reason": "no evidence"}
        if hitl.get("kind") == "no_evidence":  # the researcher already said why
            return {"trace": [skipped]}
        review = {
            "kind": "no_evidence",
            "message": NO_EVIDENCE_ANYWHERE,
            "options": ["rephrase", "cancel"],
            "details": {"web_errors": [], "filtered_out": 0},
        }
        return {"hitl": review, "trace": [skipped]}
    ctx = ctx_of(config)
    emit({"node": "synthesizer", "status": f"writing from {len(evidence)} passages"})
    with timed() as t:
        result = ctx.engine.synthesize(
            state["question"], evidence, (state.get("plan") or {}).get("strategy", "")
        )
    parts = result.value or []
    draft = render_answer(parts)
    entry = {
        "node": "synthesizer",
        "engine": ctx.engine.name,
        "evidence": len(evidence),
        "sentences": len(parts),
        "model_calls": result.calls,
        "duration_ms": t["ms"],
    }
    if result.error:
        entry["error"] = result.error
    # Web evidence can answer where the documents had nothing: the review is not needed.
    cleared = {"hitl": None} if hitl.get("kind") == "no_evidence" else {}
    return {"draft_answer": draft, **cleared, "trace": [entry]}
