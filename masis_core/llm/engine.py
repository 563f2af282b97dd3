"""The answer engines behind planner, synthesizer and critic: offline rules or Ollama."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from masis_core.llm import offline
from masis_core.state import Critique, Evidence


@dataclass
class StepResult:
    """What an engine step produced, plus an error to show in the trace when it fell back."""

    value: Any
    error: str | None = None
    calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class Engine(Protocol):
    name: str

    def expand(self, question: str) -> StepResult: ...

    def allocate(self, question: str, alternatives: list[str], web_enabled: bool) -> StepResult: ...

    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult: ...

    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult: ...


def default_allocation(question: str, alternatives: list[str], web_enabled: bool) -> dict:
    queries = [question[:500], *alternatives]
    if web_enabled:
        return {
            "rag_queries": queries,
            "web_queries": [question[:400]],
            "strategy": "Your documents are searched with every phrasing; the web is asked the "
            "question itself to fill gaps. Document evidence is authoritative where both speak.",
        }
    return {
        "rag_queries": queries,
        "web_queries": [],
        "strategy": "Web search is off: every query goes to the workspace's documents.",
    }


class OfflineEngine:
    """Deterministic, no model: the engine of a fresh machine."""

    name = "offline"

    def expand(self, question: str) -> StepResult:
        return StepResult(offline.alternatives(question))

    def allocate(self, question: str, alternatives: list[str], web_enabled: bool) -> StepResult:
        return StepResult(default_allocation(question, alternatives, web_enabled))

    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult:
        return StepResult(offline.extract_answer(question, evidence))

    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult:
        result: Critique = offline.critique(question, answer, evidence)
        return StepResult(result)
