"""Planner: where each query goes, alternative phrasings, retry focus."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from masis_core.answers.questions import MAX_QUERY_CHARS
from masis_core.graph.context import RunContext, timed
from masis_core.state import Plan, ResearchState


def augmented_query(question: str, critique: Mapping[str, Any]) -> str:
    """On retry the critic's unsupported claims and gaps steer the next search to what the
    draft lacked."""
    focus = [*critique.get("unsupported_claims", []), *critique.get("logical_gaps", [])]
    if not focus:
        return question
    return f"{question} {' '.join(str(t) for t in focus)}"


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = runtime.context
    question = state["question"][:MAX_QUERY_CHARS]
    retry_count = int(state.get("retry_count") or 0)
    web_enabled = bool(state.get("web_enabled")) and ctx.web_search is not None

    def say(status: str) -> None:
        runtime.stream_writer({"node": "planner", "status": status})

    with timed() as t:
        loaded = ctx.engine.warm(say) if retry_count == 0 else None
        say("planning")
        planned = ctx.engine.plan(question, web_enabled)
        plan_value = dict(planned.value)
        alts = list(plan_value.get("alternatives") or [])
    kb_empty = not ctx.bench.documents(state["workspace_id"]) if "workspace_id" in state else False
    if web_enabled and kb_empty:
        # Nothing to search locally: everything goes to the web.
        plan_value = {
            "rag_queries": [],
            "web_queries": [question, *alts],
            "strategy": "The workspace has no documents yet: every query goes to the web.",
        }
    rag = [q[:MAX_QUERY_CHARS] for q in plan_value.get("rag_queries", [question])]
    if rag and (subject := state.get("subject")):
        # The question leans on its thread: its own words alone ("How do I fix that?") rank
        # passages on anything, so every search carries the thread's subject.
        rag = [f"{question} {subject[-1]}"[:MAX_QUERY_CHARS], *subject]
    augmented = False
    if retry_count > 0 and rag:
        focused = augmented_query(question, state.get("critique") or {})
        if focused != question:
            rag = [focused, *[q for q in rag if q != question]]
            augmented = True
    web = [q[:MAX_QUERY_CHARS] for q in plan_value.get("web_queries") or []] if web_enabled else []
    errors = [planned.error] if planned.error else []
    plan: Plan = {
        "rag_queries": list(dict.fromkeys(rag)),
        "web_queries": list(dict.fromkeys(web)),
        "strategy": str(plan_value.get("strategy", "")),
        "augmented": augmented,
        "expansion_error": "; ".join(errors) or None,
    }
    entry = {
        "node": "planner",
        "retry_count": retry_count,
        "rag_queries": len(plan["rag_queries"]),
        "web_queries": len(plan["web_queries"]),
        "alternatives": alts,
        "strategy": plan["strategy"],
        "augmented_query_used": augmented,
        "duration_ms": t["ms"],
    }
    if plan["expansion_error"]:
        entry["error"] = plan["expansion_error"]
    entry.update(planned.trace_fields())
    if loaded:
        entry["model_load"] = loaded
    return {"plan": plan, "hitl": None, "trace": [entry]}
