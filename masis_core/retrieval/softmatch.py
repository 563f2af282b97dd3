"""Soft keyword match: how much of a query's vocabulary a chunk holds, by meaning.

BM25 counts exact (stemmed) words; a chunk vector averages a whole passage into one point. In
between sits the question an analyst's eye asks: does this passage talk about each of the
things I asked about — 'calibrate' next to 'calibration', 'wheelchair' next to 'accessible'?
For every content word of the query we take its best cosine similarity to any content word of
the chunk, using WordLlama's static word vectors (bundled, so it works in both modes and
whatever embedder the workspace uses), and average those maxima weighted by the word's BM25
IDF in the workspace: rare words — codes, names — decide, filler words barely count.

It is a fusion signal computed only over the candidate pool the dense and keyword searches
return, never a search of its own. On fitzgov-dev it adds 0.008 nDCG@10 to dense + BM25
fusion (bench/retrieval_quality.py; README, *Retrieval quality*).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from masis_core.retrieval.bm25 import content_words

# A workspace's vocabulary is tens of thousands of words; 256 floats each.
MAX_CACHED_WORDS = 200_000


class WordVectors:
    """Unit vectors of single words, embedded once per process and cached."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self._embed = embed
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def of(self, words: Sequence[str]) -> np.ndarray:
        with self._lock:
            found = {w: self._cache[w] for w in words if w in self._cache}
        missing = [w for w in dict.fromkeys(words) if w not in found]
        if missing:
            fresh = dict(
                zip(missing, np.asarray(self._embed(missing), dtype=np.float32), strict=True)
            )
            found.update(fresh)
            with self._lock:
                if len(self._cache) + len(fresh) > MAX_CACHED_WORDS:
                    self._cache.clear()
                self._cache.update(fresh)
        # From the local copy: another thread may clear the shared cache meanwhile.
        return np.stack([found[w] for w in words])


def word_matrices(vectors: WordVectors, texts: Sequence[str]) -> list[np.ndarray | None]:
    """Each text's content-word vectors (None: no content words), once per retrieval.

    The pool's words are looked up together, so the words no query met before are embedded
    in one call: per text, the call overhead made this 37 ms of a 76 ms hybrid retrieval at
    100,000 chunks (bench/retrieval_latency.py, cold word cache).
    """
    per_text = [content_words(text) for text in texts]
    union = list(dict.fromkeys(w for words in per_text for w in words))
    if not union:
        return [None] * len(texts)
    table = vectors.of(union)
    row = {w: i for i, w in enumerate(union)}
    return [table[[row[w] for w in words]] if words else None for words in per_text]


def soft_match(
    vectors: WordVectors,
    query: str,
    weight_of: Callable[[list[str]], np.ndarray],
    chunks: Sequence[np.ndarray | None],
) -> np.ndarray:
    """Per chunk: the IDF-weighted mean, over the query's content words, of each word's best
    cosine similarity to a word of the chunk (0 when either side has no content words)."""
    scores = np.zeros(len(chunks), dtype=np.float32)
    asked = content_words(query)
    if not asked:
        return scores
    query_vectors = vectors.of(asked)
    weights = weight_of(asked)
    total = float(weights.sum()) or 1.0
    for i, matrix in enumerate(chunks):
        if matrix is not None:
            scores[i] = float((query_vectors @ matrix.T).max(axis=1) @ weights) / total
    return scores
