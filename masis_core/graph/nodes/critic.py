"""Critic: confidence, gaps, unsupported claims and conflicts between sources.

The engine's confidence is the judge's; where the workspace has a fitted calibration
(``masis_core/workspaces/calibration.py``) and ``MASIS_CALIBRATE_WORKSPACES`` is on, the
critique carries the calibrated probability, with the judge's own score beside it as
``judged_confidence``."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.answers.compose import scoring_with
from masis_core.answers.confidence import LOW_CONFIDENCE, judge_version
from masis_core.graph.context import RunContext, timed
from masis_core.state import ResearchState, all_evidence
from masis_core.workspaces.calibration import CalibrationStore, recalibrate
from masis_core.workspaces.picks import PickStore


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = runtime.context
    runtime.stream_writer({"node": "critic", "status": "reviewing the draft"})
    weights = PickStore(ctx.bench.db).weights(state.get("workspace_id"))
    with timed() as t, scoring_with(weights):  # as the synthesizer scored the windows
        result = ctx.engine.critique(
            state["question"], state.get("draft_answer") or "", all_evidence(state)
        )
    critique = dict(result.value)
    if state.get("draft_answer"):
        cmap = (
            CalibrationStore(ctx.bench.db).map_for(state.get("workspace_id"), ctx.engine.name)
            if ctx.bench.settings.calibrate_workspaces
            else None
        )
        critique = recalibrate(critique, cmap, LOW_CONFIDENCE)
    if state.get("conflict_resolved"):
        critique["conflicts"] = []  # the analyst already chose a source
    entry = {
        "node": "critic",
        "engine": ctx.engine.name,
        "confidence": critique.get("confidence"),
        "confidence_model": critique.get("confidence_model"),
        "judged_confidence": critique.get("judged_confidence"),
        "calibration": critique.get("calibration"),
        # model → cap → opinion → answered → dispute → workspace: the stages that applied.
        "confidence_stages": critique.get("confidence_stages"),
        # Which judge gave the score: a verdict on it fits only that judge's workspace map.
        "judge": judge_version(),
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
    entry.update(result.trace_fields())
    return {"critique": critique, "trace": [entry]}
