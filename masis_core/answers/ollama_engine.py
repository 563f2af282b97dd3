"""The Ollama engine: planner, synthesizer and critic as structured-output LLM calls.

Malformed output gets one repair attempt; if that fails too, the step records a clear error
in the trace and falls back to the offline engine for that step, so a run never crashes on a
model's formatting. A missing model or a server that is down is a ProviderError: the run fails
with a message saying what to run, and can be resumed.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from masis_core import prompts
from masis_core.answers import judgement
from masis_core.answers.engine import (
    OfflineEngine,
    StepResult,
    clean_alternatives,
    default_allocation,
)
from masis_core.answers.followup import Rewrite, Turn, history_text, offline_rewrite, usable_rewrite
from masis_core.answers.questions import MAX_QUERY_CHARS, MAX_WEB_QUERY_CHARS
from masis_core.config import Settings
from masis_core.errors import MalformedOutput, ProviderError
from masis_core.llm.ollama import call_ollama, chat_model
from masis_core.state import Critique, Evidence
from masis_core.text.sentences import defang

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


class StrategicPlan(BaseModel):
    rag_queries: list[str] = Field(default_factory=list)
    web_queries: list[str] = Field(default_factory=list)
    alternatives: list[str] = Field(default_factory=list)
    strategy: str = ""


class CitedSentence(BaseModel):
    text: str
    citations: list[int] = Field(default_factory=list)


class Draft(BaseModel):
    sentences: list[CitedSentence]


class Standalone(BaseModel):
    question: str


class Conflict(BaseModel):
    topic: str = ""
    sources: list[int] = Field(default_factory=list)


class Review(BaseModel):
    confidence: float = Field(ge=0.0, le=1.0)
    unsupported_claims: list[str] = Field(default_factory=list)
    logical_gaps: list[str] = Field(default_factory=list)
    hallucination: bool = False
    conflicts: list[Conflict] = Field(default_factory=list)
    recommend_retry: bool = False


def number_evidence(evidence: list[Evidence]) -> str:
    lines = []
    for n, ev in enumerate(evidence, start=1):
        at = ev.get("place") or f"p. {ev.get('page_start')}"
        where = ev.get("url") or f"{ev.get('filename')}, {at}"
        lines.append(f"[{n}] ({where}) {defang(ev.get('text', ''))}")
    return "\n\n".join(lines)


class OllamaEngine:
    name = "ollama"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = chat_model(settings)
        self._fallback = OfflineEngine()

    def _structured(self, schema: type[M], messages: list) -> tuple[M, int]:
        """One call, one repair attempt on malformed output; MalformedOutput after that."""
        runnable = self.model.with_structured_output(schema, method="json_schema", include_raw=True)
        for calls in (1, 2):
            out = cast(
                dict[str, Any],
                call_ollama(
                    partial(runnable.invoke, messages),
                    host=self.settings.ollama_host,
                    model=self.settings.chat_model,
                ),
            )
            parsed, error = out.get("parsed"), out.get("parsing_error")
            raw = out.get("raw")
            raw_text = getattr(raw, "content", "") if raw is not None else ""
            if parsed is not None and error is None:
                return cast(M, parsed), calls
            if parsed is None and error is None:
                error = "empty reply"
            log.warning(
                "malformed %s from the model (attempt %d): %s", schema.__name__, calls, error
            )
            messages = [
                *messages,
                AIMessage(content=str(raw_text)[:4000]),
                HumanMessage(
                    content=prompts.REPAIR.format(error=str(error)[:500], raw=str(raw_text)[:2000])
                ),
            ]
        raise MalformedOutput(
            f"{self.settings.chat_model} returned malformed {schema.__name__} twice "
            f"(last error: {str(error)[:200]})"
        )

    # -- planner ------------------------------------------------------------------------
    def plan(self, question: str, web_enabled: bool) -> StepResult:
        """One model call: alternative phrasings and where each query goes. A malformed plan
        falls back to the default allocation of the question alone."""
        question = question[:MAX_QUERY_CHARS]
        messages = [
            SystemMessage(prompts.PLANNER_SYSTEM.format(web_state="ON" if web_enabled else "OFF")),
            HumanMessage(prompts.PLANNER_USER.format(question=question)),
        ]
        try:
            plan, calls = self._structured(StrategicPlan, messages)
        except MalformedOutput as exc:
            value = {"alternatives": [], **default_allocation(question, [], web_enabled)}
            return StepResult(
                value, error=f"query expansion failed, using the question: {exc}", calls=2
            )
        alts = clean_alternatives(question, plan.alternatives)
        value = default_allocation(question, alts, web_enabled)
        extra = [q[:MAX_QUERY_CHARS] for q in plan.rag_queries if q.strip()][:3]
        value["rag_queries"] = list(dict.fromkeys([*value["rag_queries"], *extra]))
        if web_enabled:
            value["web_queries"] = [q[:MAX_WEB_QUERY_CHARS] for q in plan.web_queries[:5]]
        value["strategy"] = plan.strategy or value["strategy"]
        return StepResult({"alternatives": alts, **value}, calls=calls)

    # -- synthesizer --------------------------------------------------------------------
    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult:
        messages = [
            SystemMessage(prompts.SYNTHESIZER_SYSTEM.format(strategy=strategy or "none given")),
            HumanMessage(
                prompts.SYNTHESIZER_USER.format(
                    question=question, evidence=number_evidence(evidence)
                )
            ),
        ]
        try:
            draft, calls = self._structured(Draft, messages)
        except MalformedOutput as exc:
            fallback = self._fallback.synthesize(question, evidence, strategy)
            return StepResult(
                fallback.value, error=f"{exc}; extractive answer used instead", calls=2
            )
        parts = [
            {"text": s.text.strip(), "citations": list(dict.fromkeys(s.citations))}
            for s in draft.sentences
            if s.text.strip()
        ]
        return StepResult(parts, calls=calls)

    # -- follow-ups ---------------------------------------------------------------------
    def condense(self, follow_up: str, history: list[Turn]) -> StepResult:
        """One model call makes the follow-up standalone; a failed call, malformed output or
        a rewrite that is not a question about the thread gives the offline rewrite."""
        if not history:
            return StepResult(offline_rewrite(follow_up, history))
        messages = [
            SystemMessage(prompts.CONDENSE_SYSTEM),
            HumanMessage(
                prompts.CONDENSE_USER.format(
                    history=defang(history_text(history)), follow_up=follow_up
                )
            ),
        ]
        try:
            out, calls = self._structured(Standalone, messages)
        except (ProviderError, ValidationError) as exc:  # down, missing model, malformed
            return self._offline_condense(follow_up, history, str(exc), 2)
        problem = usable_rewrite(out.question, follow_up, history)
        if problem is not None:
            return self._offline_condense(follow_up, history, problem, calls)
        return StepResult(Rewrite(" ".join(out.question.split()), "model"), calls=calls)

    def _offline_condense(
        self, follow_up: str, history: list[Turn], problem: str, calls: int
    ) -> StepResult:
        log.warning("follow-up rewrite by the model not usable: %s", problem)
        fallback = offline_rewrite(follow_up, history)
        value = Rewrite(fallback.question, fallback.method, error=problem)
        return StepResult(value, error=problem, calls=calls)

    # -- critic -------------------------------------------------------------------------
    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult:
        messages = [
            SystemMessage(prompts.CRITIC_SYSTEM),
            HumanMessage(
                prompts.CRITIC_USER.format(
                    question=question, answer=answer, evidence=number_evidence(evidence)
                )
            ),
        ]
        try:
            review, calls = self._structured(Review, messages)
        except (MalformedOutput, ValidationError) as exc:
            fallback = self._fallback.critique(question, answer, evidence)
            return StepResult(
                fallback.value, error=f"{exc}; rule-based critic used instead", calls=2
            )
        named = []  # the model's own pairs: it reads meaning, so it names the point better
        for c in review.conflicts:
            sources = [
                judgement.source_ref(evidence[n - 1], evidence[n - 1].get("text", "")[:300])
                for n in c.sources
                if 1 <= n <= len(evidence)
            ]
            if len({s["doc_id"] for s in sources}) >= 2:
                named.append(
                    {
                        "topic": c.topic,
                        "reason": "the model found a disagreement",
                        "sources": sources,
                    }
                )
        # The model's confidence is one more feature of the calibrated judgement, which also
        # decides whether the sources are in dispute (an LLM flags disagreement too readily).
        verdict = judgement.judge(
            question,
            answer,
            evidence,
            llm_confidence=float(review.confidence),
        )
        confidence = round(verdict.confidence, 3)
        value = Critique(
            confidence=confidence,
            unsupported_claims=list(review.unsupported_claims),
            logical_gaps=list(review.logical_gaps),
            hallucination=bool(review.hallucination),
            conflicts=(named or verdict.conflicts) if verdict.conflicts else [],
            recommend_retry=confidence < judgement.LOW_CONFIDENCE,
            confidence_model=verdict.model,
        )
        return StepResult(value, calls=calls)
