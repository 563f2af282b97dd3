"""ChromaDB access: one cosine collection per workspace, the embedder recorded on it.

Chunks are written invisible (``visible: False``) and flipped to visible only when the whole
document is stored, so a half-ingested document never answers a query.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from masis_core.config import Settings
from masis_core.errors import EmbedderMismatch, StoreError
from masis_core.faults import kill_at

if TYPE_CHECKING:
    from masis_core.storage.registry import Workspace

log = logging.getLogger(__name__)
T = TypeVar("T")
# How far beyond k the unfiltered kNN reads, so that hidden or excluded chunks near the top
# rarely force the filtered query (see ``VectorStore.query_many``).
OVERFETCH = 20


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    text: str
    metadata: dict[str, Any]
    score: float  # cosine similarity = 1 - cosine distance
    # The stored (unit-length) vector, when the query asked for it (``query_many``).
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)


def collection_name(workspace_id: str) -> str:
    """The workspace's own collection. Chroma names allow [a-zA-Z0-9._-], 3-512 chars,
    alphanumeric at both ends; the hash suffix keeps the end alphanumeric and two ids that
    differ only in characters Chroma refuses apart."""
    safe = re.sub(r"[^a-zA-Z0-9._-]+", "-", workspace_id)
    digest = hashlib.sha256(workspace_id.encode()).hexdigest()[:8]
    return f"ws_{safe}_{digest}"


def legacy_collection_name(embed_model: str) -> str:
    """The collection all workspaces of one embedder shared before a collection per workspace
    (data dirs made before it are migrated by ``VectorStore.migrate_shared``)."""
    safe = re.sub(r"[^a-zA-Z0-9._-]+", "-", embed_model).strip("-._")
    return f"masis_{safe}"


def chunk_id(workspace_id: str, doc_id: str, index: int) -> str:
    """Stable across re-ingests; the workspace prefix names the chunk's collection."""
    return f"{workspace_id}/{doc_id}/{index:06d}"


def workspace_of(chunk_ids: Sequence[str]) -> str:
    """The one workspace a batch of chunk ids belongs to (see ``chunk_id``)."""
    found = {cid.split("/", 1)[0] for cid in chunk_ids}
    if len(found) != 1:
        raise StoreError(f"A write must stay inside one workspace; these ids span {sorted(found)}.")
    return found.pop()


