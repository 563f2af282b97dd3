"""The Ollama engine: planner, synthesizer and critic as structured-output LLM calls.

Malformed output gets one repair attempt; if that fails too, the step records a clear error
in the trace and falls back to the offline engine for that step, so a run never crashes on a
model's formatting. A missing model or a server that is down is a ProviderError: the run fails
with a message saying what to run, and can be resumed.
"""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from masis_core import judgement, prompts
from masis_core.config import Settings
from masis_core.errors import MalformedOutput
from masis_core.llm.engine import OfflineEngine, StepResult, default_allocation
from masis_core.llm.ollama import call_ollama, chat_model
from masis_core.state import Critique, Evidence
from masis_core.text import defang

log = logging.getLogger(__name__)


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
        where = ev.get("url") or f"{ev.get('filename')}, p. {ev.get('page_start')}"
        lines.append(f"[{n}] ({where}) {defang(ev.get('text', ''))}")
    return "\n\n".join(lines)


class OllamaEngine:
    name = "ollama"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = chat_model(settings)
        self._fallback = OfflineEngine()
        self._plan_cache: dict[bool, StrategicPlan] = {}

    def _structured(self, schema: type[BaseModel], messages: list) -> tuple[BaseModel, int]:
        """One call, one repair attempt on malformed output; MalformedOutput after that."""
        runnable = self.model.with_structured_output(schema, method="json_schema", include_raw=True)
        for calls in (1, 2):
            out = call_ollama(
                lambda m=messages: runnable.invoke(m),
                host=self.settings.ollama_host,
                model=self.settings.chat_model,
            )
            parsed, error = out.get("parsed"), out.get("parsing_error")
            raw = out.get("raw")
            raw_text = getattr(raw, "content", "") if raw is not None else ""
            if parsed is not None and error is None:
                return parsed, calls
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
    def _plan(self, question: str, web_enabled: bool) -> tuple[StrategicPlan, int]:
        messages = [
            SystemMessage(prompts.PLANNER_SYSTEM.format(web_state="ON" if web_enabled else "OFF")),
            HumanMessage(prompts.PLANNER_USER.format(question=question[:500])),
        ]
        plan, calls = self._structured(StrategicPlan, messages)
        self._plan_cache[web_enabled] = plan  # type: ignore[assignment]
        return plan, calls  # type: ignore[return-value]

    def expand(self, question: str) -> StepResult:
        try:
            plan, calls = self._plan(question, web_enabled=False)
        except MalformedOutput as exc:
            return StepResult(
                [], error=f"query expansion failed, using the question: {exc}", calls=2
            )
        return StepResult([a[:300] for a in plan.alternatives][:2], calls=calls)

    def allocate(self, question: str, alternatives: list[str], web_enabled: bool) -> StepResult:
        base = default_allocation(question, alternatives, web_enabled)
        if not web_enabled:
            # The expansion call already planned for the knowledge base alone: reuse it.
            cached = self._plan_cache.get(False)
            if cached is not None:
                extra = [q[:500] for q in cached.rag_queries if q.strip()][:3]
                base["rag_queries"] = list(dict.fromkeys([*base["rag_queries"], *extra]))
                base["strategy"] = cached.strategy or base["strategy"]
            return StepResult(base)
        try:
            plan, calls = self._plan(question, web_enabled=True)
        except MalformedOutput as exc:
            return StepResult(base, error=f"allocation failed, using defaults: {exc}", calls=2)
        value = {
            "rag_queries": [question, *plan.rag_queries, *alternatives],
            "web_queries": plan.web_queries[:5],
            "strategy": plan.strategy or base["strategy"],
        }
        return StepResult(value, calls=calls)

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
            for s in draft.sentences  # type: ignore[attr-defined]
            if s.text.strip()
        ]
        return StepResult(parts, calls=calls)

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
        for c in review.conflicts:  # type: ignore[attr-defined]
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
            llm_confidence=float(review.confidence),  # type: ignore[attr-defined]
        )
        confidence = round(verdict.confidence, 3)
        value = Critique(
            confidence=confidence,
            unsupported_claims=list(review.unsupported_claims),  # type: ignore[attr-defined]
            logical_gaps=list(review.logical_gaps),  # type: ignore[attr-defined]
            hallucination=bool(review.hallucination),  # type: ignore[attr-defined]
            conflicts=(named or verdict.conflicts) if verdict.conflicts else [],
            recommend_retry=confidence < judgement.LOW_CONFIDENCE,
        )
        return StepResult(value, calls=calls)
