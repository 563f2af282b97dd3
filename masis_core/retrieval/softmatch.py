"""Soft keyword match: how much of a query's vocabulary a chunk holds, by meaning.

BM25 counts exact (stemmed) words; a chunk vector averages a whole passage into one point. In
between sits the question an analyst's eye asks: does this passage talk about each of the
things I asked about — 'calibrate' next to 'calibration', 'wheelchair' next to 'accessible'?
For every content word of the query we take its best cosine similarity to any content word of
the chunk, using WordLlama's static word vectors (bundled, so it works in both modes and
whatever embedder the workspace uses), and average those maxima weighted by the word's BM25
IDF in the workspace: rare words — codes, names — decide, filler words barely count.

It is a fusion signal computed only over the candidate pool the dense and keyword searches
return, never a search of its own. It adds a little to dense + BM25 fusion on fitzgov-dev
(bench/retrieval_quality.py; docs/measurements/retrieval.md).

Cost (bench/retrieval_latency.py; docs/measurements/performance.md): it was half a
retrieval's time when each chunk's word vectors were stacked into a matrix and multiplied per
chunk and per variant. Now words are row numbers in one vocabulary table, a chunk's row numbers are
kept by chunk id (``ChunkWords``), and all variants' words meet the whole pool's distinct words
in one product; a chunk's maximum is a ``reduceat`` over its columns of that product. A fresh
question's pool still cost the splitting of its texts into words and the embedding of words
the process had not met. Both are gone: each chunk's words are stored in its keyword row at ingest
and held by the keyword index as numbers into the workspace's vocabulary, whose rows in the
word table are looked up once per index build (``ChunkWords._from_stored``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from masis_core.retrieval.bm25 import StoredWords, chunk_words, content_words

# A workspace's vocabulary is tens of thousands of words; 256 floats each.
MAX_CACHED_WORDS = 200_000
# Chunks whose word rows are kept: ~0.5 KB each. A run's retries and follow-ups meet the same
# chunks again; a fresh question's pool mostly does not (the benchmark measures that case).
MAX_CACHED_CHUNKS = 20_000
_EMPTY = np.zeros(0, dtype=np.int64)


class WordVectors:
    """Unit vectors of single words, embedded once per process: each word is a row of one
    table, so a chunk can be kept as its words' row numbers instead of a matrix.

    The table only grows (into spare capacity, doubled when full) until it is emptied at
    ``MAX_CACHED_WORDS``, which starts a new generation: a row number is valid in the table
    returned with it, whatever other threads add or empty meanwhile."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self._embed = embed
        self._row: dict[str, int] = {}
        self._table = np.zeros((0, 0), dtype=np.float32)
        self.generation = 0
        self._lock = threading.Lock()

    def rows(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
        """The words' row numbers, the table they index and its generation; words never
        seen are embedded in one call (outside the lock: other threads read meanwhile)."""
        found = self._rows(words, fit=False)
        assert found is not None  # only a fitted look-up declines
        return found

    def rows_if_room(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int] | None:
        """As ``rows``, or None when the words not in the table would take it past
        ``MAX_CACHED_WORDS``: a workspace's whole vocabulary goes in only beside the others',
        so that large vocabularies never empty the table for one another on every pass."""
        return self._rows(words, fit=True)

    def _rows(self, words: Sequence[str], fit: bool) -> tuple[np.ndarray, np.ndarray, int] | None:
        while True:
            with self._lock:
                if len(self._row) > MAX_CACHED_WORDS:
                    self._row, self._table = {}, np.zeros((0, 0), dtype=np.float32)
                    self.generation += 1
                generation = self.generation
                missing = [w for w in dict.fromkeys(words) if w not in self._row]
                if not missing:
                    return self._lookup(words)
                if fit and len(self._row) + len(missing) > MAX_CACHED_WORDS:
                    return None
            fresh = dict(
                zip(missing, np.asarray(self._embed(missing), dtype=np.float32), strict=True)
            )
            with self._lock:
                if self.generation == generation:  # else emptied meanwhile: once more
                    self._append([w for w in missing if w not in self._row], fresh)
                    return self._lookup(words)

    def _lookup(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
        row = self._row
        ids = np.fromiter((row[w] for w in words), dtype=np.int64, count=len(words))
        return ids, self._table, self.generation

    def _append(self, new: list[str], fresh: dict[str, np.ndarray]) -> None:
        """Under the lock: rows for ``new`` words, in place while there is room."""
        if not new:
            return
        size = len(self._row)
        if size + len(new) > len(self._table):
            grown = np.zeros((max(1024, 2 * (size + len(new))), len(fresh[new[0]])), np.float32)
            if size:
                grown[:size] = self._table[:size]
            self._table = grown
        self._table[size : size + len(new)] = np.stack([fresh[w] for w in new])
        self._row.update((w, size + i) for i, w in enumerate(new))

    def of(self, words: Sequence[str]) -> np.ndarray:
        """The words' unit vectors, one row each."""
        ids, table, _ = self.rows(words)
        return table[ids]


class ChunkWords:
    """Each chunk's content words as rows of the ``WordVectors`` table: from the keyword
    index's stored words when every chunk of the pool has them, else split from the texts and
    kept by chunk id (LRU) — rows written before the words column, until the start's backfill
    fills them, or a chunk published after the index was built.

    Kept by chunk id and checked against the text's hash, since a re-ingested document keeps
    its chunk ids. Splitting a chunk into words and looking them up was a large share of a
    retrieval (docs/measurements/performance.md); a kept chunk costs a dictionary lookup."""

    def __init__(self, vectors: WordVectors, size: int = MAX_CACHED_CHUNKS) -> None:
        self.vectors = vectors
        self.size = size
        self._kept: OrderedDict[str, tuple[int, int, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def pool(
        self,
        texts: Sequence[str],
        keys: Sequence[str],
        stored: tuple[StoredWords, Sequence[int]] | None = None,
    ) -> Pool:
        """The pool's words (``keys``: the chunks' ids): every chunk's rows, end to end, and
        where each chunk starts. With ``stored`` (the keyword index's words and the chunks'
        positions in it) the texts are not split at all."""
        if stored is not None and (kept := self._from_stored(*stored)) is not None:
            return kept
        found: list[np.ndarray | None] = [None] * len(keys)
        for use_kept in (True, False):
            generation = self.vectors.generation
            found = self._kept_rows(keys, texts, generation) if use_kept else [None] * len(keys)
            todo = [i for i, f in enumerate(found) if f is None]
            words = [chunk_words(texts[i]).split() for i in todo]
            ids, table, now = self.vectors.rows([w for ws in words for w in ws])
            if now == generation:
                break
            # The word table was emptied meanwhile: the kept rows are void, so all are looked
            # up again, in one call, whose table holds them whatever happens next.
        start = 0
        fresh: list[tuple[str, tuple[int, int, np.ndarray]]] = []
        for i, ws in zip(todo, words, strict=True):
            # A copy: a view would keep the whole pool's id array alive in the cache.
            found[i] = rows = ids[start : start + len(ws)].copy()
            start += len(ws)
            fresh.append((keys[i], (hash(texts[i]), now, rows)))
        if fresh and self.size:
            with self._lock:
                self._kept.update(fresh)
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
        return Pool.of([f if f is not None else _EMPTY for f in found], table)

    def _from_stored(self, stored: StoredWords, positions: Sequence[int]) -> Pool | None:
        """The chunks' words from the index: its vocabulary's rows in the word table are
        looked up (and its words not met yet embedded) once per index build and table
        generation, so a fresh question's pool costs slicing. None when the table has no
        room for the vocabulary beside the other workspaces' (the pool then splits its
        texts, as before the words were stored)."""
        rows = stored.rows
        if rows is None or rows[2] != self.vectors.generation:
            with stored.lock:
                generation = self.vectors.generation
                rows = stored.rows
                if rows is None or rows[2] != generation:
                    if stored.refused == generation:
                        return None  # no room at this generation: not asked on every query
                    rows = stored.rows = self.vectors.rows_if_room(stored.words)
                    if rows is None:
                        stored.refused = generation
                        return None
        numbers, table, _ = rows
        return Pool.of([numbers[w] for w in stored.of_chunks(positions)], table)

    def _kept_rows(
        self, keys: Sequence[str], texts: Sequence[str], generation: int
    ) -> list[np.ndarray | None]:
        found: list[np.ndarray | None] = [None] * len(texts)
        with self._lock:
            for i, (key, text) in enumerate(zip(keys, texts, strict=True)):
                hit = self._kept.get(key)
                if hit is not None and hit[0] == hash(text) and hit[1] == generation:
                    self._kept.move_to_end(key)
                    found[i] = hit[2]
        return found


@dataclass(frozen=True)
class Pool:
    """A candidate pool's words: ``flat`` holds every chunk's word rows end to end; chunk
    ``i``'s are ``flat[starts[i]:starts[i] + lengths[i]]``."""

    flat: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    table: np.ndarray

    @classmethod
    def of(cls, per_chunk: Sequence[np.ndarray], table: np.ndarray) -> Pool:
        lengths = np.array([len(r) for r in per_chunk], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        flat = np.concatenate(list(per_chunk)) if len(per_chunk) else _EMPTY
        return cls(flat.astype(np.int64), starts, lengths, table)

    def __len__(self) -> int:
        return len(self.lengths)


def soft_matches(
    vectors: WordVectors,
    queries: Sequence[str],
    weight_of: Callable[[list[str]], np.ndarray],
    pool: Pool,
) -> list[np.ndarray]:
    """Per query, per chunk: the IDF-weighted mean, over the query's content words, of each
    word's best cosine similarity to a word of the chunk (0 when either side has no content
    words). One product of all queries' words with the pool's distinct words serves all."""
    asked = [content_words(q) for q in queries]
    out = [np.zeros(len(pool), dtype=np.float32) for _ in queries]
    words = [w for ws in asked for w in ws]
    if not words or not len(pool.flat):
        return out
    distinct, inverse = np.unique(pool.flat, return_inverse=True)
    similarity = vectors.of(words) @ pool.table[distinct].T  # query words x pool's words
    filled = pool.lengths > 0
    best = np.maximum.reduceat(similarity[:, inverse], pool.starts[filled], axis=1)
    first = 0
    for qi, ws in enumerate(asked):
        if ws:
            weights = np.asarray(weight_of(ws), dtype=np.float32)
            total = float(weights.sum()) or 1.0
            out[qi][filled] = weights @ best[first : first + len(ws)] / total
        first += len(ws)
    return out
