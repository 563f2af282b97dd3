"""Calling one node of the research graph on its own, as the graph would."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.answers.engine import OfflineEngine
from masis_core.graph.context import RunContext
from masis_core.services.runs import RunRecord, RunService
from masis_core.workspaces.workbench import Workbench


def runtime_for(bench: Workbench) -> Runtime[RunContext]:
    """What the graph hands a node at run time, for calling one node on its own."""
    return Runtime(context=RunContext(bench, OfflineEngine()))


def researcher_state(ws_id: str, question: str, **kw) -> dict[str, Any]:
    return {
        "workspace_id": ws_id,
        "embed_model": "wordllama",
        "question": question,
        "retry_count": 0,
        "plan": {"rag_queries": [question]},
        **kw,
    }


def accepted(service: RunService, rec: RunRecord) -> RunRecord:
    """A run paused only because its confidence stayed under the bar, accepted as the
    analyst can; for tests about what an answer shows, not about the confidence it got."""
    if rec.status == "needs_human" and (rec.hitl or {}).get("kind") == "low_confidence":
        assert "HACKED" not in str(rec.hitl)  # the pause is ours, never a document's words
        return service.resume(rec.run_id, {"action": "accept"})
    return rec