def workspace_where(workspace_id: str, *extra: dict[str, Any]) -> dict[str, Any]:
    """The filter of the shared collections (migration, and the benchmark's baseline)."""
    clauses = [{"workspace_id": workspace_id}, *extra]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class VectorStore:
    def __init__(self, settings: Settings) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        self.server = (
            f"{settings.chroma_host}:{settings.chroma_port}" if settings.chroma_host else None
        )
        self._lock_path: Path | None = None
        if settings.chroma_host:
            self.client = chromadb.HttpClient(
                host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings
            )
        else:
            settings.chroma_dir.mkdir(parents=True, exist_ok=True)
            self._lock_path = settings.chroma_dir / ".masis-init.lock"
            with self._creation_lock():
                self.client = chromadb.PersistentClient(
                    path=str(settings.chroma_dir), settings=chroma_settings
                )
        self._collections: dict[str, Any] = {}
        self.batch_size = min(self.client.get_max_batch_size(), 2000)

    @contextmanager
    def _creation_lock(self) -> Iterator[None]:
        """Two processes creating the same embedded store (or collection) at once race in
        chromadb's own migrations ("table collections already exists"): take turns."""
        path = self._lock_path
        if path is None:  # a Chroma server serialises its own schema changes
            yield
            return
        with path.open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def unreachable(self, exc: Exception) -> StoreError | None:
        """A clear error when the Chroma *server* is gone (None: some other failure)."""
        names = {t.__name__ for t in type(exc).__mro__}
        if self.server and names & {
            "ConnectError",
            "ConnectionError",
            "RemoteProtocolError",
            "ReadError",
            "TransportError",
            "ConnectTimeout",
        }:
            return StoreError(
                f"The Chroma server at {self.server} is not answering ({type(exc).__name__}). "
                "Start it again (chroma run --host ... --port ... --path ...) and resume the run."
            )
        return None

    def collection(self, embed_model: str, workspace_id: str) -> Any:
        """The workspace's collection, created on first use with the embedder recorded on it."""
        name = collection_name(workspace_id)
        col = self._collections.get(name)
        if col is None:
            # embedding_function=None: chromadb's default would download an ONNX model.
            with self._creation_lock():
                col = self._get_or_create(name, embed_model, workspace_id)
            recorded = (col.metadata or {}).get("embed_model")
            if recorded != embed_model:
                raise EmbedderMismatch(
                    f"The vectors of workspace '{workspace_id}' were made with '{recorded}', "
                    f"not '{embed_model}'. Create a new workspace for another embedder."
                )
            self._collections[name] = col
        return col

    def _get_or_create(self, name: str, embed_model: str, workspace_id: str) -> Any:
        return self.client.get_or_create_collection(
            name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"embed_model": embed_model, "workspace_id": workspace_id},
        )

    def _on(self, embed_model: str, workspace_id: str, call: Callable[[Any], T]) -> T:
        """``call`` on the workspace's collection, once more on a fresh handle if another
        process dropped and recreated it meanwhile (a cached handle names the old one)."""
        from chromadb.errors import NotFoundError  # chromadb loads lazily, as in __init__

        try:
            return call(self.collection(embed_model, workspace_id))
        except NotFoundError:
            self._collections.pop(collection_name(workspace_id), None)
            return call(self.collection(embed_model, workspace_id))

    def add_chunks(
        self,
        embed_model: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Written invisible into the collection of the workspace the ids name."""
        if not ids:
            return
        batch = self.batch_size

        def write(col: Any) -> None:
            for start in range(0, len(ids), batch):
                end = start + batch
                col.upsert(
                    ids=list(ids[start:end]),
                    embeddings=embeddings[start:end],
                    documents=list(documents[start:end]),
                    metadatas=[{**m, "visible": False} for m in metadatas[start:end]],
                )

        self._on(embed_model, workspace_of(ids), write)

    def make_visible(self, embed_model: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        batch = self.batch_size

        def publish(col: Any) -> None:
            for start in range(0, len(ids), batch):
                part = list(ids[start : start + batch])
                col.update(ids=part, metadatas=[{"visible": True}] * len(part))

        self._on(embed_model, workspace_of(ids), publish)

    def update_metadata(
        self, embed_model: str, ids: Sequence[str], metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Merge these keys into the chunks' metadata (a version's publish: who is visible,
        which document and version a shared chunk now belongs to), in as few calls as the
        store's batch allows: one for a document of up to 2,000 chunks."""
        if not ids:
            return
        batch = self.batch_size

        def update(col: Any) -> None:
            for start in range(0, len(ids), batch):
                end = start + batch
                col.update(ids=list(ids[start:end]), metadatas=list(metadatas[start:end]))

        self._on(embed_model, workspace_of(ids), update)

    def delete_ids(self, embed_model: str, workspace_id: str, ids: Sequence[str]) -> None:
        if ids:
            self._on(embed_model, workspace_id, lambda col: col.delete(ids=list(ids)))

    def rows(
        self, embed_model: str, workspace_id: str, ids: Sequence[str], *, embeddings: bool = False
    ) -> dict[str, tuple[str, dict[str, Any], np.ndarray]]:
        """Chunks by id, visible or not, with their stored vectors when asked (a version's
        chunks: an older version's are hidden from retrieval but still read)."""
        if not ids:
            return {}
        include = ["documents", "metadatas", *(["embeddings"] if embeddings else [])]
        got = self._on(
            embed_model, workspace_id, lambda col: col.get(ids=list(ids), include=include)
        )
        vectors = got["embeddings"] if embeddings else [None] * len(got["ids"])
        return {
            i: (d or "", dict(m or {}), np.asarray(e if e is not None else (), dtype=np.float32))
            for i, d, m, e in zip(
                got["ids"], got["documents"], got["metadatas"], vectors, strict=True
            )
        }

    def delete_document(self, embed_model: str, workspace_id: str, doc_id: str) -> None:
        self._on(embed_model, workspace_id, lambda col: col.delete(where={"doc_id": doc_id}))

    def delete_workspace(self, embed_model: str, workspace_id: str) -> None:
        """Drop the workspace's collection (its vectors, documents and HNSW files)."""
        from chromadb.errors import NotFoundError

        name = collection_name(workspace_id)
        self._collections.pop(name, None)
        # NotFoundError: never written, or dropped by another process.
        with self._creation_lock(), suppress(NotFoundError):
            self.client.delete_collection(name)

    def count(self, embed_model: str, workspace_id: str, *, visible_only: bool = True) -> int:
        if not visible_only:
            return int(self._on(embed_model, workspace_id, lambda col: col.count()))
        return len(self.visible_ids(embed_model, workspace_id))

    def get_chunks(
        self, embed_model: str, workspace_id: str, ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any]]]:
        """Visible chunks by id, looked up in the workspace's own collection (an id alone
        never reaches another workspace's text)."""
        got = self.get_with_embeddings(embed_model, workspace_id, ids, embeddings=False)
        return {i: (text, meta) for i, (text, meta, _) in got.items()}

    def get_with_embeddings(
        self, embed_model: str, workspace_id: str, ids: Sequence[str], *, embeddings: bool = True
    ) -> dict[str, tuple[str, dict[str, Any], np.ndarray]]:
        """Visible chunks by id with their stored (unit-length) embeddings.

        A ``get`` by ids alone is a lookup, while ids plus a ``where`` scans the whole filter
        (docs/measurements/performance.md): visibility is checked on the returned rows instead.
        """
        got = self.rows(embed_model, workspace_id, ids, embeddings=embeddings)
        return {i: row for i, row in got.items() if row[1].get("visible") is True}

    def document_chunks(
        self, embed_model: str, workspace_id: str, doc_id: str
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """A document's visible chunks (id, text, metadata), from the workspace's own
        collection: a table read whole (``answers.aggregate``)."""
        got = self._on(
            embed_model,
            workspace_id,
            lambda col: col.get(where={"doc_id": doc_id}, include=["documents", "metadatas"]),
        )
        return [
            (i, d or "", dict(m))
            for i, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
            if m and m.get("visible") is True
        ]

    def texts(self, embed_model: str, workspace_id: str, ids: Sequence[str]) -> dict[str, str]:
        """The chunks' texts by id, visible or not (the keyword rows' backfill: a document
        still being ingested has rows too)."""
        got = self._on(
            embed_model, workspace_id, lambda col: col.get(ids=list(ids), include=["documents"])
        )
        return {i: d or "" for i, d in zip(got["ids"], got["documents"], strict=True)}

    def visible_ids(self, embed_model: str, workspace_id: str) -> set[str]:
        got = self._on(
            embed_model, workspace_id, lambda col: col.get(where={"visible": True}, include=[])
        )
        return set(got["ids"])

    def query(
        self,
        embed_model: str,
        workspace_id: str,
        query_embedding: np.ndarray,
        k: int,
        exclude_docs: Sequence[str] = (),
    ) -> list[Hit]:
        """Top-k visible chunks of one workspace."""
        return self.query_many(embed_model, workspace_id, [query_embedding], k, exclude_docs)[0][0]

    def query_many(
        self,
        embed_model: str,
        workspace_id: str,
        query_embeddings: Sequence[np.ndarray],
        k: int,
        exclude_docs: Sequence[str] = (),
        *,
        embeddings: bool = False,
        also: Sequence[str] = (),
    ) -> tuple[list[list[Hit]], dict[str, tuple[str, dict[str, Any], np.ndarray]]]:
        """Top-k per query vector, from one unfiltered kNN call on the workspace's collection,
        and the visible rows of the chunks ``also`` names (hybrid's keyword candidates) read
        in the same call as the hits' (one call is cheaper than two: bench/retrieval_latency.py's
        store, docs/measurements/performance.md).

        Any ``where`` makes Chroma evaluate the metadata filter over the whole collection first,
        which cost far more than the kNN (docs/measurements/performance.md). So
        the kNN runs unfiltered, ``OVERFETCH`` deep beyond k, and the hidden (still ingesting) or
        excluded chunks are dropped from its answer. That is exact whenever k chunks survive; a
        variant for which fewer do, while the list was full, is asked again with the filter inside
        Chroma — the rare case of a large document mid-ingest that outranks everything else.

        The kNN returns ids and distances only, and the rows (text, metadata and, with
        ``embeddings``, the stored vector) are read by id for the first k of each list
        together, further down a list only when some of its first k are dropped. Reading the
        rows is what a Chroma query costs, several times the distances alone
        (bench/retrieval_latency.py, docs/measurements/performance.md); the variants' lists
        overlap, and the overfetched tail is rarely needed.
        """
        k = max(1, k)
        excluded = set(exclude_docs)
        depth = k + OVERFETCH + (k if excluded else 0)
        vectors = [np.asarray(v, dtype=np.float32) for v in query_embeddings]
        ranked = self._nearest(embed_model, workspace_id, vectors, depth)
        rows = _Rows(
            lambda ids: self.get_with_embeddings(
                embed_model, workspace_id, ids, embeddings=embeddings
            ),
            excluded,
        )
        rows.fetch([*(cid for ranking in ranked for cid, _ in ranking[:k]), *also])
        out: list[list[Hit]] = []
        retry: list[int] = []
        for i, ranking in enumerate(ranked):
            shown = rows.kept(ranking[:k])
            if len(shown) < k:  # some of the first k are hidden or excluded: read on
                rows.fetch(cid for cid, _ in ranking[k:])
                shown = rows.kept(ranking)
                if len(shown) < k and len(ranking) == depth:
                    retry.append(i)
            out.append(rows.hits(shown[:k], embeddings))
        if retry:
            again = self._query_filtered(
                embed_model, workspace_id, [vectors[i] for i in retry], k, excluded, embeddings
            )
            for i, hits in zip(retry, again, strict=True):
                out[i] = hits
        return out, {cid: rows.rows[cid] for cid in also if cid in rows.rows}

    def _query_filtered(
        self,
        embed_model: str,
        workspace_id: str,
        vectors: list[np.ndarray],
        k: int,
        excluded: set[str],
        embeddings: bool,
    ) -> list[list[Hit]]:
        """Top-k of visible, not excluded chunks with the filter inside Chroma: slow on a
        large collection, so only for variants the unfiltered kNN could not fill."""
        where: dict[str, Any] = {"visible": True}
        if excluded:
            where = {"$and": [where, {"doc_id": {"$nin": sorted(excluded)}}]}
        include = ["documents", "metadatas", "distances", *(["embeddings"] * embeddings)]
        res = self._query(embed_model, workspace_id, vectors, k, where, include)
        return _hits(res, embeddings)

    def _query(
        self,
        embed_model: str,
        workspace_id: str,
        vectors: list[np.ndarray],
        n: int,
        where: dict[str, Any] | None,
        include: list[str],
    ) -> Any:
        try:
            return self._on(
                embed_model,
                workspace_id,
                lambda col: col.query(
                    query_embeddings=vectors, n_results=n, where=where, include=include
                ),
            )
        except StoreError:
            raise
        except Exception as exc:  # chromadb raises several unrelated types
            if "dimension" in str(exc).lower():
                raise StoreError(
                    f"The query vector does not fit the '{embed_model}' collection: {exc}"
                ) from exc
            raise

    def _nearest(
        self, embed_model: str, workspace_id: str, vectors: list[np.ndarray], n: int
    ) -> list[list[tuple[str, float]]]:
        """Per vector, the n nearest chunk ids with their cosine similarity, unfiltered."""
        res = self._query(embed_model, workspace_id, vectors, n, None, ["distances"])
        return [
            [(cid, round(1.0 - float(dist), 6)) for cid, dist in zip(ids, dists, strict=True)]
            for ids, dists in zip(res["ids"], res["distances"], strict=True)
        ]

    # -- migration from the shared collections -----------------------------------------
    def migrate_shared(self, workspaces: Sequence[Workspace]) -> int:
        """Move every workspace's chunks out of the per-embedder collections that data dirs
        made before a collection per workspace hold; returns the chunks moved.

        Crash-safe by construction: chunks are *copied*, each workspace into a staging
        collection that takes the workspace's name only once complete, and a shared
        collection is dropped only after all of its workspaces are copied. A SIGKILL at any
        point leaves the shared collection whole; the next start drops a half-made staging
        collection, copies again and ends with the same store (tests/test_store_migration.py).
        Chunks of workspaces the registry no longer knows are dropped with it. Progress is
        logged at WARNING, so it shows on the terminal of the CLI and of ``streamlit run``.
        """
        with self._creation_lock():
            legacy = {
                c.name: c for c in self.client.list_collections() if c.name.startswith("masis_")
            }
            moved = 0
            for name, shared in sorted(legacy.items()):
                total = shared.count()
                owners = [w for w in workspaces if legacy_collection_name(w.embed_model) == name]
                log.warning("migrating %s (%d chunks) to a collection per workspace", name, total)
                for ws in owners:
                    moved += self._copy_workspace(shared, ws, moved, total)
                if moved < total:
                    log.warning(
                        "%s: %d chunks belonged to no known workspace; dropped with it",
                        name,
                        total - moved,
                    )
                self.client.delete_collection(name)
                log.warning("migrated %s: %d chunks in %d workspaces", name, moved, len(owners))
            return moved

    def _copy_workspace(self, shared: Any, ws: Workspace, done: int, total: int) -> int:
        """Copy into a staging collection, renamed to the workspace's only when complete.

        Chroma does not survive re-writing a collection whose writer was SIGKILLed (its
        vectors then fail to read: "Error finding id"), so a leftover staging collection is
        dropped and the copy starts over; a workspace whose collection exists is done.
        """
        from chromadb.errors import NotFoundError

        final = collection_name(ws.id)
        with suppress(NotFoundError):
            return int(self.client.get_collection(final).count())
        staging = f"migrating_{final}"
        with suppress(NotFoundError):
            self.client.delete_collection(staging)
        target = self._get_or_create(staging, ws.embed_model, ws.id)
        copied = 0
        while True:
            page = shared.get(
                where={"workspace_id": ws.id},
                limit=self.batch_size,
                offset=copied,
                include=["embeddings", "documents", "metadatas"],
            )
            if not page["ids"]:
                break
            target.add(
                ids=page["ids"],
                embeddings=page["embeddings"],
                documents=page["documents"],
                metadatas=page["metadatas"],
            )
            copied += len(page["ids"])
            log.warning("  %s: %d/%d chunks copied", ws.id, done + copied, total)
            kill_at("MASIS_TEST_KILL_MIGRATION_AT", copied)
        target.modify(name=final)
        return copied


Row = tuple[str, dict[str, Any], np.ndarray]


class _Rows:
    """The rows one ``query_many`` call has read, by chunk id: each id is read once, in
    batches, and a ranking keeps only its visible, not excluded chunks."""

    def __init__(self, read: Callable[[list[str]], dict[str, Row]], excluded: set[str]) -> None:
        self._read_rows = read
        self.excluded = excluded
        self.rows: dict[str, Row] = {}
        self.read: set[str] = set()

    def fetch(self, ids: Iterable[str]) -> None:
        new = [cid for cid in dict.fromkeys(ids) if cid not in self.read]
        if new:
            self.read.update(new)
            self.rows.update(self._read_rows(new))

    def kept(self, ranking: list[tuple[str, float]]) -> list[tuple[str, float]]:
        return [
            (cid, score)
            for cid, score in ranking
            if cid in self.rows and self.rows[cid][1].get("doc_id") not in self.excluded
        ]

    def hits(self, shown: list[tuple[str, float]], embeddings: bool) -> list[Hit]:
        rows = self.rows
        return [
            Hit(cid, rows[cid][0], rows[cid][1], score, rows[cid][2] if embeddings else None)
            for cid, score in shown
        ]


def _hits(res: Any, embeddings: bool) -> list[list[Hit]]:
    """A Chroma query's answer as hits, per query vector."""
    vectors_of = res["embeddings"] if embeddings else [[None] * len(i) for i in res["ids"]]
    return [
        [
            Hit(
                cid,
                doc or "",
                dict(meta or {}),
                round(1.0 - float(dist), 6),
                None if vec is None else np.asarray(vec, dtype=np.float32),
            )
            for cid, doc, meta, dist, vec in zip(ids, docs, metas, dists, vecs, strict=True)
        ]
        for ids, docs, metas, dists, vecs in zip(
            res["ids"],
            res["documents"],
            res["metadatas"],
            res["distances"],
            vectors_of,
            strict=True,
        )
    ]
