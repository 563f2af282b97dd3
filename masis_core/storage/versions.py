"""Document versions and followed folders, in the database beside the registry.

A document that changes on disk keeps its versions. Each version is a document row of its own
bytes (``doc_id`` = their hash, as for any upload), so its stored file, its page previews and
its keyword rows work as before; ``lineage`` names the document across its versions (the
``doc_id`` of its first version). Only the current version's chunks are visible to retrieval;
a chunk whose text and place did not change is listed under both versions (``version_chunks``)
and stored once. The rows here are the sync's journal too: a version is written 'pending'
before its chunks are published, so a sync cut short is rolled back by the next one
(``ingest/sync.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from masis_core.errors import DuplicateRow, WorkspaceError
from masis_core.storage.db import Connection, Database
from masis_core.storage.registry import READY, now_iso

PENDING, CURRENT, SUPERSEDED, REMOVED = "pending", "current", "superseded", "removed"
# The status of a document row whose version is being published: not 'ingesting' (the stale
# sweep would delete its chunks by doc_id, and the chunks it shares with the version before
# carry its doc_id from the publish on), not 'ready' (listed and quoted).
PUBLISHING = "publishing"


@dataclass(frozen=True)
class Version:
    workspace_id: str
    lineage: str
    version: int
    doc_id: str
    filename: str
    seen_at: str
    pages: int
    chunks: int
    stored: int  # chunks this version added; the others are shared with the version before
    state: str

    @property
    def label(self) -> str:
        return f"v{self.version}"


@dataclass(frozen=True)
class Folder:
    workspace_id: str
    path: str
    added_by: str
    added_at: str
    every_minutes: int
    last_sync: str | None


@dataclass(frozen=True)
class SyncedFile:
    folder: str
    path: str
    lineage: str
    content_hash: str
    size_bytes: int


@dataclass(frozen=True)
class NewVersion:
    """What a sync records for a file: its document's version and where the file lies."""

    lineage: str
    version: int
    doc_id: str
    filename: str
    pages: int
    chunk_ids: Sequence[str]
    stored: int
    folder: str
    path: str
    size_bytes: int


