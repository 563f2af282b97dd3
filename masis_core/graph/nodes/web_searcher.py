"""Web searcher: runs beside the researcher; does nothing unless the planner gave it queries."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from masis_core.graph.context import RunContext, timed
from masis_core.state import ResearchState


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = runtime.context
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
    runtime.stream_writer(
        {"node": "web_searcher", "status": f"searching the web ({len(queries)} queries)"}
    )
    with timed() as t:
        outcome = ctx.web_search(
            queries, state.get("web_trusted_only"), state.get("trusted_domains")
        )
    # A source the analyst rejected in a conflict review stays out, though the 24 h cache
    # (or Tavily) keeps returning it.
    excluded = set(state.get("excluded_docs") or [])
    found = outcome.get("results", [])
    results = [r for r in found if r.get("doc_id") not in excluded]
    entry = {
        "node": "web_searcher",
        "queries": len(queries),
        "query_texts": queries,
        "results": len(results),
        "excluded": len(found) - len(results),
        "received": outcome.get("received", len(results)),
        "duplicates_dropped": outcome.get("duplicates_dropped", 0),
        "cache_hits": outcome.get("cache_hits", 0),
        "api_calls": outcome.get("api_calls", 0),
        "trusted_domains": outcome.get("domains"),
        "errors": outcome.get("errors", []),
        "duration_ms": t["ms"],
    }
    if entry["errors"]:
        entry["error"] = "; ".join(sorted({e["error"] for e in entry["errors"]}))
    return {"web_evidence": results, "trace": [entry]}
