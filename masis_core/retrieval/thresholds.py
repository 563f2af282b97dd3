"""Similarity thresholds per embedding model (score scales differ between models).

The first-pass threshold is the similarity that keeps most relevant query–chunk pairs of the
development set (``python -m bench.score_distribution``; the distribution: docs/retrieval.md);
a retry lowers it a little: a second pass looks wider, not everywhere. The values, with how
each was set, are ``POLICY.retrieval``'s.
"""

from __future__ import annotations

from masis_core.policy import POLICY

FIRST_PASS: dict[str, float] = {
    "wordllama": POLICY.retrieval.wordllama_first_pass,
    "ollama:nomic-embed-text": POLICY.retrieval.nomic_first_pass,
}
# An embedder measured nowhere gets the common cosine default for sentence embedders.
DEFAULT_THRESHOLD = POLICY.retrieval.default_threshold
RETRY_DELTA = POLICY.retrieval.retry_delta
FLOOR = POLICY.retrieval.floor


def threshold_for(embed_model: str, retry_count: int, override: float | None = None) -> float:
    """The threshold for this pass; an analyst's override (from a review) wins."""
    if override is not None:
        return round(max(FLOOR, override), 3)
    base = FIRST_PASS.get(embed_model, DEFAULT_THRESHOLD)
    return round(base if retry_count == 0 else max(FLOOR, base - RETRY_DELTA), 3)