class Versions:
    """Versions, followed folders, what each sync saw, and the per-workspace sync lock."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- followed folders ---------------------------------------------------------------
    def follow(self, ws_id: str, path: str, by: str) -> Folder:
        folder = Folder(ws_id, path, by, now_iso(), 0, None)
        try:
            with self.db.connect() as conn:
                conn.execute(
                    "INSERT INTO followed_folders (workspace_id, path, added_by, added_at)"
                    " VALUES (?,?,?,?)",
                    (ws_id, path, by, folder.added_at),
                )
        except DuplicateRow as exc:
            raise WorkspaceError(f"Workspace '{ws_id}' already follows {path}.") from exc
        return folder

    def unfollow(self, ws_id: str, path: str) -> bool:
        """Stop following; the documents stay in the workspace, no longer kept in step."""
        with self.db.connect() as conn:
            gone = conn.execute(
                "DELETE FROM followed_folders WHERE workspace_id = ? AND path = ?", (ws_id, path)
            ).rowcount
            conn.execute(
                "DELETE FROM synced_files WHERE workspace_id = ? AND folder = ?", (ws_id, path)
            )
        return gone > 0

    def folders(self, ws_id: str) -> list[Folder]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM followed_folders WHERE workspace_id = ? ORDER BY added_at, path",
                (ws_id,),
            ).fetchall()
        return [Folder(**dict(r)) for r in rows]

    def set_schedule(self, ws_id: str, path: str, every_minutes: int) -> None:
        """Sync every so many minutes (0: on demand only)."""
        with self.db.connect() as conn:
            conn.execute(
                "UPDATE followed_folders SET every_minutes = ? WHERE workspace_id = ? AND path = ?",
                (max(0, int(every_minutes)), ws_id, path),
            )

    def mark_synced(self, ws_id: str, paths: Iterable[str]) -> None:
        at = now_iso()
        with self.db.connect() as conn:
            conn.executemany(
                "UPDATE followed_folders SET last_sync = ? WHERE workspace_id = ? AND path = ?",
                [(at, ws_id, p) for p in paths],
            )

    def due(self, now: datetime | None = None) -> list[str]:
        """Workspaces with a folder whose schedule says it is time to sync."""
        now = now or datetime.now(UTC)
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT workspace_id, every_minutes, last_sync FROM followed_folders"
                " WHERE every_minutes > 0"
            ).fetchall()
        due = {
            r[0]
            for r in rows
            if r[2] is None or datetime.fromisoformat(r[2]) + timedelta(minutes=int(r[1])) <= now
        }
        return sorted(due)

    # -- the sync lock ------------------------------------------------------------------
    def lock(self, ws_id: str, owner: str) -> str | None:
        """Take the workspace's sync lock; None when taken, else the holder's owner tag."""
        try:
            with self.db.connect() as conn:
                conn.execute(
                    "INSERT INTO sync_locks (workspace_id, owner, started) VALUES (?,?,?)",
                    (ws_id, owner, now_iso()),
                )
        except DuplicateRow:
            row = self.db.read_one("SELECT owner FROM sync_locks WHERE workspace_id = ?", (ws_id,))
            return str(row[0]) if row else ""
        return None

    def take_over(self, ws_id: str, dead: str, owner: str) -> bool:
        """Take a lock from a holder that died (only if it still holds it)."""
        with self.db.connect() as conn:
            return (
                conn.execute(
                    "UPDATE sync_locks SET owner = ?, started = ? WHERE workspace_id = ?"
                    " AND owner = ?",
                    (owner, now_iso(), ws_id, dead),
                ).rowcount
                == 1
            )

    def unlock(self, ws_id: str, owner: str) -> None:
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM sync_locks WHERE workspace_id = ? AND owner = ?", (ws_id, owner)
            )

    # -- what the last sync saw ---------------------------------------------------------
    def synced_files(self, ws_id: str, folder: str) -> dict[str, SyncedFile]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT folder, path, lineage, content_hash, size_bytes FROM synced_files"
                " WHERE workspace_id = ? AND folder = ?",
                (ws_id, folder),
            ).fetchall()
        return {r[1]: SyncedFile(*tuple(r)) for r in rows}

    def paths_of(self, ws_id: str, lineage: str) -> list[tuple[str, str]]:
        """(folder, path) of every file that is this document (hard links, copies)."""
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT folder, path FROM synced_files WHERE workspace_id = ? AND lineage = ?",
                (ws_id, lineage),
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def see_file(self, ws_id: str, file: SyncedFile) -> None:
        """Record a file as the sync saw it (a duplicate path, a rename's new path)."""
        self.see_files(ws_id, [file])

    def see_files(self, ws_id: str, files: list[SyncedFile]) -> None:
        """Record files as the sync saw them, in one transaction."""
        with self.db.connect() as conn:
            for f in files:
                _see(conn, ws_id, f)

    def forget_file(self, ws_id: str, folder: str, path: str) -> None:
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM synced_files WHERE workspace_id = ? AND folder = ? AND path = ?",
                (ws_id, folder, path),
            )

    def forget_lineage(self, ws_id: str, lineage: str) -> None:
        """A deleted document's paths: the next sync finds a file still there as new."""
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM synced_files WHERE workspace_id = ? AND lineage = ?", (ws_id, lineage)
            )

    def rename(self, ws_id: str, old: SyncedFile, new: SyncedFile, filename: str) -> None:
        """A moved or renamed file: the same document under its new name, in one step."""
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM synced_files WHERE workspace_id = ? AND folder = ? AND path = ?",
                (ws_id, old.folder, old.path),
            )
            _see(conn, ws_id, new)
            _rename_rows(conn, ws_id, new.lineage, new.content_hash, filename)

    # -- versions -----------------------------------------------------------------------
    def versions(self, ws_id: str, lineage: str) -> list[Version]:
        """Every kept version of a document, oldest first (pending ones aside)."""
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM document_versions WHERE workspace_id = ? AND lineage = ?"
                " AND state != ? ORDER BY version",
                (ws_id, lineage, PENDING),
            ).fetchall()
        return [Version(**dict(r)) for r in rows]

    def version_of(self, ws_id: str, doc_id: str) -> Version | None:
        """The version a document row is (None: a document not kept in versions)."""
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT * FROM document_versions WHERE workspace_id = ? AND doc_id = ?"
                " ORDER BY version DESC",
                (ws_id, doc_id),
            ).fetchone()
        return Version(**dict(row)) if row else None

    def by_doc(self, ws_id: str) -> dict[str, Version]:
        """doc_id -> its version, for every versioned document of the workspace (citations)."""
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM document_versions WHERE workspace_id = ? AND state != ?",
                (ws_id, PENDING),
            ).fetchall()
        return {r["doc_id"]: Version(**dict(r)) for r in rows}

    def chunk_ids(self, ws_id: str, lineage: str, version: int) -> list[str]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT chunk_id FROM version_chunks WHERE workspace_id = ? AND lineage = ?"
                " AND version = ? ORDER BY chunk_id",
                (ws_id, lineage, version),
            ).fetchall()
        return [r[0] for r in rows]

    def users_of(self, ws_id: str, chunk_ids: Sequence[str]) -> dict[str, set[int]]:
        """chunk_id -> the versions (of its lineage) that list it."""
        out: dict[str, set[int]] = {}
        with self.db.connect() as conn:
            for start in range(0, len(chunk_ids), 500):
                part = list(chunk_ids[start : start + 500])
                marks = ",".join("?" * len(part))
                for r in conn.execute(
                    "SELECT chunk_id, version FROM version_chunks WHERE workspace_id = ?"
                    f" AND chunk_id IN ({marks})",
                    (ws_id, *part),
                ):
                    out.setdefault(r[0], set()).add(int(r[1]))
        return out

    def pending(self) -> list[Version]:
        """Versions a sync began to publish and did not finish (it crashed)."""
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM document_versions WHERE state = ?", (PENDING,)
            ).fetchall()
        return [Version(**dict(r)) for r in rows]

    def record_first(self, ws_id: str, firsts: Sequence[NewVersion]) -> None:
        """Documents a sync added: each its version 1, current, in one transaction."""
        with self.db.connect() as conn:
            for v in firsts:
                _insert_version(conn, ws_id, v, CURRENT)
                _see(conn, ws_id, SyncedFile(v.folder, v.path, v.lineage, v.doc_id, v.size_bytes))

    def begin(self, ws_id: str, v: NewVersion) -> None:
        """A new version, 'pending' until ``commit``: its document row leaves 'ingesting'."""
        with self.db.connect() as conn:
            _insert_version(conn, ws_id, v, PENDING)
            conn.execute(
                "UPDATE documents SET status = ?, pages = ?, chunks = ? WHERE workspace_id = ?"
                " AND doc_id = ?",
                (PUBLISHING, v.pages, len(v.chunk_ids), ws_id, v.doc_id),
            )

    def commit(self, ws_id: str, v: NewVersion, previous: Version) -> None:
        """The pending version becomes current, the one before it superseded, in one step."""
        with self.db.connect() as conn:
            _set_state(conn, ws_id, previous, SUPERSEDED, SUPERSEDED)
            _set_state(conn, ws_id, v, CURRENT, READY)
            _see(conn, ws_id, SyncedFile(v.folder, v.path, v.lineage, v.doc_id, v.size_bytes))

    def drop(self, ws_id: str, lineage: str, version: int) -> None:
        """Forget a version's rows (a pending one rolled back, a version deleted)."""
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM document_versions WHERE workspace_id = ? AND lineage = ?"
                " AND version = ?",
                (ws_id, lineage, version),
            )

    def set_state(self, ws_id: str, v: Version, state: str, doc_status: str) -> None:
        """A version's state and its document row's status together (removed, restored)."""
        with self.db.connect() as conn:
            _set_state(conn, ws_id, v, state, doc_status)
            if state == REMOVED:
                conn.execute(
                    "DELETE FROM synced_files WHERE workspace_id = ? AND lineage = ?",
                    (ws_id, v.lineage),
                )


