"""Content-quality score: stubs score 0, then length plus question-keyword overlap."""

from __future__ import annotations

from masis_core.text.words import STOP_WORDS, words

STUB_WORDS = 20
QUALITY_THRESHOLD = 0.3


def keywords(text: str) -> set[str]:
    """Content words of a question: lower-cased, stop words and one-letter tokens removed."""
    return {w for w in words(text) if w not in STOP_WORDS and len(w) > 1}


def length_score(word_count: int) -> float:
    if word_count < STUB_WORDS:
        return 0.0
    return min(0.8, 0.2 + (word_count / 200) * 0.6)


def quality_score(text: str, question: str | None = None, word_count: int | None = None) -> float:
    """0..1; under 20 words is a stub and scores 0 whatever the question."""
    n = word_count if word_count is not None else len(text.split())
    base = length_score(n)
    if base == 0.0 or not question:
        return round(base, 4)
    wanted = keywords(question)
    if not wanted:
        return round(base, 4)
    overlap = len(wanted & set(words(text))) / len(wanted)
    return round(min(1.0, base + min(0.2, overlap * 0.2)), 4)
