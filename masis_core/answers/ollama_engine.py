"""The Ollama engine: planner, synthesizer and critic as structured-output LLM calls.

Malformed output gets one repair attempt; if that fails too, the step records a clear error
in the trace and falls back to the offline engine for that step, so a run never crashes on a
model's formatting. A missing model or a server that is down is a ProviderError: the run fails
with a message saying what to run, and can be resumed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from masis_core import prompts
from masis_core.answers import judgement, stances
from masis_core.answers.confidence import LOW_CONFIDENCE, rounded
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
from masis_core.llm.ollama import (
    call_ollama,
    chat_model,
    choose_chat_model,
    context_window,
    model_facts,
    probe,
    think_value,
    warm,
)
from masis_core.state import Critique, Evidence
from masis_core.text.sentences import defang

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


# Every field is required: Ollama turns the schema into a grammar, and a field with a default
# is one the model may leave out (``{}`` had been a plan, a sentence without citations a draft).
class StrategicPlan(BaseModel):
    rag_queries: list[str]
    web_queries: list[str]
    alternatives: list[str]
    strategy: str


class CitedSentence(BaseModel):
    text: str
    citations: list[int] = Field(min_length=1)


class Draft(BaseModel):
    sentences: list[CitedSentence] = Field(min_length=1)


class Standalone(BaseModel):
    question: str


class DiffClaim(BaseModel):
    text: str
    changes: list[int] = Field(min_length=1)


class DiffSummary(BaseModel):
    claims: list[DiffClaim] = Field(min_length=1)


class Conflict(BaseModel):
    topic: str
    sources: list[int]


class Review(BaseModel):
    confidence: float = Field(ge=0.0, le=1.0)
    unsupported_claims: list[str]
    logical_gaps: list[str]
    hallucination: bool
    conflicts: list[Conflict]
    recommend_retry: bool


CHARS_PER_TOKEN = 3  # conservative: English runs near 4, dense text and other scripts fewer
MAX_CHARS_PER_TOKEN = 8  # no tokenizer packs prose tighter: fewer tokens seen means a cut
OUTPUT_RESERVE = 1024  # tokens kept free for the JSON answer
THINKING_RESERVE = 3072  # and for the thoughts before it, when the model thinks


def evidence_line(n: int, ev: Evidence) -> str:
    at = ev.get("place") or f"p. {ev.get('page_start')}"
    where = ev.get("url") or f"{ev.get('filename')}, {at}"
    return f"[{n}] ({where}) {defang(ev.get('text', ''))}"


def number_evidence(evidence: list[Evidence]) -> str:
    return "\n\n".join(evidence_line(n, ev) for n, ev in enumerate(evidence, start=1))


def fit_evidence(evidence: list[Evidence], room: int) -> list[Evidence]:
    """The best-ranked passages whose lines fit ``room`` characters, in their order (so their
    numbers stay those the evaluator reads); at least the first one, cut to fit."""
    kept: list[Evidence] = []
    used = 0
    for n, ev in enumerate(evidence, start=1):
        used += len(evidence_line(n, ev)) + 2
        if used > room:
            break
        kept.append(ev)
    if not kept and evidence:
        first = evidence[0]
        kept = [cast(Evidence, {**first, "text": first.get("text", "")[: max(room - 200, 400)]})]
    return kept


def shift_limit(num_ctx: int, keep: int) -> int:
    """How many tokens Ollama keeps of a prompt longer than the window: ``num_keep`` (4, 5
    with the BOS token) and the end, about half the window (``contextShiftPromptLimit``)."""
    return num_ctx - max((num_ctx - keep) // 2, 1)


def prompt_cut(seen: int | None, sent_chars: int, num_ctx: int) -> bool:
    """Whether the server saw less than it was sent: ``prompt_eval_count`` at the length a
    cut leaves, or fewer tokens than the text could be."""
    if not seen:
        return False
    cut_to = {shift_limit(num_ctx, keep) for keep in (4, 5)}
    return seen in cut_to or seen * MAX_CHARS_PER_TOKEN < sent_chars


def reply_problem(raw: Any) -> str | None:
    """A reply that is unusable whatever parsed: cut off at the window (``done_reason:
    "length"``: the JSON parser would close its brackets), or all of it in the thinking."""
    if raw is None:
        return None
    meta = getattr(raw, "response_metadata", None) or {}
    if meta.get("done_reason") == "length":
        return (
            "the reply was cut off at the length limit (done_reason: length) before its JSON "
            "was complete"
        )
    thought = str((getattr(raw, "additional_kwargs", None) or {}).get("reasoning_content") or "")
    if thought.strip() and not str(getattr(raw, "content", "")).strip():
        return (
            f"the model spent its reply thinking ({len(thought):,} characters of thoughts) and "
            "gave no answer; set MASIS_OLLAMA_THINK=false (or low) to let it answer"
        )
    return None


class OllamaEngine:
    name = "ollama"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.chat_name = settings.chat_model
        facts = model_facts(settings, self.chat_name)
        if not facts.present:  # left at the default and not installed: one it has
            chosen = choose_chat_model(settings, probe(settings.ollama_host))
            if chosen != self.chat_name:
                self.chat_name, facts = chosen, model_facts(settings, chosen)
        self.num_ctx = context_window(settings, facts)
        thinking = facts.thinks and think_value(settings, self.chat_name) is not False
        self.reserve = OUTPUT_RESERVE + (THINKING_RESERVE if thinking else 0)
        self.model = chat_model(settings, model=self.chat_name, num_ctx=self.num_ctx)
        self._fallback = OfflineEngine()

    def warm(self, say: Callable[[str], None]) -> str | None:
        """Load the model first (a cold load can take minutes): the trace says so."""
        say(f"loading {self.chat_name}…")
        warm(self.settings, self.chat_name)
        return f"loading {self.chat_name}… ready (window {self.num_ctx:,} tokens)"

    def _fit(self, fixed: str, evidence: list[Evidence]) -> tuple[list[Evidence], list[str]]:
        """Passages that fit the window beside ``fixed`` text and the answer's reserve; the
        lowest ranked go first, and the note says how many."""
        room = (self.num_ctx - self.reserve) * CHARS_PER_TOKEN - len(fixed)
        kept = fit_evidence(evidence, room)
        if kept == evidence:
            return kept, []
        left = len(evidence) - len(kept)
        what = (
            f"{left} of {len(evidence)} passages left out (the lowest ranked, from "
            f"[{len(kept) + 1}])"
            if left
            else "passage [1] cut short"
        )
        return kept, [
            f"the model could not see all the evidence: {what} to fit {self.chat_name}'s "
            f"{self.num_ctx:,}-token window with room for the answer; raise "
            "MASIS_OLLAMA_NUM_CTX or use a model with a longer window to give it all"
        ]

    def _structured(self, schema: type[M], messages: list, said: StepResult) -> M:
        """One call, one repair attempt on malformed output; MalformedOutput after that.
        ``said`` gets the calls made and what the server's counts say the model saw."""
        runnable = self.model.with_structured_output(schema, method="json_schema", include_raw=True)
        for calls in (1, 2):
            said.calls = calls
            out = cast(
                dict[str, Any],
                call_ollama(
                    partial(runnable.invoke, messages),
                    host=self.settings.ollama_host,
                    model=self.chat_name,
                ),
            )
            raw = out.get("raw")
            self._check_seen(raw, messages, said)
            error = reply_problem(raw) or out.get("parsing_error")
            parsed = out.get("parsed")
            if parsed is not None and error is None:
                return cast(M, parsed)
            error = error or "empty reply"
            log.warning(
                "malformed %s from the model (attempt %d): %s", schema.__name__, calls, error
            )
            messages = self._repair(messages, raw, str(error))
        raise MalformedOutput(
            f"{self.chat_name} returned malformed {schema.__name__} twice "
            f"(last error: {str(error)[:300]})"
        )

    @staticmethod
    def _repair(messages: list, raw: Any, error: str) -> list:
        """The request again with the reply and what was wrong with it; a reply cut at the
        window is not repeated back (it would only fill the window again)."""
        raw_text = str(getattr(raw, "content", "") if raw is not None else "")
        if "done_reason: length" in error:
            return messages
        return [
            *messages,
            AIMessage(content=raw_text[:4000]),
            HumanMessage(content=prompts.REPAIR.format(error=error[:500], raw=raw_text[:2000])),
        ]

    def _check_seen(self, raw: Any, messages: list, said: StepResult) -> None:
        """Compare ``prompt_eval_count`` with what was sent; a cut prompt flags the step."""
        usage = getattr(raw, "usage_metadata", None) or {}
        seen = usage.get("input_tokens")
        sent = sum(len(str(m.content)) for m in messages)
        if said.prompt_cut or not prompt_cut(seen, sent, self.num_ctx):
            return
        said.prompt_cut = True
        said.notes.append(
            f"the model could not see all the evidence: it read {seen:,} tokens of a prompt of "
            f"about {sent // CHARS_PER_TOKEN:,} (Ollama cut it to fit the {self.num_ctx:,}-token "
            "window, losing instructions, the question or passages); raise "
            "MASIS_OLLAMA_NUM_CTX or use a model with a longer window"
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
        said = StepResult(None)
        try:
            plan = self._structured(StrategicPlan, messages, said)
        except MalformedOutput as exc:
            said.value = {"alternatives": [], **default_allocation(question, [], web_enabled)}
            said.error = f"query expansion failed, using the question: {exc}"
            return said
        alts = clean_alternatives(question, plan.alternatives)
        value = default_allocation(question, alts, web_enabled)
        extra = [q[:MAX_QUERY_CHARS] for q in plan.rag_queries if q.strip()][:3]
        value["rag_queries"] = list(dict.fromkeys([*value["rag_queries"], *extra]))
        if web_enabled:
            value["web_queries"] = [q[:MAX_WEB_QUERY_CHARS] for q in plan.web_queries[:5]]
        value["strategy"] = plan.strategy or value["strategy"]
        said.value = {"alternatives": alts, **value}
        return said

    # -- synthesizer --------------------------------------------------------------------
    def synthesize(self, question: str, evidence: list[Evidence], strategy: str) -> StepResult:
        """A cited draft from the passages that fit the window (the question is repeated after
        them: a long prompt's end is what a model reads best)."""
        system = prompts.SYNTHESIZER_SYSTEM.format(strategy=strategy or "none given")
        fixed = system + prompts.SYNTHESIZER_USER.format(question=question * 2, evidence="")
        shown, notes = self._fit(fixed, evidence)
        messages = [
            SystemMessage(system),
            HumanMessage(
                prompts.SYNTHESIZER_USER.format(question=question, evidence=number_evidence(shown))
            ),
        ]
        said = StepResult(None, notes=notes)
        try:
            draft = self._structured(Draft, messages, said)
        except MalformedOutput as exc:
            said.value = self._fallback.synthesize(question, evidence, strategy).value
            said.error = f"{exc}; extractive answer used instead"
            return said
        said.value = [
            {"text": s.text.strip(), "citations": list(dict.fromkeys(s.citations))}
            for s in draft.sentences
            if s.text.strip()
        ]
        return said

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
        said = StepResult(None)
        try:
            out = self._structured(Standalone, messages, said)
        except (ProviderError, ValidationError) as exc:  # down, missing model, malformed
            return self._offline_condense(follow_up, history, str(exc), 2)
        problem = usable_rewrite(out.question, follow_up, history)
        if problem is not None:
            return self._offline_condense(follow_up, history, problem, said.calls)
        return StepResult(Rewrite(" ".join(out.question.split()), "model"), calls=said.calls)

    def _offline_condense(
        self, follow_up: str, history: list[Turn], problem: str, calls: int
    ) -> StepResult:
        log.warning("follow-up rewrite by the model not usable: %s", problem)
        fallback = offline_rewrite(follow_up, history)
        value = Rewrite(fallback.question, fallback.method, error=problem)
        return StepResult(value, error=problem, calls=calls)

    # -- what changed -------------------------------------------------------------------
    def summarise_diff(self, heading: str, changes: list[str], most: int) -> StepResult:
        """The model's claims (``DiffSummary``) about the numbered ``changes`` of a diff that
        fit the window; ``value`` is None when its replies were malformed twice. A missing
        model or a server that is down raises (ProviderError)."""
        system = prompts.DIFF_SUMMARY_SYSTEM.format(most=most)
        room = (self.num_ctx - self.reserve) * CHARS_PER_TOKEN - len(system) - len(heading)
        shown: list[str] = []
        for line in changes:
            room -= len(line) + 1
            if room < 0 and shown:
                break
            shown.append(line)
        notes = []
        if len(shown) < len(changes):
            notes.append(
                f"the model saw the first {len(shown)} of {len(changes)} changes, to fit "
                f"{self.chat_name}'s {self.num_ctx:,}-token window"
            )
        user = prompts.DIFF_SUMMARY_USER.format(heading=heading, changes="\n".join(shown))
        said = StepResult(None, notes=notes)
        try:
            said.value = self._structured(
                DiffSummary, [SystemMessage(system), HumanMessage(user)], said
            )
        except (MalformedOutput, ValidationError) as exc:
            said.error = str(exc)
        return said

    # -- critic -------------------------------------------------------------------------
    def _review(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult:
        """The model's review of the draft against the passages that fit the window; the
        rule-based critic's when its replies are malformed (``value`` then a Critique)."""
        fixed = prompts.CRITIC_SYSTEM + prompts.CRITIC_USER.format(
            question=question * 2, answer=answer, evidence=""
        )
        shown, notes = self._fit(fixed, evidence)
        messages = [
            SystemMessage(prompts.CRITIC_SYSTEM),
            HumanMessage(
                prompts.CRITIC_USER.format(
                    question=question, answer=answer, evidence=number_evidence(shown)
                )
            ),
        ]
        said = StepResult(None, notes=notes)
        try:
            said.value = self._structured(Review, messages, said)
        except (MalformedOutput, ValidationError) as exc:
            said.value = self._fallback.critique(question, answer, evidence).value
            said.error = f"{exc}; rule-based critic used instead"
        return said

    def critique(self, question: str, answer: str, evidence: list[Evidence]) -> StepResult:
        said = self._review(question, answer, evidence)
        if said.error:
            return said
        review = cast(Review, said.value)
        named = []  # the model's own pairs: it reads meaning, so it names the point better
        for c in review.conflicts:
            sources = [
                stances.source_ref(evidence[n - 1], evidence[n - 1].get("text", "")[:300])
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
            recommend_retry=confidence < LOW_CONFIDENCE,
            confidence_model=verdict.model,
            confidence_stages=rounded(verdict.stages),
        )
        said.value = value
        return said
