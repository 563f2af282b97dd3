"""Dense + keyword retrieval for every query variant, fused into one ranking.

Candidates come from two places, both restricted to the workspace inside the search: Chroma's
kNN (dense) and the workspace's BM25 index (keyword). Every candidate is then scored on *both*
sides — a keyword-only hit gets its cosine similarity from its stored embedding, a dense-only
hit gets its BM25 score — so fusion and the threshold see complete evidence, not one side's
guess about the other. In hybrid mode a third signal, the soft keyword match (softmatch.py),
scores the same pool; it only orders candidates, the keep-or-drop rules never look at it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from masis_core.llm.embeddings import Embedder
from masis_core.modes import Mode
from masis_core.policy import POLICY
from masis_core.retrieval.bm25 import Bm25Store, KeywordIndex, KeywordScores
from masis_core.retrieval.softmatch import ChunkWords, soft_matches
from masis_core.retrieval.store import Row, VectorStore

Fusion = Literal["minmax", "rrf"]

# Measured on fitzgov-dev with WordLlama (bench/retrieval_quality.py, docs/retrieval.md): a convex
# combination of per-variant min-max normalised scores beats RRF there, because RRF throws away
# how far apart two candidates' scores are. The weights (dense, BM25, soft keyword match) and
# the spreads min-max never stretches, with how each was set, are ``POLICY.retrieval``'s.
DENSE_WEIGHT = POLICY.retrieval.dense_weight
SOFT_WEIGHT = POLICY.retrieval.soft_weight
RRF_K = 60
DENSE_MIN_SPREAD = POLICY.retrieval.dense_min_spread  # cosine units
SOFT_MIN_SPREAD = POLICY.retrieval.soft_min_spread  # cosine units, averaged over query words
KEYWORD_MIN_SPREAD = POLICY.retrieval.keyword_min_spread  # share of the pool's best BM25 score
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
    soft: float = 0.0  # best soft keyword match over the variants (softmatch.py)
    fused: float = 0.0
    per_query: list[tuple[float, float, float]] = field(default_factory=list)  # dense, bm25, soft


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


@dataclass(frozen=True)
class WorkspaceIndex:
    """Everything retrieval reads for one workspace: its vectors (and the embedder that made
    them), its keyword index, and the word vectors of the soft match. ``Workbench.index``
    builds one; retrieval needs nothing else of the workbench."""

    workspace_id: str
    embed_model: str
    store: VectorStore
    keywords: Bm25Store
    embedder: Embedder
    chunk_words: ChunkWords


def retrieve(
    index: WorkspaceIndex,
    queries: Sequence[str],
    k: int,
    mode: Mode = "hybrid",
    exclude_docs: Sequence[str] = (),
    dense_weight: float = DENSE_WEIGHT,
    fusion: Fusion = "minmax",
    soft_weight: float = SOFT_WEIGHT,
) -> list[Candidate]:
    """Up to ``k`` candidates, best first by the mode's own order, each scored on both sides."""
    queries = [q for q in dict.fromkeys(queries) if q.strip()]
    if not queries:
        return []
    depth = k * POOL_FACTOR if mode == "hybrid" else k
    workspace_id = index.workspace_id
    vectors = list(np.asarray(index.embedder.embed_queries(queries), dtype=np.float32))
    keywords = index.keywords.index(workspace_id)
    scored = [keywords.scores(q) if keywords else None for q in queries]
    keyword_lists: list[list[str]] = []
    if mode in ("bm25", "hybrid"):
        keyword_lists = [
            [h.chunk_id for h in (s.top(depth, exclude_docs) if s else [])] for s in scored
        ]
    keyword_ids = list(dict.fromkeys(cid for ranking in keyword_lists for cid in ranking))
    pool, dense_lists, got = _read_candidates(
        index, vectors, depth, exclude_docs, keyword_ids, mode
    )
    if not pool:
        return []
    for cid in [c for c in pool if c not in got]:
        del pool[cid]
    if not pool:  # only keyword rows of a document still being ingested matched
        return []
    for cid, c in pool.items():
        text, meta, _ = got[cid]
        c.text, c.metadata = text or c.text, meta or c.metadata
    _score_both_sides(index, keywords, queries, vectors, scored, pool, got, mode)
    _set_ranks(pool, dense_lists, keyword_lists)
    candidates = list(pool.values())
    _order(
        candidates,
        mode,
        fusion,
        dense_lists,
        keyword_lists,
        len(queries),
        dense_weight,
        soft_weight,
    )
    return candidates[:k]


