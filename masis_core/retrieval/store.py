"""ChromaDB access: one cosine collection per embedding model, workspace filter in every query.

Chunks are written invisible (``visible: False``) and flipped to visible only when the whole
document is stored, so a half-ingested document never answers a query.
"""

from __future__ import annotations

import fcntl
import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from masis_core.config import Settings
from masis_core.errors import StoreError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    text: str
    metadata: dict[str, Any]
    score: float  # cosine similarity = 1 - cosine distance


def collection_name(embed_model: str) -> str:
    """Chroma names allow [a-zA-Z0-9._-], 3-512 chars, alphanumeric at both ends."""
    safe = re.sub(r"[^a-zA-Z0-9._-]+", "-", embed_model).strip("-._")
    return f"masis_{safe}"


def chunk_id(workspace_id: str, doc_id: str, index: int) -> str:
    """Stable across re-ingests and unique in a collection shared by workspaces."""
    return f"{workspace_id}/{doc_id}/{index:06d}"


def workspace_where(workspace_id: str, *extra: dict[str, Any]) -> dict[str, Any]:
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

    def collection(self, embed_model: str) -> Any:
        name = collection_name(embed_model)
        if name not in self._collections:
            # embedding_function=None: chromadb's default would download an ONNX model.
            with self._creation_lock():
                self._collections[name] = self._get_or_create(name, embed_model)
        return self._collections[name]

    def _get_or_create(self, name: str, embed_model: str) -> Any:
        return self.client.get_or_create_collection(
            name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"embed_model": embed_model},
        )

    def add_chunks(
        self,
        embed_model: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        col = self.collection(embed_model)
        for start in range(0, len(ids), self.batch_size):
            end = start + self.batch_size
            col.upsert(
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                documents=list(documents[start:end]),
                metadatas=[{**m, "visible": False} for m in metadatas[start:end]],
            )

    def make_visible(self, embed_model: str, ids: Sequence[str]) -> None:
        col = self.collection(embed_model)
        for start in range(0, len(ids), self.batch_size):
            batch = list(ids[start : start + self.batch_size])
            col.update(ids=batch, metadatas=[{"visible": True}] * len(batch))

    def delete_document(self, embed_model: str, workspace_id: str, doc_id: str) -> None:
        col = self.collection(embed_model)
        col.delete(where=workspace_where(workspace_id, {"doc_id": doc_id}))

    def delete_workspace(self, embed_model: str, workspace_id: str) -> None:
        self.collection(embed_model).delete(where=workspace_where(workspace_id))

    def count(self, embed_model: str, workspace_id: str, *, visible_only: bool = True) -> int:
        extra = [{"visible": True}] if visible_only else []
        got = self.collection(embed_model).get(
            where=workspace_where(workspace_id, *extra), include=[]
        )
        return len(got["ids"])

    def get_chunks(
        self, embed_model: str, workspace_id: str, ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any]]]:
        """Fetch chunks by id, still inside the workspace (an id alone is never trusted)."""
        if not ids:
            return {}
        got = self.collection(embed_model).get(
            ids=list(ids),
            where=workspace_where(workspace_id, {"visible": True}),
            include=["documents", "metadatas"],
        )
        return {
            i: (d or "", dict(m or {}))
            for i, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }

    def get_with_embeddings(
        self, embed_model: str, workspace_id: str, ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any], np.ndarray]]:
        """Chunks by id with their stored (unit-length) embeddings, for ids that a
        workspace-filtered search produced.

        Chroma's ``get`` with both ids and a ``where`` scans the whole filter (70 ms on 5,000
        chunks); by ids alone it is a lookup. The workspace and visibility are still checked on
        every returned row, so an id from elsewhere never yields another workspace's text.
        """
        if not ids:
            return {}
        got = self.collection(embed_model).get(
            ids=list(ids), include=["documents", "metadatas", "embeddings"]
        )
        return {
            i: (d or "", dict(m), np.asarray(e, dtype=np.float32))
            for i, d, m, e in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
            )
            if m and m.get("workspace_id") == workspace_id and m.get("visible") is True
        }

    def visible_ids(self, embed_model: str, workspace_id: str) -> set[str]:
        got = self.collection(embed_model).get(
            where=workspace_where(workspace_id, {"visible": True}), include=[]
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
        """Top-k visible chunks of one workspace; the filters run inside Chroma."""
        return self.query_many(embed_model, workspace_id, [query_embedding], k, exclude_docs)[0]

    def query_many(
        self,
        embed_model: str,
        workspace_id: str,
        query_embeddings: Sequence[np.ndarray],
        k: int,
        exclude_docs: Sequence[str] = (),
    ) -> list[list[Hit]]:
        """Top-k per query vector, in one Chroma call: the metadata filter, which costs far
        more than the kNN itself, is then evaluated once for all the query variants."""
        col = self.collection(embed_model)
        extra: list[dict[str, Any]] = [{"visible": True}]
        if exclude_docs:
            extra.append({"doc_id": {"$nin": list(exclude_docs)}})
        try:
            res = col.query(
                query_embeddings=[np.asarray(v, dtype=np.float32) for v in query_embeddings],
                n_results=max(1, k),
                where=workspace_where(workspace_id, *extra),
                include=["documents", "metadatas", "distances"],
            )
        except Exception as exc:  # chromadb raises several unrelated types
            if "dimension" in str(exc).lower():
                raise StoreError(
                    f"The query vector does not fit the '{embed_model}' collection: {exc}"
                ) from exc
            raise
        return [
            [
                Hit(cid, doc or "", dict(meta or {}), round(1.0 - float(dist), 6))
                for cid, doc, meta, dist in zip(ids, docs, metas, dists, strict=True)
            ]
            for ids, docs, metas, dists in zip(
                res["ids"], res["documents"], res["metadatas"], res["distances"], strict=True
            )
        ]
