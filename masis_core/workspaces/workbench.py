"""The long-lived parts (registry, vector store, embedders) and the workspace operations.

The UI builds one ``Workbench`` through ``st.cache_resource``; the command lines build one per
process. Nothing here holds per-request state.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from masis_core.answers.providers import ProviderStatus, resolve_provider
from masis_core.config import Settings, get_settings
from masis_core.errors import EmbedderMismatch, ProviderUnavailable, WorkspaceError
from masis_core.llm.embeddings import (
    WORDLLAMA,
    Embedder,
    canonical_name,
    get_embedder,
    resolve_embedder_name,
)
from masis_core.llm.ollama import OllamaStatus, probe
from masis_core.retrieval.bm25 import Bm25Store
from masis_core.retrieval.hybrid import WorkspaceIndex
from masis_core.retrieval.softmatch import ChunkWords, WordVectors
from masis_core.retrieval.store import VectorStore
from masis_core.storage.accounts import Accounts
from masis_core.storage.db import Connection, open_database
from masis_core.storage.owners import HOST, owner_alive
from masis_core.storage.registry import Document, Registry, Scope, Workspace, slugify

log = logging.getLogger(__name__)


def part_abandoned(part: Path, older_than: float) -> bool:
    """Whether a partial original (see ``Workbench.keep_file``) lost its writer: the pid in
    its name is not running here, or it was last written before ``older_than`` (a timestamp;
    this also retires names without a pid, and pids reused since)."""
    fields = part.name.split(".")
    if len(fields) == 4 and fields[1].isdigit() and not owner_alive(f"{HOST}:{fields[1]}"):
        return True
    try:
        return part.stat().st_mtime < older_than
    except FileNotFoundError:  # renamed into place meanwhile
        return False


def single_threaded_blas() -> None:
    """One BLAS thread per process, unless the operator chose a count (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS).

    The products here are small (a pool's word vectors against a query's, a pool's chunk
    vectors against the query vector) and come from several worker threads at once. OpenBLAS
    splits each over all cores anyway, and on a busy 2-core machine its threads wait for one
    another: such a product, and a hybrid retrieval, were many times slower with two threads
    than with one (docs/measurements/performance.md, retrieval latency). Nothing in the
    workbench multiplies matrices large enough to gain from more threads (WordLlama pools with
    sums, Chroma's search is native code of its own)."""
    if os.environ.keys() & {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


class Workbench:
    def __init__(self, settings: Settings | None = None) -> None:
        single_threaded_blas()
        self.settings = settings or get_settings()
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.db = open_database(self.settings)
        self.registry = Registry(self.db)
        self.store = VectorStore(self.settings)
        workspaces = self.registry.list_workspaces()
        # Data dirs from before a collection per workspace move over once, on first start.
        self.store.migrate_shared(workspaces)
        self.bm25 = Bm25Store(self.db, self.settings.data_dir / "bm25")
        # Keyword rows from before the soft match's stored words get them, once, on start.
        self.bm25.backfill_words(workspaces, self.store)
        self._embedders: dict[str, Embedder] = {}
        self._lock = threading.Lock()
        # WordLlama's word vectors serve the soft keyword match whatever the workspace's
        # embedder: they are bundled, and one table keeps the signal's scale the same.
        self.word_vectors = WordVectors(
            lambda words: self.embedder(WORDLLAMA).embed_documents(words)
        )
        self.chunk_words = ChunkWords(self.word_vectors)
        self._accounts: Accounts | None = None

    @property
    def accounts(self) -> Accounts:
        """Accounts, members, sessions and the audit log (used when MASIS_AUTH is not
        ``none``), with the settings' session life and sign-in limits."""
        if self._accounts is None:
            s = self.settings
            self._accounts = Accounts(
                self.db,
                session_s=s.session_hours * 3600,
                max_failures=s.signin_max_failures,
                max_failures_address=s.signin_max_failures_address,
                window_s=s.signin_window_s,
            )
        return self._accounts

    # -- providers ----------------------------------------------------------------------
    def provider_status(self, status: OllamaStatus | None = None) -> ProviderStatus:
        return resolve_provider(self.settings, status)

    def web_status(self) -> tuple[bool, str]:
        """Whether web search can run, and the sentence the UI and CLI show when it cannot."""
        if self.settings.tavily_api_key is None:
            return False, (
                "Web search needs a Tavily API key: set TAVILY_API_KEY and restart the workbench."
            )
        return True, "Web search through Tavily is available."

    def embedder(self, name: str) -> Embedder:
        name = canonical_name(name)
        with self._lock:
            if name not in self._embedders:
                self._embedders[name] = get_embedder(name, self.settings)
            return self._embedders[name]

    def default_embedder_name(self, status: OllamaStatus | None = None) -> str:
        return resolve_embedder_name(self.settings.embed_model, self.settings, status)

    # -- workspaces ---------------------------------------------------------------------
    def create_workspace(
        self,
        name: str,
        embedder: str = "auto",
        then: Callable[[Connection, str], None] | None = None,
        scope: Scope | None = None,
    ) -> Workspace:
        """A new workspace. An Ollama embedder must answer first: the embedder is fixed at
        creation, so a workspace made with a mistyped or absent model could never be
        written to, nor be made again under its name."""
        self.registry.new_workspace_id(name, scope)  # a bad or taken name is said first
        choice = canonical_name(embedder)
        wanted = self.settings.embed_model if choice == "auto" else choice
        # One look at Ollama serves both questions: which model "auto" means, and whether
        # Ollama has it (two probes had doubled the wait when Ollama is slow).
        status = None
        if canonical_name(wanted) == "auto" and self.settings.provider != "offline":
            status = probe(self.settings.ollama_host)
        model = resolve_embedder_name(wanted, self.settings, status)
        if model.startswith("ollama:"):
            why = (status or probe(self.settings.ollama_host)).why_not(model.split(":", 1)[1])
            if why:
                raise ProviderUnavailable(
                    f"The workspace was not created: {why} Or choose the bundled "
                    f"'{WORDLLAMA}' embedder, which needs nothing."
                )
        return self.registry.create_workspace(name, model, then, scope)

    def open_workspace(self, ws_id: str, embedder: str = "auto", *, create: bool) -> Workspace:
        """The workspace, created when asked; an explicit embedder must match the recorded one."""
        ws = self.registry.get_workspace(ws_id)
        if ws is None:
            if not create:
                return self.registry.require_workspace(ws_id)
            if slugify(ws_id) != ws_id:  # an id names, it is not a name to make one from
                raise WorkspaceError(
                    f"'{ws_id}' is not a workspace id: use lower-case letters, digits, '-' "
                    f"or '_'" + (f" (e.g. '{slugify(ws_id)}')." if slugify(ws_id) else ".")
                )
            return self.create_workspace(ws_id, embedder)
        choice = canonical_name(embedder)
        if choice not in ("auto", ws.embed_model):
            raise EmbedderMismatch(
                f"Workspace '{ws.id}' was created with the embedder '{ws.embed_model}'; "
                f"it cannot be written or queried with '{choice}'. "
                "Create a new workspace for another embedder."
            )
        return ws

    def keyword_index(self, ws_id: str) -> Bm25Store:
        """The BM25 side, checked against Chroma once per process and workspace.

        Chroma is the source of truth: rows whose chunks are gone are dropped, visible chunks
        without rows get them. Rows of documents still being ingested are left alone (their
        chunks are not visible yet, and become so only after their rows are written). The
        repair itself, and why it cannot drop a document that turns visible meanwhile, is
        ``Bm25Store.reconcile``.
        """
        if self.bm25.needs_check(ws_id):
            self.bm25.reconcile(self.registry.require_workspace(ws_id), self.store, self.registry)
        return self.bm25

    def workspaces(self) -> list[Workspace]:
        return self.registry.list_workspaces()

    def index(self, ws_id: str, embed_model: str) -> WorkspaceIndex:
        """What retrieval reads for a workspace, its keyword side checked first."""
        return WorkspaceIndex(
            ws_id,
            embed_model,
            self.store,
            self.keyword_index(ws_id),
            self.embedder(embed_model),
            self.chunk_words,
        )

    def delete_workspace(
        self, ws_id: str, then: Callable[[Connection], None] | None = None
    ) -> None:
        """``then(conn)``: written in the transaction that deletes the row (its audit)."""
        ws = self.registry.require_workspace(ws_id)
        docs = self.registry.list_documents(ws.id, status=None)
        self.store.delete_workspace(ws.embed_model, ws.id)
        self.bm25.delete_workspace(ws.id)
        self.registry.delete_workspace(ws.id, then)
        for doc in docs:
            self.release_file(doc.doc_id)

    def delete_document(
        self, ws_id: str, doc_id: str, then: Callable[[Connection], None] | None = None
    ) -> None:
        """``then(conn)``: written in the transaction that deletes the row (its audit)."""
        ws = self.registry.require_workspace(ws_id)
        self.store.delete_document(ws.embed_model, ws.id, doc_id)
        self.bm25.delete_document(ws.id, doc_id)
        self.registry.forget_document(ws.id, doc_id, then)
        self.release_file(doc_id)

    def documents(self, ws_id: str) -> list[Document]:
        return self.registry.list_documents(ws_id)

    # -- stored originals ---------------------------------------------------------------
    def file_path(self, doc_id: str) -> Path:
        """Originals are named by their hash; the uploaded name is never part of a path."""
        if len(doc_id) != 64 or any(c not in "0123456789abcdef" for c in doc_id):
            raise ValueError("doc_id must be a sha256 hex digest")
        return self.settings.files_dir / doc_id[:2] / doc_id

    def keep_file(self, doc_id: str, data: bytes) -> Path:
        """Store the original under its hash. Each writer has its own partial file
        (``<doc_id>.<pid>.<random>.part``): the same bytes may be kept by two workspaces, or the
        UI and the CLI, at once; both renames then put identical bytes in place."""
        path = self.file_path(doc_id)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                suffix=".part", prefix=f"{doc_id}.{os.getpid()}.", dir=path.parent
            )
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return path

    def release_file(self, doc_id: str) -> None:
        """Remove the stored original once no workspace holds the document."""
        if self.registry.document_refcount(doc_id) == 0:
            self.file_path(doc_id).unlink(missing_ok=True)
