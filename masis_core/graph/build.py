"""The research graph: supervisor → planner → researcher ∥ web_searcher → synthesizer → critic
→ evaluator → supervisor, with human review as an interrupt, checkpointed in the database
(SQLite or PostgreSQL, masis_core/storage/db.py)."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from masis_core.graph.context import RunContext
from masis_core.graph.nodes import (
    critic,
    evaluator,
    human_review,
    planner,
    researcher,
    supervisor,
    synthesizer,
    web_searcher,
)
from masis_core.state import ResearchInput, ResearchState
from masis_core.storage.db import Database


def after_supervisor(state: ResearchState) -> str:
    return {"plan": "planner", "retry": "planner", "human_review": "human_review"}.get(
        state.get("decision", ""), END
    )


def after_synthesizer(state: ResearchState) -> str:
    return "human_review" if (state.get("hitl") or {}).get("kind") == "no_evidence" else "critic"


def after_review(state: ResearchState) -> str:
    return {"plan": "planner", "judge": "critic"}.get(state.get("decision", ""), END)


def build_graph() -> StateGraph[ResearchState, RunContext, ResearchInput, ResearchState]:
    g = StateGraph(ResearchState, context_schema=RunContext, input_schema=ResearchInput)
    g.add_node("supervisor", supervisor.node)
    g.add_node("planner", planner.node)
    g.add_node("researcher", researcher.node)
    g.add_node("web_searcher", web_searcher.node)
    g.add_node("synthesizer", synthesizer.node)
    g.add_node("critic", critic.node)
    g.add_node("evaluator", evaluator.node)
    g.add_node("human_review", human_review.node)
    g.add_edge(START, "supervisor")
    g.add_conditional_edges("supervisor", after_supervisor, ["planner", "human_review", END])
    g.add_edge("planner", "researcher")
    g.add_edge("planner", "web_searcher")
    g.add_edge(["researcher", "web_searcher"], "synthesizer")
    g.add_conditional_edges("synthesizer", after_synthesizer, ["critic", "human_review"])
    g.add_edge("critic", "evaluator")
    g.add_edge("evaluator", "supervisor")
    g.add_conditional_edges("human_review", after_review, ["planner", "critic", END])
    return g


def first_draft_graph() -> Any:
    """One pass without review or retry: planner → researcher → synthesizer → critic →
    evaluator, no checkpoints. What a run's first draft is, for work that asks many questions
    and records no run (the workspace's confidence calibration, ``evaluation/calibration.py``).
    Its input is the whole state: a caller may set ``excluded_docs`` and ``withheld_pages``
    from the start."""
    g = StateGraph(ResearchState, context_schema=RunContext)
    for name, step in (
        ("planner", planner.node),
        ("researcher", researcher.node),
        ("synthesizer", synthesizer.node),
        ("critic", critic.node),
        ("evaluator", evaluator.node),
    ):
        g.add_node(name, step)
    g.add_edge(START, "planner")
    g.add_edge("planner", "researcher")
    g.add_edge("researcher", "synthesizer")
    g.add_conditional_edges(
        "synthesizer", lambda s: "critic" if s.get("draft_answer") else END, ["critic", END]
    )
    g.add_edge("critic", "evaluator")
    g.add_edge("evaluator", END)
    return g.compile()


def compile_graph(db: Database) -> Any:
    return build_graph().compile(checkpointer=db.checkpointer())