def _insert_version(conn: Connection, ws_id: str, v: NewVersion, state: str) -> None:
    conn.execute(
        "INSERT INTO document_versions (workspace_id, lineage, version, doc_id, filename,"
        " seen_at, pages, chunks, stored, state) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            ws_id,
            v.lineage,
            v.version,
            v.doc_id,
            v.filename,
            now_iso(),
            v.pages,
            len(v.chunk_ids),
            v.stored,
            state,
        ),
    )
    conn.executemany(
        "INSERT INTO version_chunks (workspace_id, lineage, version, chunk_id) VALUES (?,?,?,?)",
        [(ws_id, v.lineage, v.version, cid) for cid in dict.fromkeys(v.chunk_ids)],
    )


def _see(conn: Connection, ws_id: str, f: SyncedFile) -> None:
    conn.execute(
        "INSERT INTO synced_files (workspace_id, folder, path, lineage, content_hash, size_bytes)"
        " VALUES (?,?,?,?,?,?) ON CONFLICT (workspace_id, folder, path) DO UPDATE SET"
        " lineage = excluded.lineage, content_hash = excluded.content_hash,"
        " size_bytes = excluded.size_bytes",
        (ws_id, f.folder, f.path, f.lineage, f.content_hash, f.size_bytes),
    )


def _set_state(
    conn: Connection, ws_id: str, v: Version | NewVersion, state: str, doc_status: str
) -> None:
    conn.execute(
        "UPDATE document_versions SET state = ? WHERE workspace_id = ? AND lineage = ?"
        " AND version = ?",
        (state, ws_id, v.lineage, v.version),
    )
    conn.execute(
        "UPDATE documents SET status = ? WHERE workspace_id = ? AND doc_id = ?",
        (doc_status, ws_id, v.doc_id),
    )


def _rename_rows(conn: Connection, ws_id: str, lineage: str, doc_id: str, filename: str) -> None:
    conn.execute(
        "UPDATE documents SET filename = ? WHERE workspace_id = ? AND doc_id = ?",
        (filename, ws_id, doc_id),
    )
    conn.execute(
        "UPDATE document_versions SET filename = ? WHERE workspace_id = ? AND lineage = ?"
        " AND doc_id = ?",
        (filename, ws_id, lineage, doc_id),
    )


def rows_of(versions: Sequence[Version]) -> list[dict[str, Any]]:
    """Versions as JSON rows (the CLI, the Library)."""
    return [
        {
            "version": v.version,
            "doc_id": v.doc_id,
            "filename": v.filename,
            "seen_at": v.seen_at,
            "pages": v.pages,
            "chunks": v.chunks,
            "stored": v.stored,
            "state": v.state,
        }
        for v in versions
    ]
