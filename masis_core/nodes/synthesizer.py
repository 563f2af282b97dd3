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


def node(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
    if (state.get("hitl") or {}).get("kind") == "no_evidence":
        return {"trace": [{"node": "synthesizer", "skipped": True, "reason": "no evidence"}]}
    ctx = ctx_of(config)
    evidence = all_evidence(state)
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
    return {"draft_answer": draft, "trace": [entry]}
