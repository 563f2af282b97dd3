"""Workspaces and their documents, in the database beside the runs and graph checkpoints."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from masis_core.errors import DuplicateRow, WorkspaceError
from masis_core.storage.db import Connection, Database

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")

# Document lifecycle: a row is 'ingesting' while chunks are written and becomes 'ready' only
# after all of them are stored and marked visible. Rows never stay 'failed': a failure removes
# the row and every chunk it wrote.
INGESTING = "ingesting"
READY = "ready"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", name.strip().lower()).strip("-_")
    return slug[:63]


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    embed_model: str
    created_at: str


@dataclass(frozen=True)
class Document:
    workspace_id: str
    doc_id: str
    filename: str
    pages: int
    chunks: int
    empty_pages: list[int]
    size_bytes: int
    status: str
    created_at: str
    owner: str = ""
    ocr_pages: list[int] = field(default_factory=list)  # read by OCR from the page image
    extent: str = ""  # what a document without pages holds: "1 sheet, 118 rows"


@dataclass(frozen=True)
class Scope:
    """Whose view a query answers: ``member`` an account that is no admin (only the
    workspaces it is a member of), None every workspace (an admin, the local user). The
    stores put it into the query itself (``visible``), so a caller cannot forget it."""

    member: str | None = None


def visible(column: str, scope: Scope | None) -> tuple[str, tuple[str, ...]]:
    """SQL (and its arguments) keeping the rows whose workspace, named by ``column``, exists
    and is the scope's to see: for an account, a row of ``memberships`` (gone with the
    workspace, ON DELETE CASCADE). No scope: every row (the internal callers' view)."""
    if scope is None:
        return "1 = 1", ()
    if scope.member is None:
        return f"EXISTS (SELECT 1 FROM workspaces vw WHERE vw.id = {column})", ()
    return (
        "EXISTS (SELECT 1 FROM memberships vm JOIN workspaces vw ON vw.id = vm.workspace_id"
        f" WHERE vm.workspace_id = {column} AND vm.account = ?)",
        (scope.member,),
    )


class Registry:
    """Workspaces and documents (in the same database as runs and checkpoints)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _conn(self) -> AbstractContextManager[Connection]:
        return self.db.connect()

    # -- workspaces ---------------------------------------------------------------------
    def new_workspace_id(self, name: str, scope: Scope | None = None) -> str:
        """The id a new workspace of that name gets; a name that makes none, or the id of a
        workspace that exists, is refused (before any slower check of the embedder). With a
        scope, names are the scope's own: a name another account's hidden workspace holds
        gets the next free id (``name-2``), as Grafana gives each dashboard its own uid,
        rather than "already exists" telling that a hidden one is there."""
        ws_id = slugify(name)
        if scope is not None and SLUG_RE.match(ws_id):
            ws_id = self._own_id(ws_id, scope)
        if not name.strip():
            raise WorkspaceError("Give the workspace a name.")
        if not SLUG_RE.match(ws_id):
            raise WorkspaceError(
                f"'{name}' has no ASCII letter or digit to make the workspace's id of: use "
                "letters a-z, digits, '-' or '_'."
            )
        if self.get_workspace(ws_id) is not None:
            raise WorkspaceError(f"A workspace '{ws_id}' already exists.")
        return ws_id

    def _own_id(self, ws_id: str, scope: Scope) -> str:
        """``ws_id``, or the first ``ws_id-N`` free, while the taken ones are hidden from
        ``scope`` (one the scope sees stays taken: "already exists")."""
        candidate, n = ws_id, 1
        while (
            self.get_workspace(candidate) is not None
            and self.get_workspace(candidate, scope) is None
        ):
            n += 1
            candidate = f"{ws_id}-{n}"
        return candidate

    def create_workspace(
        self,
        name: str,
        embed_model: str,
        then: Callable[[Connection, str], None] | None = None,
        scope: Scope | None = None,
    ) -> Workspace:
        """The workspace row; ``then(conn, ws_id)`` writes in the same transaction (its owner
        and its audit row: a crash between them had left a workspace owned by no one)."""
        ws_id = self.new_workspace_id(name, scope)
        ws = Workspace(ws_id, name.strip(), embed_model, now_iso())
        try:
            with self._conn() as conn:
                conn.execute(
                    "INSERT INTO workspaces (id, name, embed_model, created_at) VALUES (?,?,?,?)",
                    (ws.id, ws.name, ws.embed_model, ws.created_at),
                )
                if then is not None:
                    then(conn, ws.id)
        except DuplicateRow as exc:
            raise WorkspaceError(f"A workspace '{ws_id}' already exists.") from exc
        return ws

    def get_workspace(self, ws_id: str, scope: Scope | None = None) -> Workspace | None:
        """The workspace; with a scope, only when it is the scope's to see (None alike for
        one that does not exist and one that is hidden)."""
        where, args = visible("w.id", scope)
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT w.* FROM workspaces w WHERE w.id = ? AND {where}", (ws_id, *args)
            ).fetchone()
        return Workspace(**dict(row)) if row else None

    def require_workspace(self, ws_id: str) -> Workspace:
        ws = self.get_workspace(ws_id)
        if ws is None:
            raise WorkspaceError(f"There is no workspace '{ws_id}'.")
        return ws

    def list_workspaces(self, scope: Scope | None = None) -> list[Workspace]:
        """Every workspace, or with a scope those it may see."""
        where, args = visible("w.id", scope)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT w.* FROM workspaces w WHERE {where} ORDER BY w.created_at, w.id", args
            ).fetchall()
        return [Workspace(**dict(r)) for r in rows]

    def delete_workspace(
        self, ws_id: str, then: Callable[[Connection], None] | None = None
    ) -> None:
        """Delete the row; ``then(conn)`` (its audit row) in the same transaction."""
        with self._conn() as conn:
            conn.execute("DELETE FROM workspaces WHERE id = ?", (ws_id,))
            if then is not None:
                then(conn)

    # -- documents ----------------------------------------------------------------------
    def claim_document(
        self, ws_id: str, doc_id: str, filename: str, size_bytes: int, owner: str = ""
    ) -> bool:
        """Insert an 'ingesting' row; False when the document is already there (duplicate).

        ``owner`` ("host:pid") lets a later run tell a live ingest from one that was killed.
        """
        try:
            with self._conn() as conn:
                conn.execute(
                    "INSERT INTO documents (workspace_id, doc_id, filename, size_bytes, status,"
                    " created_at, owner) VALUES (?,?,?,?,?,?,?)",
                    (ws_id, doc_id, filename, size_bytes, INGESTING, now_iso(), owner),
                )
        except DuplicateRow:
            return False
        return True

    def mark_ready(
        self,
        ws_id: str,
        doc_id: str,
        pages: int,
        chunks: int,
        empty_pages: list[int],
        ocr_pages: tuple[int, ...] | list[int] = (),
        ocr_words: Mapping[int, Sequence[Sequence[Any]]] | None = None,
        extent: str = "",
        then: Callable[[Connection], None] | None = None,
    ) -> None:
        """The document answers queries from now on; ``ocr_words`` (page: the OCR engine's
        words and boxes) are kept for drawing its scanned pages' highlights. ``then(conn)``
        (its audit row: who added it) is written in the same transaction, so a crash leaves
        a document with its row or neither."""
        ocr = json.dumps(list(ocr_pages))
        with self._conn() as conn:
            conn.execute(
                "UPDATE documents SET status = ?, pages = ?, chunks = ?, empty_pages = ?,"
                " ocr_pages = ?, extent = ? WHERE workspace_id = ? AND doc_id = ?",
                (READY, pages, chunks, json.dumps(empty_pages), ocr, extent, ws_id, doc_id),
            )
            conn.executemany(
                "INSERT INTO ocr_words (workspace_id, doc_id, page, words) VALUES (?,?,?,?)",
                [
                    (ws_id, doc_id, page, json.dumps(words, ensure_ascii=False))
                    for page, words in (ocr_words or {}).items()
                ],
            )
            if then is not None:
                then(conn)

    def ocr_words(self, doc_id: str, first: int, last: int) -> dict[int, list[list[Any]]]:
        """The OCR engine's words (text, left, top, right, bottom as fractions of the page)
        on pages ``first``..``last`` of a document, from any workspace holding it (the same
        bytes read alike); pages read from their text layer have none."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT page, words FROM ocr_words WHERE doc_id = ? AND page BETWEEN ? AND ?"
                " ORDER BY workspace_id DESC",
                (doc_id, first, last),
            ).fetchall()
        return {int(r[0]): json.loads(r[1]) for r in rows}

    def forget_document(
        self, ws_id: str, doc_id: str, then: Callable[[Connection], None] | None = None
    ) -> None:
        """Delete the row; ``then(conn)`` (its audit row) in the same transaction."""
        with self._conn() as conn:
            conn.execute(
                "DELETE FROM documents WHERE workspace_id = ? AND doc_id = ?", (ws_id, doc_id)
            )
            if then is not None:
                then(conn)

    def get_document(self, ws_id: str, doc_id: str) -> Document | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT * FROM documents WHERE workspace_id = ? AND doc_id = ?", (ws_id, doc_id)
            ).fetchone()
        return _document(row) if row else None

    def list_documents(self, ws_id: str, status: str | None = READY) -> list[Document]:
        sql = "SELECT * FROM documents WHERE workspace_id = ?"
        args: tuple = (ws_id,)
        if status is not None:
            sql += " AND status = ?"
            args = (ws_id, status)
        with self._conn() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, filename", args).fetchall()
        return [_document(r) for r in rows]

    def document_refcount(self, doc_id: str) -> int:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM documents WHERE doc_id = ?", (doc_id,)
            ).fetchone()
        return int(row[0])

    def stale_documents(self) -> list[Document]:
        """Rows left 'ingesting' by a process that died mid-ingest."""
        with self._conn() as conn:
            rows = conn.execute("SELECT * FROM documents WHERE status = ?", (INGESTING,)).fetchall()
        return [_document(r) for r in rows]


def _document(row: Any) -> Document:
    data = dict(row)
    data["empty_pages"] = json.loads(data["empty_pages"])
    data["ocr_pages"] = json.loads(data["ocr_pages"])
    return Document(**data)
