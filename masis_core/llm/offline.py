"""The offline engine: planner, extractive synthesizer and rule-based critic, no model at all.

Deterministic by design: the same evidence always gives the same answer, so an analyst can
trust that nothing was invented — every sentence of an answer is a sentence of a document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from masis_core import judgement
from masis_core.questions import MAX_ALTERNATIVE_CHARS, MAX_QUERY_CHARS
from masis_core.retrieval.quality import keywords
from masis_core.state import Critique, Evidence
from masis_core.text import content_stems, defang, sentences, strip_markers

MAX_ANSWER_SENTENCES = 5
MAX_PER_CHUNK = 2
MIN_SENTENCE_WORDS = 4
MAX_SENTENCE_WORDS = 90
PLAIN_SENTENCE_WORDS = 35
LENGTH_PENALTY = 0.005
DUPLICATE_JACCARD = 0.6


@dataclass
class Sentence:
    text: str
    marker: int  # 1-based index into the evidence list
    position: int
    score: float
    stems: set[str] = field(default_factory=set)


def alternatives(question: str) -> list[str]:
    """Rule-based expansion: the question's content words, then the same without question form."""
    q = question[:MAX_QUERY_CHARS]
    terms = sorted(keywords(q), key=q.lower().find)
    alts = []
    if terms:
        alts.append(" ".join(terms)[:MAX_ALTERNATIVE_CHARS])
    statement = q.rstrip("?").strip()
    first, _, rest = statement.partition(" ")
    if first.lower() in {"what", "which", "who", "when", "where", "why", "how"} and rest:
        alts.append(rest[:MAX_ALTERNATIVE_CHARS])
    return [a for a in dict.fromkeys(alts) if a and a.lower() != q.lower()][:2]


def _candidate_sentences(question: str, evidence: list[Evidence]) -> list[Sentence]:
    wanted = content_stems(question)
    found: list[Sentence] = []
    for marker, ev in enumerate(evidence, start=1):
        # Evidence is data, not instructions: markers inside it are defanged first.
        for position, text in enumerate(sentences(defang(ev.get("text", "")))):
            n_words = len(text.split())
            if not MIN_SENTENCE_WORDS <= n_words <= MAX_SENTENCE_WORDS:
                continue
            stems = content_stems(text)
            overlap = len(wanted & stems) / len(wanted) if wanted else 0.0
            if overlap == 0.0:
                continue
            # Run-on "sentences" (a table of contents, headings glued to a paragraph) cover many
            # terms by sheer length; past a normal sentence's length each word costs a little.
            score = (
                overlap
                + 0.25 * float(ev.get("score", 0.0))
                - LENGTH_PENALTY * max(0, n_words - PLAIN_SENTENCE_WORDS)
            )
            found.append(Sentence(text, marker, position, score, stems))
    return found


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def extract_answer(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """Best evidence sentences for the question, de-duplicated, each with its marker."""
    chosen: list[Sentence] = []
    per_chunk: dict[int, int] = {}
    for cand in sorted(
        _candidate_sentences(question, evidence), key=lambda s: (-s.score, s.marker, s.position)
    ):
        if per_chunk.get(cand.marker, 0) >= MAX_PER_CHUNK:
            continue
        if any(_jaccard(cand.stems, c.stems) > DUPLICATE_JACCARD for c in chosen):
            continue
        chosen.append(cand)
        per_chunk[cand.marker] = per_chunk.get(cand.marker, 0) + 1
        if len(chosen) == MAX_ANSWER_SENTENCES:
            break
    if not chosen:
        return []
    # Lead with the best sentence, then keep each source's sentences together in reading order.
    lead, rest = chosen[0], chosen[1:]
    rest.sort(key=lambda s: (s.marker, s.position))
    return [{"text": s.text, "citations": [s.marker]} for s in [lead, *rest]]


def render_answer(parts: list[dict[str, Any]]) -> str:
    """Sentences with their markers; a new paragraph whenever the cited source changes.

    The markers are the only "[n]" of the draft: a sentence that writes "[2]" itself (a model
    quoting a document, or any escaped or entity form of it) is defanged to "［2］", so the
    evaluator never reads it as a citation."""
    out: list[str] = []
    previous: list[int] | None = None
    for part in parts:
        cites = "".join(f"[{m}]" for m in part["citations"])
        sentence = f"{defang(part['text']).rstrip()} {cites}".strip()
        if previous is not None and part["citations"] != previous:
            out.append("\n\n")
        elif out:
            out.append(" ")
        out.append(sentence)
        previous = part["citations"]
    return "".join(out)


def critique(question: str, answer: str, evidence: list[Evidence]) -> Critique:
    """The calibrated judgement of the draft (``masis_core.judgement``): confidence is the
    estimated probability that the answer is supported by its citations and answers the
    question; conflicts name two sources that take opposite positions on it."""
    verdict = judgement.judge(question, answer, evidence)
    said = content_stems(strip_markers(answer))
    missing = sorted(
        {w for w in keywords(question) if content_stems(w) and not content_stems(w) <= said}
    )
    confidence = round(verdict.confidence, 3)
    return Critique(
        confidence=confidence,
        unsupported_claims=[],
        logical_gaps=missing,
        hallucination=False,
        conflicts=verdict.conflicts,
        recommend_retry=confidence < judgement.LOW_CONFIDENCE,
    )
