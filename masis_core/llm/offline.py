"""The offline engine: planner, extractive synthesizer and rule-based critic, no model at all.

Deterministic by design: the same evidence always gives the same answer, so an analyst can
trust that nothing was invented — every sentence of an answer is a sentence of a document.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from masis_core.questions import MAX_ALTERNATIVE_CHARS, MAX_QUERY_CHARS
from masis_core.retrieval.quality import keywords
from masis_core.state import Critique, Evidence
from masis_core.text import content_stems, defang, numbers, sentences, strip_markers

MAX_ANSWER_SENTENCES = 5
MAX_PER_CHUNK = 2
MIN_SENTENCE_WORDS = 4
MAX_SENTENCE_WORDS = 90
PLAIN_SENTENCE_WORDS = 35
LENGTH_PENALTY = 0.005
DUPLICATE_JACCARD = 0.6
# Coverage of the question's content words below which an answer is not trusted.
MIN_COVERAGE = 0.5

NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "neither",
        "nor",
        "cannot",
        "can't",
        "won't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "doesn't",
        "didn't",
        "don't",
        "hasn't",
        "haven't",
        "hadn't",
        "without",
        "failed",
        "fails",
        "fail",
        "denied",
        "denies",
        "deny",
        "rejected",
        "rejects",
        "refuted",
        "false",
        "unable",
        "lacks",
        "lack",
    ]
)
ANTONYMS = [
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rose", "fell"),
    ("rise", "fall"),
    ("higher", "lower"),
    ("more", "less"),
    ("gain", "loss"),
    ("approved", "rejected"),
    ("passed", "failed"),
    ("safe", "unsafe"),
    ("effective", "ineffective"),
    ("won", "lost"),
    ("before", "after"),
    ("true", "false"),
    ("confirmed", "denied"),
    ("up", "down"),
    ("above", "below"),
    ("profit", "loss"),
    ("growth", "decline"),
    ("allowed", "prohibited"),
]


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


def _polarity(text: str) -> bool:
    return any(w in NEGATIONS or w.endswith("n't") for w in text.lower().split())


def _antonym_clash(a: str, b: str) -> str | None:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    for x, y in ANTONYMS:
        if (x in wa and y in wb and y not in wa) or (y in wa and x in wb and x not in wa):
            return f"{x} / {y}"
    return None


def find_conflicts(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """Pairs of sources that talk about the same thing and disagree on a figure or a fact."""
    wanted = content_stems(question)
    relevant = [
        s
        for s in _candidate_sentences(question, evidence)
        if wanted and len(wanted & s.stems) / len(wanted) >= 0.34
    ]
    conflicts: list[dict[str, Any]] = []
    seen_pairs: set[tuple[str, str]] = set()
    for a, b in itertools.combinations(relevant, 2):
        ea, eb = evidence[a.marker - 1], evidence[b.marker - 1]
        doc_a, doc_b = ea.get("doc_id") or ea.get("url"), eb.get("doc_id") or eb.get("url")
        if doc_a == doc_b or (doc_a, doc_b) in seen_pairs:
            continue
        shared = a.stems & b.stems
        if len(shared) < 2 or _jaccard(a.stems, b.stems) < 0.2:
            continue
        na, nb = numbers(a.text), numbers(b.text)
        reason = None
        only_a, only_b = na - nb, nb - na
        if only_a and only_b:
            reason = (
                f"different figures: {', '.join(sorted(only_a))} vs {', '.join(sorted(only_b))}"
            )
        elif _polarity(a.text) != _polarity(b.text):
            reason = "one source affirms what the other negates"
        elif clash := _antonym_clash(a.text, b.text):
            reason = f"opposite claims ({clash})"
        if reason is None:
            continue
        seen_pairs.add((doc_a, doc_b))
        seen_pairs.add((doc_b, doc_a))
        conflicts.append(
            {
                "topic": " ".join(sorted(shared))[:120],
                "reason": reason,
                "sources": [source_ref(ea, a.text), source_ref(eb, b.text)],
            }
        )
    return conflicts


def source_ref(ev: Evidence, text: str) -> dict[str, Any]:
    return {
        "doc_id": ev.get("doc_id") or ev.get("url", ""),
        "filename": ev.get("filename") or ev.get("url", ""),
        "page": ev.get("page_start"),
        "chunk_id": ev.get("chunk_id"),
        "text": text,
    }


def critique(question: str, answer: str, evidence: list[Evidence]) -> Critique:
    """Coverage of the question's content words by the answer, and conflicts in the evidence."""
    wanted = content_stems(question)
    said = content_stems(strip_markers(answer))
    covered = wanted & said
    coverage = len(covered) / len(wanted) if wanted else (1.0 if answer else 0.0)
    missing = sorted(
        {w for w in keywords(question) if content_stems(w) and not content_stems(w) <= said}
    )
    confidence = round(min(0.95, 0.3 + 0.65 * coverage), 3) if answer else 0.0
    return Critique(
        confidence=confidence,
        unsupported_claims=[],
        logical_gaps=missing,
        hallucination=False,
        conflicts=find_conflicts(question, evidence),
        recommend_retry=coverage < MIN_COVERAGE,
    )
