"""Similarity thresholds per embedding model (score scales differ between models).

How the defaults were chosen (``python -m bench.score_distribution``, 600 queries of the
development set ``fitzgov-dev/retrieval``): the first-pass threshold is the similarity that
keeps 85% of relevant query–chunk pairs: WordLlama's relevant pairs sit far below the 0.60
tuned for other models, which would drop most of the relevant evidence (the distribution:
docs/retrieval.md). nomic-embed-text cannot be run on the machine these were
measured on; its value is an estimate to re-measure with ``--embedder ollama:nomic-embed-text``.
A retry lowers the threshold by 0.05: a second pass looks a little wider, not everywhere.
"""

from __future__ import annotations

FIRST_PASS: dict[str, float] = {
    "wordllama": 0.27,
    "ollama:nomic-embed-text": 0.55,
}
# An embedder measured nowhere gets the common cosine default for sentence embedders.
DEFAULT_THRESHOLD = 0.60
RETRY_DELTA = 0.05
FLOOR = 0.05


def threshold_for(embed_model: str, retry_count: int, override: float | None = None) -> float:
    """The threshold for this pass; an analyst's override (from a review) wins."""
    if override is not None:
        return round(max(FLOOR, override), 3)
    base = FIRST_PASS.get(embed_model, DEFAULT_THRESHOLD)
    return round(base if retry_count == 0 else max(FLOOR, base - RETRY_DELTA), 3)
