"""Keyword search (BM25, via bm25s) per workspace, persisted beside Chroma.

Layout and lifecycle:

- The *tokens* of every chunk live in the database (``bm25_chunks``, masis_core/storage/db.py),
  written and deleted together with the document's chunks — that is the incremental part: an
  ingest adds only its own rows, a delete removes only its own.
- Each workspace has its own index (its own IDF and average length: another workspace's
  content must not even shape the scores). The index is built from the stored tokens once per
  change of the workspace (a version counter), saved under ``$MASIS_DATA_DIR/bm25/``, kept in
  memory, and never rebuilt per query.
- Chroma is the source of truth: ``Workbench.keyword_index`` compares the rows with Chroma's
  visible chunks on a workspace's first use in a process and repairs them (``reconcile``).
- Locks are per workspace: one workspace's build or repair never waits for another's.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bm25s
import numpy as np

from masis_core.faults import kill_at
from masis_core.storage.db import Connection, Database, upsert
from masis_core.text.words import BM25_STOPWORDS as STOPWORDS
from masis_core.text.words import SNOWBALL as _STEMMER
from masis_core.text.words import lowered

if TYPE_CHECKING:
    from masis_core.retrieval.store import VectorStore
    from masis_core.storage.registry import Registry, Workspace

log = logging.getLogger(__name__)
# bm25s sets its own logger to DEBUG when imported: every index build wrote "Building index
# from IDs objects" into the server's log. Its warnings still pass.
logging.getLogger("bm25s").setLevel(logging.WARNING)

ROW_UPSERT = upsert(
    "bm25_chunks",
    ("workspace_id", "chunk_id", "doc_id", "tokens", "words"),
    ("workspace_id", "chunk_id"),
)
# Rows a backfill of the ``words`` column reads and writes per transaction.
BACKFILL_BATCH = 2000

_WORD = re.compile(r"(?u)\b\w[\w\-./]*\w\b|\b\w\b")
_SEPARATORS = re.compile(r"[\-./]")


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop words out, English-stemmed; codes such as 'E-1042' or '2.7.4' survive
    whole *and* as their parts, so 'e1042', 'E-1042' and '1042' all match."""
    return _tokens(_WORD.findall(lowered(text)))


def _tokens(split: list[str]) -> list[str]:
    """``tokenize`` of a text's words (``_WORD`` over the lowered text)."""
    out: list[str] = []
    append = out.append
    for raw in split:
        if "-" in raw or "." in raw or "/" in raw:  # rare: split only these
            parts = [p for p in _SEPARATORS.split(raw) if p]
            if len(parts) > 1:
                append(raw.replace("-", "").replace("/", "").replace(".", ""))
            out.extend(p for p in parts if p not in STOPWORDS)
        elif raw not in STOPWORDS:
            append(raw)
    return [t for t in _STEMMER.stemWords(out) if t]


def content_words(text: str) -> list[str]:
    """The distinct lower-cased words of a text without stop words, unstemmed, in order."""
    return list(dict.fromkeys(w for w in _WORD.findall(lowered(text)) if w not in STOPWORDS))


def chunk_words(text: str) -> str:
    """A chunk's distinct content words, sorted, space-separated: what the soft match
    (softmatch.py) compares a query's words with, kept in the keyword row's ``words`` column
    at ingest. Done per query it was a measurable share of a fresh pool's time
    (docs/measurements/performance.md), so it is done once, when the chunk is written."""
    return _sorted_content(_WORD.findall(lowered(text)))


def _sorted_content(split: list[str]) -> str:
    """``chunk_words`` of a text's words (``_WORD`` over the lowered text)."""
    return " ".join(sorted({w for w in split if w not in STOPWORDS}))


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: str
    doc_id: str
    score: float  # raw BM25 score (scale depends on the workspace and the query)
    rank: int  # 1-based rank among this query's keyword hits
    coverage: float  # share of the query's IDF weight that the chunk contains (0..1)


