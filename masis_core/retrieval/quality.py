"""Content-quality score: stubs score 0, then length plus question-keyword overlap."""

from __future__ import annotations

from masis_core.policy import POLICY
from masis_core.text.words import STOP_WORDS, words

STUB_WORDS = POLICY.retrieval.stub_words
QUALITY_THRESHOLD = POLICY.retrieval.quality_threshold
LENGTH_CAP = POLICY.retrieval.quality_length_cap
KEYWORD_SHARE = POLICY.retrieval.quality_keyword_share


def keywords(text: str) -> set[str]:
    """Content words of a question: lower-cased, stop words and one-letter tokens removed."""
    return {w for w in words(text) if w not in STOP_WORDS and len(w) > 1}


def length_score(word_count: int) -> float:
    if word_count < STUB_WORDS:
        return 0.0
    return min(LENGTH_CAP, 0.2 + (word_count / 200) * 0.6)


def quality_score(text: str, question: str | None = None, word_count: int | None = None) -> float:
    """0..1; a stub (under ``STUB_WORDS``) scores 0 whatever the question."""
    n = word_count if word_count is not None else len(text.split())
    base = length_score(n)
    if base == 0.0 or not question:
        return round(base, 4)
    wanted = keywords(question)
    if not wanted:
        return round(base, 4)
    overlap = len(wanted & set(words(text))) / len(wanted)
    return round(min(1.0, base + min(KEYWORD_SHARE, overlap * KEYWORD_SHARE)), 4)
