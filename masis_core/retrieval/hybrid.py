"""Dense + keyword retrieval for every query variant, fused into one ranking.

Candidates come from two places, both restricted to the workspace inside the search: Chroma's
kNN (dense) and the workspace's BM25 index (keyword). Every candidate is then scored on *both*
sides — a keyword-only hit gets its cosine similarity from its stored embedding, a dense-only
hit gets its BM25 score — so fusion and the threshold see complete evidence, not one side's
guess about the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from masis_core.services import Workbench

Mode = Literal["dense", "bm25", "hybrid"]
Fusion = Literal["minmax", "rrf"]
MODES: tuple[Mode, ...] = ("dense", "bm25", "hybrid")

# Measured on fitzgov-dev with WordLlama (bench/retrieval_quality.py, README): a convex
# combination of per-variant min-max normalised scores beats RRF there (nDCG@10 0.65 vs 0.64),
# because RRF throws away how far apart two candidates' scores are.
DENSE_WEIGHT = 0.5
RRF_K = 60
DENSE_MIN_SPREAD = 0.2  # cosine units
KEYWORD_MIN_SPREAD = 0.25  # share of the best BM25 score in the pool
# Each side fetches this many times the wanted count per variant, so fusion can promote a
# candidate that one side ranked just below the cut.
POOL_FACTOR = 2


@dataclass
class Candidate:
    chunk_id: str
    text: str
    metadata: dict[str, Any]
    dense: float = 0.0  # best cosine similarity over the query variants
    bm25: float = 0.0  # best raw BM25 score over the variants
    coverage: float = 0.0  # best share of a variant's keyword (IDF) weight the chunk holds
    dense_rank: int | None = None  # best rank in a dense list (None: not a dense candidate)
    keyword_rank: int | None = None  # best rank in a BM25 list (None: not a keyword candidate)
    fused: float = 0.0
    per_query: list[tuple[float, float]] = field(default_factory=list)  # (dense, bm25)


def _minmax(values: np.ndarray, min_range: float) -> np.ndarray:
    """Scale to 0..1 over the pool, but never stretch a spread narrower than ``min_range``.

    Plain min-max turns a 0.01 spread into the full scale: when one side barely tells the
    candidates apart (twenty near-identical fault-code paragraphs look alike to an embedder),
    its noise would outvote the side that does discriminate. The floor is a no-op on
    fitzgov-dev (nDCG@10 unchanged) and decisive on such near-duplicates.
    """
    lo, hi = float(values.min()), float(values.max())
    spread = max(hi - lo, min_range)
    if spread < 1e-12:
        return np.ones_like(values) if hi > 0 else np.zeros_like(values)
    return (values - lo) / spread


def retrieve(
    bench: Workbench,
    workspace_id: str,
    embed_model: str,
    queries: Sequence[str],
    k: int,
    mode: Mode = "hybrid",
    exclude_docs: Sequence[str] = (),
    dense_weight: float = DENSE_WEIGHT,
    fusion: Fusion = "minmax",
) -> list[Candidate]:
    """Up to ``k`` candidates, best first by the mode's own order, each scored on both sides."""
    queries = [q for q in dict.fromkeys(queries) if q.strip()]
    if not queries:
        return []
    depth = k * POOL_FACTOR if mode == "hybrid" else k
    embedder = bench.embedder(embed_model)
    vectors = [np.asarray(embedder.embed_query(q), dtype=np.float32) for q in queries]
    keyword = bench.keyword_index(workspace_id)
    scored = [keyword.scores(workspace_id, q) for q in queries]
    pool: dict[str, Candidate] = {}
    dense_lists: list[list[str]] = []
    keyword_lists: list[list[str]] = []
    if mode in ("dense", "hybrid"):
        for vec in vectors:
            hits = bench.store.query(embed_model, workspace_id, vec, depth, exclude_docs)
            dense_lists.append([h.chunk_id for h in hits])
            for hit in hits:
                pool.setdefault(hit.chunk_id, Candidate(hit.chunk_id, hit.text, hit.metadata))
    if mode in ("bm25", "hybrid"):
        for s in scored:
            hits = s.top(depth, exclude_docs) if s else []
            keyword_lists.append([h.chunk_id for h in hits])
            for hit in hits:
                pool.setdefault(hit.chunk_id, Candidate(hit.chunk_id, "", {}))
    if not pool:
        return []
    # Text, metadata and embeddings from Chroma, inside the workspace and only for visible
    # chunks: a keyword row of a half-ingested or just-deleted document never surfaces.
    got = bench.store.get_with_embeddings(embed_model, workspace_id, list(pool))
    for cid in [c for c in pool if c not in got]:
        del pool[cid]
    for cid, c in pool.items():
        text, meta, emb = got[cid]
        c.text, c.metadata = text or c.text, meta or c.metadata
        both = [s.of([cid]).get(cid, (0.0, 0.0)) if s else (0.0, 0.0) for s in scored]
        c.per_query = [(float(np.dot(emb, v)), b[0]) for v, b in zip(vectors, both, strict=True)]
        c.dense = max(d for d, _ in c.per_query)
        c.bm25 = max(b for _, b in c.per_query)
        c.coverage = max(cov for _, cov in both)
    for lists, attr in ((dense_lists, "dense_rank"), (keyword_lists, "keyword_rank")):
        for ranking in lists:
            for rank, cid in enumerate(ranking, start=1):
                if cid in pool:
                    best = getattr(pool[cid], attr)
                    setattr(pool[cid], attr, rank if best is None else min(best, rank))
    candidates = list(pool.values())
    if mode == "dense":
        candidates.sort(key=lambda c: -c.dense)
    elif mode == "bm25":
        candidates.sort(key=lambda c: (-c.bm25, c.chunk_id))
    elif fusion == "rrf":
        fused = rrf(
            [*dense_lists, *keyword_lists],
            weights=[dense_weight] * len(dense_lists) + [1 - dense_weight] * len(keyword_lists),
        )
        for c in candidates:
            c.fused = fused.get(c.chunk_id, 0.0)
        candidates.sort(key=lambda c: -c.fused)
    else:
        _fuse_minmax(candidates, len(queries), dense_weight)
        candidates.sort(key=lambda c: -c.fused)
    return candidates[:k]


def _fuse_minmax(candidates: list[Candidate], n_queries: int, dense_weight: float) -> None:
    """Per variant, min-max both sides over the candidate pool, mix, then average variants."""
    total = np.zeros(len(candidates))
    for qi in range(n_queries):
        dense = np.array([c.per_query[qi][0] for c in candidates])
        keyword = np.array([c.per_query[qi][1] for c in candidates])
        total += dense_weight * _minmax(dense, DENSE_MIN_SPREAD) + (1 - dense_weight) * _minmax(
            keyword, KEYWORD_MIN_SPREAD * float(keyword.max())
        )
    for c, score in zip(candidates, total / max(1, n_queries), strict=True):
        c.fused = float(score)


def rrf(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] = ()
) -> dict[str, float]:
    """Reciprocal Rank Fusion: the sum of weight / (k + rank) over the rankings holding an
    item, best first."""
    weights = list(weights) or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return dict(sorted(fused.items(), key=lambda kv: -kv[1]))