@dataclass
class StoredWords:
    """Every chunk's content words (the rows' ``words``, ``chunk_words``) as numbers into the
    workspace's vocabulary: chunk ``i`` of the index holds ``words[j]`` for each ``j`` in
    ``flat[starts[i]:starts[i + 1]]``. Built with the index, so a query's pool needs neither
    the chunks' texts nor a word split (softmatch.py); ``stored[i]`` is False for a row written
    before the column, until the backfill (``Bm25Store.backfill_words``) fills it.

    ``rows`` is the soft match's cache: the vocabulary's row numbers in its word table, with
    the table and its generation (``WordVectors.rows``), looked up once per index build (under
    ``lock``: concurrent first queries would each embed the whole vocabulary); ``refused`` is
    the table generation that had no room for it (asked again only once the table changes)."""

    words: list[str]
    flat: np.ndarray
    starts: np.ndarray
    stored: np.ndarray
    rows: tuple[np.ndarray, np.ndarray, int] | None = None
    refused: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def of(cls, columns: Sequence[str | None]) -> StoredWords:
        number: dict[str, int] = {}
        add = number.setdefault
        per_chunk = [[add(w, len(number)) for w in (c or "").split()] for c in columns]
        lengths = np.fromiter((len(p) for p in per_chunk), dtype=np.int64, count=len(per_chunk))
        starts = np.zeros(len(per_chunk) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        flat = np.fromiter((n for p in per_chunk for n in p), dtype=np.int32, count=int(starts[-1]))
        stored = np.array([c is not None for c in columns], dtype=bool)
        return cls(list(number), flat, starts, stored)

    def save(self, path: Path) -> None:
        """Beside the saved index: numbering the chunks' words was most of its load
        (docs/measurements/performance.md)."""
        np.savez(path / "words.npz", flat=self.flat, starts=self.starts, stored=self.stored)
        (path / "words.json").write_text(json.dumps(self.words))

    @classmethod
    def load(cls, path: Path, rows: Sequence[Any]) -> StoredWords | None:
        """The saved words, if any and if the rows (their fourth column: whether the row has
        words) still have words where they had (a backfill killed before its version bump
        fills rows under the same version)."""
        try:
            with np.load(path / "words.npz") as saved:
                flat, starts, stored = saved["flat"], saved["starts"], saved["stored"]
            words = json.loads((path / "words.json").read_text())
        except (OSError, ValueError, KeyError):
            return None
        filled = np.fromiter((bool(r[3]) for r in rows), dtype=bool, count=len(rows))
        if len(stored) != len(rows) or not np.array_equal(stored, filled):
            return None
        return cls(words, flat, starts, stored)

    def of_chunks(self, positions: Sequence[int]) -> list[np.ndarray]:
        """The word numbers of the chunks at these positions of the index."""
        starts, flat = self.starts, self.flat
        return [flat[starts[i] : starts[i + 1]] for i in positions]


@dataclass
class KeywordIndex:
    """One workspace's keyword index at one version: what a retrieval reads, all variants
    from the same one."""

    version: int
    retriever: bm25s.BM25
    chunk_ids: list[str]
    doc_ids: np.ndarray
    idf: dict[str, float]
    token_sets: list[frozenset[str]]
    position: dict[str, int]
    words: StoredWords

    @property
    def unknown_idf(self) -> float:
        """The weight of a word no chunk holds: the rarest possible term."""
        return _idf(len(self.chunk_ids), 0)

    def scores(self, query: str) -> KeywordScores | None:
        """The query's BM25 score for every chunk (None: nothing to match)."""
        asked = list(dict.fromkeys(tokenize(query)))
        terms = [t for t in asked if t in self.idf]
        if not terms:
            return None
        # A query term no chunk contains still weighs in coverage's denominator, as the rarest
        # possible term: otherwise "Mongolia's population in 1990" would be fully covered by
        # whichever chunk says "1990".
        unknown = (len(asked) - len(terms)) * self.unknown_idf
        return KeywordScores(self, terms, self.retriever.get_scores(terms), unknown)

    def idf_weights(self, words: list[str]) -> np.ndarray:
        """BM25 IDF of each word's stem; a word no chunk holds weighs as the rarest possible
        term (it is what the question is about, and nothing matches it exactly)."""
        stems = _STEMMER.stemWords(words)
        return np.array([self.idf.get(stem, self.unknown_idf) for stem in stems])

    def stored_words(self, chunk_ids: Sequence[str]) -> tuple[StoredWords, list[int]] | None:
        """The stored words and the chunks' positions in them; None when one of the chunks
        has none (a row from before the column, or a chunk this index does not hold): the
        soft match then splits the texts instead."""
        found = [self.position.get(cid) for cid in chunk_ids]
        positions = [p for p in found if p is not None]
        if len(positions) < len(found) or not self.words.stored[positions].all():
            return None
        return self.words, positions


class Bm25Store:
    """Per-workspace BM25 indexes over the chunks stored in Chroma."""

    def __init__(self, db: Database, index_dir: Path) -> None:
        self.db = db
        self.index_dir = index_dir
        self._built: dict[str, KeywordIndex] = {}
        self._checked: set[str] = set()
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    def _conn(self) -> AbstractContextManager[Connection]:
        return self.db.connect()

    def _lock(self, workspace_id: str) -> threading.RLock:
        """The workspace's own lock: during a batch upload into one workspace, queries on the
        others keep their indexes instead of queueing behind its rebuilds."""
        with self._locks_guard:
            return self._locks.setdefault(workspace_id, threading.RLock())

    # -- writes (with the document's chunks) --------------------------------------------
    def add(
        self,
        workspace_id: str,
        doc_id: str,
        chunk_ids: Sequence[str],
        texts: Sequence[str],
        columns: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        """The chunks' keyword rows; ``columns``: their ``keyword_columns``, when already
        made (an ingest makes them in the parse child, on the other core)."""
        made = columns if columns is not None else [keyword_columns(t) for t in texts]
        rows = [
            _row(workspace_id, cid, doc_id, cols) for cid, cols in zip(chunk_ids, made, strict=True)
        ]
        # Writes take the workspace's lock so that ``reconcile`` never interleaves with them.
        with self._lock(workspace_id), self._conn() as conn:
            conn.executemany(ROW_UPSERT, rows)
            self._bump(conn, workspace_id)

    def delete_document(self, workspace_id: str, doc_id: str) -> None:
        with self._lock(workspace_id), self._conn() as conn:
            conn.execute(
                "DELETE FROM bm25_chunks WHERE workspace_id = ? AND doc_id = ?",
                (workspace_id, doc_id),
            )
            self._bump(conn, workspace_id)

    def reassign(self, workspace_id: str, chunk_ids: Sequence[str], doc_id: str) -> None:
        """Chunks shared by a document's new version belong to it from now on."""
        self._by_ids(workspace_id, "UPDATE bm25_chunks SET doc_id = ?", (doc_id,), chunk_ids)

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        """Rows of chunks that left the current version (or were deleted)."""
        self._by_ids(workspace_id, "DELETE FROM bm25_chunks", (), chunk_ids)

    def _by_ids(
        self, workspace_id: str, head: str, args: tuple[Any, ...], chunk_ids: Sequence[str]
    ) -> None:
        if not chunk_ids:
            return
        with self._lock(workspace_id), self._conn() as conn:
            for start in range(0, len(chunk_ids), 500):
                part = list(chunk_ids[start : start + 500])
                conn.execute(
                    f"{head} WHERE workspace_id = ? AND chunk_id IN ({','.join('?' * len(part))})",
                    (*args, workspace_id, *part),
                )
            self._bump(conn, workspace_id)

    def delete_workspace(self, workspace_id: str) -> None:
        with self._lock(workspace_id):
            with self._conn() as conn:
                conn.execute("DELETE FROM bm25_chunks WHERE workspace_id = ?", (workspace_id,))
                # Bumped, not deleted: a workspace made again under the same id must not count
                # from 1 again, or another process would keep its index of the old one.
                self._bump(conn, workspace_id)
            self._built.pop(workspace_id, None)
            self._checked.discard(workspace_id)
            shutil.rmtree(self._dir(workspace_id), ignore_errors=True)

    @staticmethod
    def _bump(conn: Connection, workspace_id: str) -> None:
        conn.execute(
            "INSERT INTO bm25_versions VALUES (?, 1) ON CONFLICT(workspace_id) "
            "DO UPDATE SET version = bm25_versions.version + 1",
            (workspace_id,),
        )

    def version(self, workspace_id: str) -> int:
        """Every keyword lookup checks it, so another process's writes are seen; read through
        ``Database.read_one``, which keeps a connection per thread for it."""
        row = self.db.read_one(
            "SELECT version FROM bm25_versions WHERE workspace_id = ?", (workspace_id,)
        )
        return int(row[0]) if row else 0

    # -- consistency with Chroma ------------------------------------------------------
    def rows(self, workspace_id: str) -> dict[str, str]:
        """chunk_id -> doc_id of the workspace's token rows."""
        with self._conn() as conn:
            found = conn.execute(
                "SELECT chunk_id, doc_id FROM bm25_chunks WHERE workspace_id = ?", (workspace_id,)
            ).fetchall()
        return {r[0]: r[1] for r in found}

    def reconcile(self, ws: Workspace, store: VectorStore, registry: Registry) -> None:
        """Compare the workspace's rows with Chroma's visible chunks and repair them, once per
        process (a failure, say Chroma down, leaves it to the next use).

        Rows whose chunks Chroma does not show are dropped, unless their document is still
        being ingested (its rows come before its chunks turn visible); visible chunks without
        rows get them. Runs under the workspace's lock, which ``add`` and ``delete_document``
        take too, so the rows hold still; Chroma does not, an ingest can publish meanwhile.
        Hence the order — rows, then the documents being ingested, then the visible chunks: a
        row's document was claimed before its rows were written, so one no longer ingesting at
        the second read has finished (visible at the third) or is gone. And a row is dropped
        only if its chunk is still not visible when read once more just before.
        """
        with self._lock(ws.id):
            if ws.id in self._checked:
                return
            rows = self.rows(ws.id)
            busy = {d.doc_id for d in registry.stale_documents() if d.workspace_id == ws.id}
            visible = store.visible_ids(ws.embed_model, ws.id)
            stale = [cid for cid, doc in rows.items() if cid not in visible and doc not in busy]
            if stale:
                published = store.get_chunks(ws.embed_model, ws.id, stale)
                stale = [cid for cid in stale if cid not in published]
            missing_ids = [cid for cid in visible if cid not in rows]
            if stale or missing_ids:
                log.warning(
                    "keyword index of %s disagreed with the vector store (%d stale, %d missing "
                    "rows); repaired from the store",
                    ws.id,
                    len(stale),
                    len(missing_ids),
                )
                missing = store.get_chunks(ws.embed_model, ws.id, missing_ids)
                self._repair(ws.id, stale, missing)
            self._checked.add(ws.id)

    def _repair(
        self,
        workspace_id: str,
        stale: Iterable[str],
        missing: dict[str, tuple[str, dict[str, Any]]],
    ) -> None:
        """Drop rows Chroma no longer has; add rows for visible chunks that have none."""
        rows = [
            _row(workspace_id, cid, str(meta.get("doc_id", "")), keyword_columns(text))
            for cid, (text, meta) in missing.items()
        ]
        with self._conn() as conn:
            conn.executemany(
                "DELETE FROM bm25_chunks WHERE workspace_id = ? AND chunk_id = ?",
                [(workspace_id, cid) for cid in stale],
            )
            conn.executemany(ROW_UPSERT, rows)
            self._bump(conn, workspace_id)

    def backfill_words(self, workspaces: Sequence[Workspace], store: VectorStore) -> int:
        """Fill the ``words`` column of rows written before it, from the chunks' texts in
        Chroma; returns the rows filled.

        Bounded and resumable: ``BACKFILL_BATCH`` rows per transaction, each written only if
        still empty (an ingest meanwhile writes its own), so a crash leaves the rest for the
        next start and a second process doing the same at once changes nothing. Until a row
        is filled the soft match splits that chunk's text per query, as before the column.
        A failure (the Chroma server gone) is a warning, never a failed start. The index is
        rebuilt once per workspace afterwards, to pick the words up. Progress is logged at
        WARNING, so it shows on the terminal, like the collection migration."""
        known = {ws.id: ws for ws in workspaces}
        with self._conn() as conn:
            todo = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT workspace_id FROM bm25_chunks WHERE words IS NULL"
                )
            ]
        filled = 0
        for ws in (known[w] for w in todo if w in known):
            try:
                filled += self._backfill(ws, store)
            except Exception as exc:  # optional work: it must never stop the workbench starting
                why = store.unreachable(exc) or exc
                log.warning(
                    "%s: soft-match words not stored now (%s); the next start goes on", ws.id, why
                )
        return filled

    def _backfill(self, ws: Workspace, store: VectorStore) -> int:
        """One workspace's rows without words, a batch at a time in chunk id order. Only the
        chunks Chroma returns get words: a row whose chunk Chroma lacks is stale (``reconcile``
        drops it) and must not be marked as holding no words."""
        done, after = 0, ""
        while True:
            with self._conn() as conn:
                ids = [
                    r[0]
                    for r in conn.execute(
                        "SELECT chunk_id FROM bm25_chunks WHERE workspace_id = ?"
                        " AND words IS NULL AND chunk_id > ? ORDER BY chunk_id LIMIT ?",
                        (ws.id, after, BACKFILL_BATCH),
                    )
                ]
            if not ids:
                break
            after = ids[-1]
            texts = store.texts(ws.embed_model, ws.id, ids)
            found = [cid for cid in ids if cid in texts]
            with self._lock(ws.id), self._conn() as conn:
                conn.executemany(
                    "UPDATE bm25_chunks SET words = ?"
                    " WHERE workspace_id = ? AND chunk_id = ? AND words IS NULL",
                    [(chunk_words(texts[cid]), ws.id, cid) for cid in found],
                )
            if found:
                done += len(found)
                log.warning("%s: soft-match words stored for %d chunks", ws.id, done)
            kill_at("MASIS_TEST_KILL_BACKFILL_AT", done)
        if done:
            with self._lock(ws.id), self._conn() as conn:
                self._bump(conn, ws.id)
        return done

    def needs_check(self, workspace_id: str) -> bool:
        return workspace_id not in self._checked

    # -- the index --------------------------------------------------------------------
    def _dir(self, workspace_id: str) -> Path:
        return self.index_dir / workspace_id

    def index(self, workspace_id: str) -> KeywordIndex | None:
        """The workspace's index as of now (None: no rows), built or loaded when its version
        moved. A retrieval takes it once for all its variants: each call reads the version, a
        round trip in server mode."""
        version = self.version(workspace_id)
        with self._lock(workspace_id):
            built = self._built.get(workspace_id)
            if built is not None and built.version == version:
                return built
            with self._conn() as conn:
                rows = conn.execute(
                    "SELECT chunk_id, doc_id, tokens, words IS NOT NULL FROM bm25_chunks"
                    " WHERE workspace_id = ? ORDER BY chunk_id",
                    (workspace_id,),
                ).fetchall()
            if not rows:
                self._built.pop(workspace_id, None)
                return None
            built = self._from_disk(workspace_id, version, rows) or self._build(
                workspace_id, version, rows
            )
            self._built[workspace_id] = built
            return built

    def _from_disk(self, workspace_id: str, version: int, rows: list[Any]) -> KeywordIndex | None:
        path = self._dir(workspace_id) / f"v{version}"
        if not (path / "chunk_ids.json").exists():
            return None
        try:
            retriever = bm25s.BM25.load(str(path))
            chunk_ids = json.loads((path / "chunk_ids.json").read_text())
        except (OSError, ValueError) as exc:
            log.warning("keyword index at %s is unreadable (%s); rebuilding", path, exc)
            return None
        if chunk_ids != [r[0] for r in rows]:
            return None
        words = StoredWords.load(path, rows) or self._read_words(workspace_id, rows)
        return self._wrap(version, retriever, rows, words)

    def _read_words(self, workspace_id: str, rows: list[Any]) -> StoredWords:
        """The rows' soft-match words, read apart from the tokens: a saved index has them
        numbered already, and they are the larger half of a row
        (docs/measurements/performance.md). Rows changed between the two reads leave the words
        unused until the next version (the soft match splits texts meanwhile)."""
        with self._conn() as conn:
            found = conn.execute(
                "SELECT chunk_id, words FROM bm25_chunks WHERE workspace_id = ? ORDER BY chunk_id",
                (workspace_id,),
            ).fetchall()
        if [r[0] for r in found] != [r[0] for r in rows]:
            return StoredWords.of([None] * len(rows))
        return StoredWords.of([r[1] for r in found])

    def _build(self, workspace_id: str, version: int, rows: list[Any]) -> KeywordIndex:
        corpus = [r[2].split() for r in rows]
        retriever = bm25s.BM25()
        retriever.index(_as_tokenized(corpus), show_progress=False)
        words = self._read_words(workspace_id, rows)
        path = self._dir(workspace_id)
        target = path / f"v{version}"
        try:
            tmp = path / f".v{version}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            retriever.save(str(tmp))
            words.save(tmp)
            (tmp / "chunk_ids.json").write_text(json.dumps([r[0] for r in rows]))
            for old in path.glob("v*"):
                shutil.rmtree(old, ignore_errors=True)
            tmp.replace(target)
        except OSError as exc:  # a read-only or full disk costs only the cache
            log.warning("could not save the keyword index of %s: %s", workspace_id, exc)
        return self._wrap(version, retriever, rows, words)

    @staticmethod
    def _wrap(
        version: int, retriever: bm25s.BM25, rows: list[Any], words: StoredWords
    ) -> KeywordIndex:
        vocab = retriever.vocab_dict
        n_docs = len(rows)
        doc_freq: dict[str, int] = {}
        token_sets = []
        for r in rows:
            tokens = frozenset(r[2].split())
            token_sets.append(tokens)
            for t in tokens:
                doc_freq[t] = doc_freq.get(t, 0) + 1
        idf = {t: _idf(n_docs, df) for t, df in doc_freq.items() if t in vocab}
        chunk_ids = [r[0] for r in rows]
        return KeywordIndex(
            version,
            retriever,
            chunk_ids,
            np.array([r[1] for r in rows]),
            idf,
            token_sets,
            {cid: i for i, cid in enumerate(chunk_ids)},
            words,
        )

    def scores(self, workspace_id: str, query: str) -> KeywordScores | None:
        """The query's BM25 score for every chunk of the workspace (None: nothing to match)."""
        built = self.index(workspace_id)
        return built.scores(query) if built is not None else None

    def search(
        self, workspace_id: str, query: str, k: int, exclude_docs: Iterable[str] = ()
    ) -> list[KeywordHit]:
        scored = self.scores(workspace_id, query)
        return scored.top(k, exclude_docs) if scored else []


