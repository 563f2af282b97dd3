"""Support per sentence: which evidence sentence backs each answer sentence, and how well.

The evaluator checks each claim against the passages it cites (figures and names must be in
them) and flags what fails; this module redoes that per sentence of the stored answer, with
its final citation numbers, and adds the one sentence of a cited passage that shares most of
the claim's content words. The analyst opens a sentence and reads that evidence sentence; the
page view highlights it on the PDF page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from masis_core.answers.rows import row_line
from masis_core.policy import POLICY
from masis_core.text.sentences import (
    claims,
    content_stems,
    markers,
    names,
    numbers,
    segment,
    strip_markers,
)

# Share of a claim's content words in its best evidence sentence: at or above STRONG the
# sentence says what the claim says (an extractive answer quotes it: 1.0); under PARTIAL the
# claim rests on the passage as a whole, or on nothing.
STRONG = POLICY.support_strong
PARTIAL = POLICY.support_partial
NO_CITATION = "no valid citation"
Level = Literal["quoted", "strong", "partial", "weak", "flagged"]
LEVELS_TEXT: dict[Level, str] = {
    # An offline answer's sentences are its sources' own: "strongly backed · 100%" beside a
    # confidence of 6% read as a verdict on the answer, when it only says where it is from.
    "quoted": "quoted word for word",
    "strong": "strongly backed",
    "partial": "partly backed",
    "weak": "weakly backed",
    "flagged": "flagged",
}


def missing_terms(claim: str, passage: str) -> set[str]:
    """Figures and names of ``claim`` that ``passage`` does not contain."""
    missing = numbers(claim) - numbers(passage)
    lower = passage.lower()
    return missing | {n for n in names(claim) if n.lower() not in lower}


def issue_of(claim: str, passages: Iterable[str]) -> str | None:
    """The evaluator's flag for a claim and the passages it cites validly (none: uncited)."""
    cited = list(passages)
    if not cited:
        return NO_CITATION
    missing = missing_terms(claim, " ".join(cited))
    return "not in the cited passage: " + ", ".join(sorted(missing)) if missing else None


@dataclass(frozen=True)
class Backing:
    """The evidence sentence that backs a claim best: citation number, the sentence as it is
    in the passage (so it can be found on the page), and the share of the claim's content
    words it holds."""

    n: int
    sentence: str
    score: float


@dataclass(frozen=True)
class SentenceSupport:
    text: str  # the answer sentence, without its markers
    cited: tuple[int, ...]
    backing: Backing | None
    issue: str | None  # the evaluator's flag, if any

    @property
    def level(self) -> Level:
        if self.issue is not None:
            return "flagged"
        score = self.backing.score if self.backing else 0.0
        said = " ".join(self.text.split())
        if self.backing is not None and said and said == " ".join(self.backing.sentence.split()):
            return "quoted"  # the whole evidence sentence, not part of it ("It is not true that …")
        return "strong" if score >= STRONG else "partial" if score >= PARTIAL else "weak"


def evidence_sentences(passage: str) -> list[str]:
    """The passage's pieces as written (headings and table rows included: a claim may rest
    on one), each a slice of the passage."""
    pieces = [passage[s.start : s.end].strip() for s in segment(passage)]
    return [p for p in pieces if p] or ([passage.strip()] if passage.strip() else [])


def overlap(claim: str, sentence: str) -> float:
    wanted = content_stems(claim)
    if not wanted:
        return 1.0 if numbers(claim) and numbers(claim) <= numbers(sentence) else 0.0
    return len(wanted & content_stems(sentence)) / len(wanted)


def best_backing(claim: str, cited: Iterable[int], passages: Mapping[int, str]) -> Backing | None:
    """The cited sentence that shares most of the claim's words; for a table row read with
    its header (the offline engine's row answer), that row."""
    best: Backing | None = None
    for n in cited:
        if (line := row_line(claim, passages.get(n, ""))) is not None:
            return Backing(n, line, 1.0)
        for sentence in evidence_sentences(passages.get(n, "")):
            score = overlap(claim, sentence)
            if best is None or score > best.score:
                best = Backing(n, sentence, round(score, 3))
    return best


def sentence_support(answer: str, citations: list[dict[str, Any]]) -> list[list[SentenceSupport]]:
    """Each paragraph of the stored answer as its sentences with their support."""
    passages = {int(c["n"]): str(c.get("text") or "") for c in citations}
    out: list[list[SentenceSupport]] = []
    for paragraph in answer.split("\n\n"):
        row = []
        for claim in claims(paragraph):
            cited = tuple(dict.fromkeys(m for m in markers(claim) if m in passages))
            text = strip_markers(claim)
            row.append(
                SentenceSupport(
                    text=text,
                    cited=cited,
                    backing=best_backing(text, cited, passages),
                    issue=issue_of(text, (passages[m] for m in cited)),
                )
            )
        if row:
            out.append(row)
    return out


def cited_sentences(support: list[list[SentenceSupport]]) -> dict[int, tuple[str, ...]]:
    """Per citation number, the evidence sentences that back some answer sentence: what the
    page view highlights."""
    found: dict[int, dict[str, None]] = {}
    for row in support:
        for s in row:
            if s.backing is not None and s.backing.score >= PARTIAL:
                found.setdefault(s.backing.n, {})[s.backing.sentence] = None
    return {n: tuple(sentences) for n, sentences in found.items()}
