"""Web searcher: runs beside the researcher; does nothing unless the planner gave it queries."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from masis_core.context import ctx_of, emit, timed
from masis_core.state import ResearchState


def node(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
    ctx = ctx_of(config)
    queries = (state.get("plan") or {}).get("web_queries") or []
    if not queries or ctx.web_search is None:
        return {
            "web_evidence": [],
            "trace": [
                {
                    "node": "web_searcher",
                    "skipped": True,
                    "queries": 0,
                    "results": 0,
                    "duration_ms": 0,
                }
            ],
        }
    emit({"node": "web_searcher", "status": f"searching the web ({len(queries)} queries)"})
    with timed() as t:
        outcome = ctx.web_search(queries)
    results = outcome.get("results", [])
    entry = {
        "node": "web_searcher",
        "queries": len(queries),
        "results": len(results),
        "errors": outcome.get("errors", []),
        "duration_ms": t["ms"],
    }
    return {"web_evidence": results, "trace": [entry]}
