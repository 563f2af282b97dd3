"""Calling one node of the research graph on its own, as the graph would."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.context import RunContext
from masis_core.llm.engine import OfflineEngine
from masis_core.services import Workbench


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
