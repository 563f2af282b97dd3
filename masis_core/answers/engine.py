"""The answer engines behind planner, synthesizer and critic: offline rules or Ollama."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from masis_core.answers import offline
from masis_core.answers.followup import Turn, offline_rewrite
from masis_core.answers.questions import (
    MAX_ALTERNATIVE_CHARS,
    MAX_ALTERNATIVES,
    MAX_QUERY_CHARS,
    MAX_WEB_QUERY_CHARS,
)
from masis_core.state import Critique, Evidence


@dataclass
class StepResult:
    """What an engine step produced, plus an error to show in the trace when it fell back."""

    value: Any
    error: str | None = None
    calls: int = 0
    # What the analyst should know of the model's view: passages left out to fit its window,
    # a prompt the server cut (``prompt_cut``), an answer lost in the model's thinking.
    notes: list[str] = field(default_factory=list)
    prompt_cut: bool = False

    def trace_fields(self) -> dict[str, Any]:
        """The notes and the flag for the node's trace entry, only when there are any."""
        fields: dict[str, Any] = {"notes": self.notes} if self.notes else {}
        return {**fields, "prompt_cut": True} if self.prompt_cut else fields


class Engine(Protocol):
    name: str

    def warm(self, say: Callable[[str], None]) -> str | None:
        """Load the model before the first call, saying so; a note for the trace or None."""
        ...

    def plan(self, question: str, web_enabled: bool) -> StepResult:
        """``value``: {alternatives, rag_queries, web_queries, strategy}."""
        ...

    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult: ...

    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult: ...

    def condense(self, follow_up: str, history: list[Turn]) -> StepResult:
        """``value``: ``followup.Rewrite``, the follow-up as a standalone question."""
        ...


RECENCY_WORDS = frozenset(
    {
        "latest", "current", "currently", "recent", "recently", "today", "now", "news",
        "newest", "update", "updated", "yesterday", "upcoming", "trend", "trends",
    }
)  # fmt: skip


def needs_recent_information(question: str) -> bool:
    """Rule-based: the question asks about something newer than a document set can know."""
    words = {w.strip("?.,!:;()'\"").lower() for w in question.split()}
    this_year = str(datetime.now(UTC).year)
    return bool(words & RECENCY_WORDS) or this_year in words or "this year" in question.lower()


def clean_alternatives(question: str, alternatives: list[str]) -> list[str]:
    """At most two phrasings, each bounded, none a copy of the question."""
    out = [
        str(a)[:MAX_ALTERNATIVE_CHARS]
        for a in alternatives
        if str(a).strip() and str(a).strip().lower() != question.lower()
    ]
    return list(dict.fromkeys(out))[:MAX_ALTERNATIVES]


def default_allocation(question: str, alternatives: list[str], web_enabled: bool) -> dict:
    """The allocation without a model: documents always; the web for the question
    itself, and for every phrasing when the question is about recent events."""
    queries = [question[:MAX_QUERY_CHARS], *alternatives]
    if not web_enabled:
        return {
            "rag_queries": queries,
            "web_queries": [],
            "strategy": "Web search is off: every query goes to the workspace's documents.",
        }
    if needs_recent_information(question):
        return {
            "rag_queries": queries,
            "web_queries": [q[:MAX_WEB_QUERY_CHARS] for q in queries],
            "strategy": "The question asks about recent events, which documents may predate: "
            "every phrasing also goes to the web. Document evidence stays authoritative for "
            "what the documents cover.",
        }
    return {
        "rag_queries": queries,
        "web_queries": [question[:MAX_WEB_QUERY_CHARS]],
        "strategy": "Your documents are searched with every phrasing; the web is asked the "
        "question itself to fill gaps. Document evidence is authoritative where both speak.",
    }


class OfflineEngine:
    """Deterministic, no model: the engine of a fresh machine."""

    name = "offline"

    def warm(self, say: Callable[[str], None]) -> str | None:
        return None  # nothing to load

    def plan(self, question: str, web_enabled: bool) -> StepResult:
        alts = clean_alternatives(question, offline.alternatives(question))
        return StepResult({"alternatives": alts, **default_allocation(question, alts, web_enabled)})

    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult:
        return StepResult(offline.extract_answer(question, evidence))

    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult:
        result: Critique = offline.critique(question, answer, evidence)
        return StepResult(result)

    def condense(self, follow_up: str, history: list[Turn]) -> StepResult:
        return StepResult(offline_rewrite(follow_up, history))
