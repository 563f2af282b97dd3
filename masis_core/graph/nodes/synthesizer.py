"""Synthesizer: a cited draft from the evidence only, numbered markers mapped to chunk ids."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.answers.compose import scoring_with
from masis_core.answers.offline import paragraph_headings, render_answer
from masis_core.graph.context import RunContext, timed
from masis_core.graph.reviews import review
from masis_core.state import ResearchState, all_evidence
from masis_core.workspaces.picks import PickStore

NO_EVIDENCE_ANYWHERE = (
    "Neither your documents nor the web returned anything usable for this question. "
    "Rephrase it, or upload documents that cover the topic."
)


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    evidence = all_evidence(state)
    hitl = state.get("hitl") or {}
    if not evidence:
        skipped = {"node": "synthesizer", "skipped": True, "reason": "no evidence"}
        if hitl.get("kind") == "no_evidence":  # the researcher already said why
            return {"trace": [skipped]}
        payload = review(
            "no_evidence",
            NO_EVIDENCE_ANYWHERE,
            {"web_errors": [], "filtered_out": 0},
            without=("retry_lower_threshold",),
        )
        return {"hitl": payload, "trace": [skipped]}
    ctx = runtime.context
    runtime.stream_writer(
        {"node": "synthesizer", "status": f"writing from {len(evidence)} passages"}
    )
    weights = PickStore(ctx.bench.db).weights(state.get("workspace_id"))
    with timed() as t, scoring_with(weights):  # the workspace's picks, once it has enough
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
    if weights is not None:  # the Inspector's trace says whose weights scored the windows
        entry["passage_weights"] = "refitted on this workspace's picks"
    if result.error:
        entry["error"] = result.error
    entry.update(result.trace_fields())
    # Web evidence can answer where the documents had nothing: the review is not needed.
    cleared = {"hitl": None} if hitl.get("kind") == "no_evidence" else {}
    # Passages and their headings are the offline engine's: a model's answer is prose.
    headings = paragraph_headings(parts) if any("passage" in p for p in parts) else []
    return {"draft_answer": draft, "draft_headings": headings, **cleared, "trace": [entry]}