def _read_candidates(
    index: WorkspaceIndex,
    vectors: list[np.ndarray],
    depth: int,
    exclude_docs: Sequence[str],
    keyword_ids: list[str],
    mode: Mode,
) -> tuple[dict[str, Candidate], list[list[str]], dict[str, Row]]:
    """The candidate pool (dense hits, then keyword ids), the dense rankings, and the rows
    read for them.

    Text, metadata and stored vector of every candidate, from Chroma, inside the workspace
    and only for visible chunks: a keyword row of a half-ingested or just-deleted document
    never surfaces. The keyword side's rows are read in the kNN's own row read; without a
    kNN, on their own."""
    workspace_id, embed_model = index.workspace_id, index.embed_model
    pool: dict[str, Candidate] = {}
    dense_lists: list[list[str]] = []
    got: dict[str, Row] = {}
    if mode in ("dense", "hybrid"):
        dense_hits, got = index.store.query_many(
            embed_model,
            workspace_id,
            vectors,
            depth,
            exclude_docs,
            embeddings=True,
            also=keyword_ids,
        )
        for hits in dense_hits:
            dense_lists.append([h.chunk_id for h in hits])
            for hit in hits:
                pool.setdefault(hit.chunk_id, Candidate(hit.chunk_id, hit.text, hit.metadata))
                if hit.embedding is not None:
                    got[hit.chunk_id] = (hit.text, hit.metadata, hit.embedding)
    elif keyword_ids:
        got = index.store.get_with_embeddings(embed_model, workspace_id, keyword_ids)
    for cid in keyword_ids:
        pool.setdefault(cid, Candidate(cid, "", {}))
    return pool, dense_lists, got


def _set_ranks(
    pool: dict[str, Candidate], dense_lists: list[list[str]], keyword_lists: list[list[str]]
) -> None:
    """Each candidate's best rank on each side over all the query variants."""
    for lists, attr in ((dense_lists, "dense_rank"), (keyword_lists, "keyword_rank")):
        for ranking in lists:
            for rank, cid in enumerate(ranking, start=1):
                if cid in pool:
                    best = getattr(pool[cid], attr)
                    setattr(pool[cid], attr, rank if best is None else min(best, rank))


def _order(
    candidates: list[Candidate],
    mode: Mode,
    fusion: Fusion,
    dense_lists: list[list[str]],
    keyword_lists: list[list[str]],
    n_queries: int,
    dense_weight: float,
    soft_weight: float,
) -> None:
    """Sort best first by the mode's own order: one side's score, or the fused score."""
    if mode == "dense":
        candidates.sort(key=lambda c: (-c.dense, c.chunk_id))
    elif mode == "bm25":
        candidates.sort(key=lambda c: (-c.bm25, c.chunk_id))
    elif fusion == "rrf":
        fused = rrf([*dense_lists, *keyword_lists])  # equal weights, the textbook form
        for c in candidates:
            c.fused = fused.get(c.chunk_id, 0.0)
        candidates.sort(key=lambda c: (-c.fused, c.chunk_id))
    else:
        _fuse_minmax(candidates, n_queries, dense_weight, soft_weight)
        candidates.sort(key=lambda c: (-c.fused, c.chunk_id))


def _score_both_sides(
    index: WorkspaceIndex,
    keywords: KeywordIndex | None,
    queries: Sequence[str],
    vectors: Sequence[np.ndarray],
    scored: Sequence[KeywordScores | None],
    pool: dict[str, Candidate],
    got: dict[str, tuple[str, dict[str, Any], np.ndarray]],
    mode: Mode,
) -> None:
    """Every candidate's dense, BM25 and (hybrid only) soft-match score for every variant."""
    ids = list(pool)
    embeddings = np.stack([got[cid][2] for cid in ids])  # the pool is never empty here
    dense = [embeddings @ v for v in vectors]
    keyword = [s.of(ids) if s else {} for s in scored]
    if mode == "hybrid":
        stored = keywords.stored_words(ids) if keywords else None
        words = index.chunk_words.pool([pool[cid].text for cid in ids], ids, stored)

        def weights(asked: list[str]) -> np.ndarray:
            return keywords.idf_weights(asked) if keywords else np.ones(len(asked))

        soft = soft_matches(index.chunk_words.vectors, queries, weights, words)
    else:
        soft = [np.zeros(len(ids)) for _ in queries]
    for i, cid in enumerate(ids):
        c = pool[cid]
        both = [k.get(cid, (0.0, 0.0)) for k in keyword]
        c.per_query = [
            (float(d[i]), b[0], float(s[i])) for d, b, s in zip(dense, both, soft, strict=True)
        ]
        c.dense = max(p[0] for p in c.per_query)
        c.bm25 = max(p[1] for p in c.per_query)
        c.soft = max(p[2] for p in c.per_query)
        c.coverage = max(cov for _, cov in both)


def _fuse_minmax(
    candidates: list[Candidate], n_queries: int, dense_weight: float, soft_weight: float
) -> None:
    """Per variant, min-max each signal over the candidate pool, mix, then average variants."""
    keyword_weight = 1 - dense_weight - soft_weight
    total = np.zeros(len(candidates))
    for qi in range(n_queries):
        dense, keyword, soft = (
            np.array([c.per_query[qi][j] for c in candidates]) for j in range(3)
        )
        total += (
            dense_weight * _minmax(dense, DENSE_MIN_SPREAD)
            + keyword_weight * _minmax(keyword, KEYWORD_MIN_SPREAD * float(keyword.max()))
            + soft_weight * _minmax(soft, SOFT_MIN_SPREAD)
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