@dataclass
class KeywordScores:
    """One query's scores over one workspace's index."""

    built: KeywordIndex
    terms: list[str]
    values: np.ndarray
    unknown_weight: float = 0.0  # IDF weight of the query terms absent from the workspace
    _covered: dict[int, float] = field(default_factory=dict, repr=False)

    @cached_property
    def _weighted(self) -> tuple[list[tuple[str, float]], float]:
        """The terms with their IDF, and the query's whole weight (coverage's denominator)."""
        idf = self.built.idf
        total = sum(idf[t] for t in self.terms) + self.unknown_weight or 1.0
        return [(t, idf[t]) for t in self.terms], total

    def coverage(self, i: int) -> float:
        """Share of the query's IDF weight present in chunk ``i``: rare terms (codes, names)
        weigh most, so a chunk holding the one rare term of a query covers most of it.
        Kept per chunk: hybrid asks for a keyword hit's twice (its rank, then its pool)."""
        found = self._covered.get(i)
        if found is None:
            weighted, total = self._weighted
            tokens = self.built.token_sets[i]
            found = self._covered[i] = round(sum(w for t, w in weighted if t in tokens) / total, 4)
        return found

    def top(self, k: int, exclude_docs: Iterable[str] = ()) -> list[KeywordHit]:
        """Top-k chunks with a positive score; excluded documents are masked before ranking."""
        values = self.values
        excluded = list(exclude_docs)
        if excluded:
            values = np.where(np.isin(self.built.doc_ids, excluded), 0.0, values)
        k = min(k, len(values))
        if k <= 0:
            return []
        top = np.argpartition(-values, k - 1)[:k]
        top = top[np.argsort(-values[top], kind="stable")]
        return [
            KeywordHit(
                self.built.chunk_ids[i],
                str(self.built.doc_ids[i]),
                float(values[i]),
                rank,
                self.coverage(i),
            )
            for rank, i in enumerate((i for i in top if values[i] > 0), start=1)
        ]

    def of(self, chunk_ids: Iterable[str]) -> dict[str, tuple[float, float]]:
        """(score, coverage) of given chunks: fusion needs both sides' scores for every
        candidate, not only for the ones each side ranked itself."""
        position = self.built.position
        return {
            cid: (float(self.values[position[cid]]), self.coverage(position[cid]))
            for cid in chunk_ids
            if cid in position
        }


def keyword_columns(text: str) -> tuple[str, str]:
    """A chunk's keyword columns: its BM25 tokens and its soft-match words (``chunk_words``),
    from one split of the text into words."""
    split = _WORD.findall(lowered(text))
    return " ".join(_tokens(split)), _sorted_content(split)


def _row(
    workspace_id: str, chunk_id: str, doc_id: str, columns: tuple[str, str]
) -> tuple[str, ...]:
    """A chunk's keyword row (``ROW_UPSERT``), from its ``keyword_columns``."""
    return (workspace_id, chunk_id, doc_id, *columns)


def _idf(n_docs: int, doc_freq: int) -> float:
    """BM25's (Lucene) inverse document frequency."""
    return float(np.log(1 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5)))


def _as_tokenized(corpus: list[list[str]]) -> bm25s.tokenization.Tokenized:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in corpus]
    return bm25s.tokenization.Tokenized(ids=ids, vocab=vocab)
