"""The relational side of the workbench, in one place: every schema, and the two databases.

One database holds the registry of workspaces and documents, the run store, the keyword rows
of the BM25 indexes, the stored evaluations, the workspaces' confidence calibrations and the
web cache, beside LangGraph's checkpoints:

- SQLite (the default): one file, ``$MASIS_DATA_DIR/masis.db``, and ``SqliteSaver``;
- PostgreSQL when ``MASIS_POSTGRES_URL`` is set (DESIGN §1, server mode): several processes
  on several hosts share one library; ``PostgresSaver`` keeps the checkpoints.

The stores write one SQL for both: ``?`` placeholders, ``INSERT … ON CONFLICT (key) DO UPDATE``
(``upsert``), ``IS NOT DISTINCT FROM``; rows are addressable by position and column name; a
duplicate key raises ``DuplicateRow``. What differs — placeholders, column types, migrations,
the connection's life, the checkpointer — stays in this module. ``open_database`` creates
what is missing (tables, indexes, later columns); the statements are idempotent.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from masis_core.errors import ConfigError, DuplicateRow, StoreError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from masis_core.config import Settings

log = logging.getLogger(__name__)

# How long a SQLite connection waits for another process's lock.
BUSY_TIMEOUT_S = 30.0
WAL_RETRY_S = 0.05

SCHEMA = """
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    embed_model TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    pages INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0,
    empty_pages TEXT NOT NULL DEFAULT '[]',
    size_bytes INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (workspace_id, doc_id)
);
-- The words an OCR engine read on a document's scanned pages, with their boxes (JSON): a scan
-- has no text layer to find a cited passage in, so its highlight is drawn from these.
CREATE TABLE IF NOT EXISTS ocr_words (
    workspace_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    page INTEGER NOT NULL,
    words TEXT NOT NULL,
    PRIMARY KEY (workspace_id, doc_id, page),
    FOREIGN KEY (workspace_id, doc_id) REFERENCES documents (workspace_id, doc_id)
        ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    question TEXT NOT NULL,
    engine TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    citations TEXT NOT NULL DEFAULT '[]',
    confidence REAL,
    hitl TEXT,
    metrics TEXT NOT NULL DEFAULT '{}',
    trace TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    owner TEXT,
    heartbeat TEXT,
    input TEXT,
    feedback INTEGER,
    thread TEXT,
    follow_up TEXT,
    asked_by TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_workspace ON runs (workspace_id, created_at);
CREATE TABLE IF NOT EXISTS bm25_chunks (
    workspace_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    tokens TEXT NOT NULL,
    PRIMARY KEY (workspace_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS bm25_by_doc ON bm25_chunks (workspace_id, doc_id);
CREATE TABLE IF NOT EXISTS bm25_versions (
    workspace_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS evaluations (
    eval_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    k INTEGER NOT NULL,
    questions INTEGER NOT NULL,
    per_mode TEXT NOT NULL,
    report TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_by_workspace ON evaluations (workspace_id, created_at);
-- A workspace's confidence calibration (masis_core/workspaces/calibration.py): the outline
-- points the calibration job found and the latest fit, as JSON; gone with the workspace.
CREATE TABLE IF NOT EXISTS calibrations (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    engine TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    points TEXT NOT NULL,
    report TEXT NOT NULL
);
-- The analyst's passage picks (masis_core/workspaces/picks.py): per run, the window features
-- of the passage chosen and of those passed over, as JSON; gone with the workspace.
CREATE TABLE IF NOT EXISTS passage_picks (
    run_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    chosen TEXT NOT NULL,
    passed_over TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passage_picks_by_workspace ON passage_picks (workspace_id, created_at);
-- Accounts (MASIS_AUTH=local or oidc; masis_core/storage/accounts.py): the name is NFKC-
-- normalised and case-folded; the password an argon2 hash (NULL for OIDC accounts).
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY,
    display TEXT NOT NULL,
    password TEXT,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    sessions_after REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS memberships (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    account TEXT NOT NULL REFERENCES accounts(name) ON DELETE CASCADE,
    role TEXT NOT NULL,
    PRIMARY KEY (workspace_id, account)
);
CREATE INDEX IF NOT EXISTS memberships_by_account ON memberships (account);
-- An identity provider's identities (MASIS_AUTH=oidc), by issuer and subject: the account a
-- sign-in acts as. A name or an e-mail never picks it (it had taken over an admin's account).
CREATE TABLE IF NOT EXISTS oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(name) ON DELETE CASCADE,
    linked_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
-- Personal tokens for the CLI: only the SHA-256 of the secret is kept.
CREATE TABLE IF NOT EXISTS tokens (
    token_id TEXT PRIMARY KEY,
    account TEXT NOT NULL REFERENCES accounts(name) ON DELETE CASCADE,
    label TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL
);
-- Signed-in browser sessions, by the SHA-256 of their secret; ended at sign-out.
CREATE TABLE IF NOT EXISTS sessions (
    digest TEXT PRIMARY KEY,
    account TEXT NOT NULL REFERENCES accounts(name) ON DELETE CASCADE,
    started REAL NOT NULL,
    expires REAL NOT NULL
);
-- Failed sign-ins, per account and caller ("account:NAME@ADDRESS") and per client address
-- ("address:IP").
CREATE TABLE IF NOT EXISTS signin_failures (
    subject TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS signin_failures_by_subject ON signin_failures (subject, at);
-- Who did what, when: written by the core, read by admins, never edited from the UI.
CREATE TABLE IF NOT EXISTS audit (
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
-- Followed folders (ingest/sync.py): a workspace keeps a folder on the server's disk in
-- step; ``every_minutes`` 0 is no schedule (sync on demand only).
CREATE TABLE IF NOT EXISTS followed_folders (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL,
    every_minutes INTEGER NOT NULL DEFAULT 0,
    last_sync TEXT,
    PRIMARY KEY (workspace_id, path)
);
-- A document's versions (masis_core/storage/versions.py): each version is a document row of
-- its own bytes (doc_id = their hash); ``lineage`` names the document across versions.
-- state: pending (being published), current, superseded, removed (its file is gone).
CREATE TABLE IF NOT EXISTS document_versions (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    lineage TEXT NOT NULL,
    version INTEGER NOT NULL,
    doc_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    pages INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0,
    stored INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    PRIMARY KEY (workspace_id, lineage, version)
);
CREATE INDEX IF NOT EXISTS document_versions_by_doc ON document_versions (workspace_id, doc_id);
-- The chunks each version is made of: a chunk whose text and place did not change is listed
-- under every version that has it, stored (and embedded) once.
CREATE TABLE IF NOT EXISTS version_chunks (
    workspace_id TEXT NOT NULL,
    lineage TEXT NOT NULL,
    version INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    PRIMARY KEY (workspace_id, lineage, version, chunk_id),
    FOREIGN KEY (workspace_id, lineage, version)
        REFERENCES document_versions (workspace_id, lineage, version) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS version_chunks_by_chunk ON version_chunks (workspace_id, chunk_id);
-- What the last sync saw in a followed folder: a file's path (relative to the folder, with
-- undecodable bytes escaped), its content hash and the document it is.
CREATE TABLE IF NOT EXISTS synced_files (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    folder TEXT NOT NULL,
    path TEXT NOT NULL,
    lineage TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, folder, path)
);
CREATE INDEX IF NOT EXISTS synced_files_by_lineage ON synced_files (workspace_id, lineage);
-- One sync per workspace at a time, across processes: the row is the lock, its owner
-- ("host:pid") tells a live holder from one that died.
CREATE TABLE IF NOT EXISTS sync_locks (
    workspace_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    started TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS web_cache (
    key TEXT PRIMARY KEY,
    query TEXT NOT NULL,
    params TEXT NOT NULL,
    results TEXT NOT NULL,
    fetched_at REAL NOT NULL
);
"""
# Columns added after the first release, for data dirs made before them:
# (table, column, definition).
MIGRATIONS = (
    ("documents", "owner", "TEXT NOT NULL DEFAULT ''"),
    ("runs", "owner", "TEXT"),
    ("runs", "heartbeat", "TEXT"),
    ("runs", "input", "TEXT"),
    ("runs", "feedback", "INTEGER"),
    ("runs", "thread", "TEXT"),
    ("runs", "follow_up", "TEXT"),
    # The account that asked (team mode): its review and verdict are that account's to give.
    ("runs", "asked_by", "TEXT"),
    ("documents", "ocr_pages", "TEXT NOT NULL DEFAULT '[]'"),
    # What a document without pages holds ("1 sheet, 118 rows"); '' for pages.
    ("documents", "extent", "TEXT NOT NULL DEFAULT ''"),
    # The sign-in attempt a failure row was reserved for (Accounts.verify_password).
    ("signin_failures", "attempt", "TEXT"),
    # A chunk's soft-match words (Bm25Store.add); NULL in rows from before, until backfilled.
    ("bm25_chunks", "words", "TEXT"),
)
# Indexes on migrated columns: created after the migrations, or an old file lacks the column.
LATE_INDEXES = (
    "CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread, created_at)",
    # Keyword rows still without soft-match words: every start asks (Bm25Store.backfill_words).
    "CREATE INDEX IF NOT EXISTS bm25_without_words ON bm25_chunks (workspace_id)"
    " WHERE words IS NULL",
)
# SQLite gives every table an insertion-ordered ``rowid``; the stores order ties of equal
# (second-resolution) timestamps by it. PostgreSQL has none, so these tables get a column.
PG_ROWID_TABLES = ("runs", "evaluations", "audit")
# PostgreSQL's REAL is 4 bytes (a Unix time would lose minutes) and its INTEGER 4 bytes.
PG_TYPES = ((re.compile(r"\bREAL\b"), "DOUBLE PRECISION"), (re.compile(r"\bINTEGER\b"), "BIGINT"))
TABLES = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")
INDEXES = re.compile(r"CREATE (?:UNIQUE )?INDEX IF NOT EXISTS (\w+)")
PG_SCHEMA_LOCK = 180_001  # pg_advisory_xact_lock key: two processes starting at once
# Connection.serialize keys: creating accounts (the first is admin), counting sign-in failures.
ACCOUNTS_LOCK = 180_002
SIGNIN_LOCK = 180_003


class Cursor(Protocol):
    """What the stores read back: rows by position or column name, the rows changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection:
    """One transaction's connection: SQLite's SQL (``?`` placeholders) on either database."""

    def __init__(self, raw: Any, placeholders: bool, integrity: type[Exception]) -> None:
        self.raw = raw
        self._translate = _pg_sql if placeholders else _same
        self._integrity = integrity

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:
        try:
            cur: Cursor = self.raw.execute(self._translate(sql), tuple(args))
        except self._integrity as exc:
            raise _integrity_error(exc) from exc
        return cur

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if not rows:  # psycopg's executemany needs a row to prepare
            return
        try:
            if isinstance(self.raw, sqlite3.Connection):
                self.raw.executemany(sql, rows)
            else:
                self.raw.cursor().executemany(self._translate(sql), rows)
        except self._integrity as exc:
            raise _integrity_error(exc) from exc

    def serialize(self, key: int) -> None:
        """Make the rest of this transaction run alone among those serialized on ``key``: a
        check and the write it allows (the first account, a sign-in's throttle count) cannot
        interleave with another request's. The first statement of a transaction. SQLite: the
        database's write lock now (``BEGIN IMMEDIATE``), so the reads after it see every
        earlier commit; PostgreSQL: a transaction-scoped advisory lock on ``key`` (READ
        COMMITTED: each statement after it sees what the previous holder committed)."""
        if isinstance(self.raw, sqlite3.Connection):
            self.raw.execute("BEGIN IMMEDIATE")
        else:
            self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (key,))


def _integrity_error(exc: Exception) -> StoreError:
    """A key already stored is ``DuplicateRow`` (callers treat it as "already there"); any
    other broken constraint (a missing value, a check) is a bug to report, not a duplicate."""
    unique = getattr(exc, "sqlstate", None) == "23505" or str(exc).startswith(
        ("UNIQUE constraint failed", "PRIMARY KEY constraint failed")
    )
    if unique:
        return DuplicateRow(f"That row is already stored: {exc}")
    return StoreError(f"The database refused the row ({exc}); this is a bug, please report it.")


def _same(sql: str) -> str:
    return sql


@lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    """SQLite's ``?`` placeholders as psycopg's ``%s`` (the stores' SQL has no ``?`` or ``%``
    inside literals)."""
    return sql.replace("%", "%%").replace("?", "%s")


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """``INSERT OR REPLACE`` in the form both databases accept: insert the row, or update the
    non-key columns of the one with the same key (which keeps its rowid, so its place in
    created_at ties)."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"
    )


class Database:
    """Where the stores keep their rows; ``connect`` gives one committed transaction."""

    def connect(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def read_one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """One row of a frequent small read (the keyword index's version on every lookup)."""
        with self.connect() as conn:
            return conn.execute(sql, args).fetchone()

    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """LangGraph's checkpoint saver on this database."""
        raise NotImplementedError

    def describe(self) -> str:
        """Where the rows live, for logs and messages (never a password)."""
        raise NotImplementedError


class SqliteDatabase(Database):
    """One file in the data dir: WAL mode and a 30 s busy time-out, a connection per
    transaction so that threads never share one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._readers = threading.local()  # per thread: a long-lived connection for read_one
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._use_wal()
        self.ensure_schema()

    def _use_wal(self) -> None:
        """Switch the file to WAL once (the mode is kept in the file). Switching needs the
        file to itself, and SQLite answers "database is locked" at once instead of waiting
        out the busy time-out: two processes opening a new data dir together (two analysts'
        ingests) lost the race about one run in fifty. The loser tries again."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                log.debug("%s is locked while switching it to WAL; trying again", self.path)
                time.sleep(WAL_RETRY_S)
            finally:
                conn.close()

    def describe(self) -> str:
        return str(self.path)

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            with conn:
                yield Connection(conn, False, sqlite3.IntegrityError)
        finally:
            conn.close()

    def read_one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """On the thread's own connection: opening one per call was a noticeable share of a
        hybrid retrieval (bench/retrieval_latency.py; docs/measurements/performance.md)."""
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            conn = self._readers.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            conn.row_factory = sqlite3.Row
        return conn.execute(sql, tuple(args)).fetchone()

    def ensure_schema(self) -> None:
        """Create what is missing (tables, indexes, later columns); leave data alone. The
        columns are looked for and added under the write lock: two ingests opening a new
        data dir together both found ``ocr_pages`` missing, and the second ALTER failed with
        "duplicate column name" (seen in a full test run)."""
        with self.connect() as conn:
            conn.raw.executescript(SCHEMA)
            conn.execute("BEGIN IMMEDIATE")
            for table, column, definition in MIGRATIONS:
                have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            for statement in LATE_INDEXES:
                conn.execute(statement)

    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(
            sqlite3.connect(self.path, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        )


class PgRow:
    """A PostgreSQL row addressable like ``sqlite3.Row``: by position, by column name, and
    as ``dict(row)``."""

    __slots__ = ("_index", "_values")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values, self._index = values, index

    def __getitem__(self, key: int | str) -> Any:
        return self._values[self._index[key] if isinstance(key, str) else key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._index)


def _pg_types(sql: str) -> str:
    for pattern, pg_type in PG_TYPES:
        sql = pattern.sub(pg_type, sql)
    return sql


def _pg_rows(cursor: Any) -> Any:
    """psycopg row factory making ``PgRow``s."""
    index = {col.name: i for i, col in enumerate(cursor.description or ())}
    return lambda values: PgRow(values, index)


class PostgresDatabase(Database):
    """A PostgreSQL database shared by every process of a team (server mode). Connections come
    from a small pool: a new one per transaction would cost a TCP round trip and a login."""

    def __init__(self, url: str) -> None:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg_pool import ConnectionPool

        self.url = url
        try:
            info = conninfo_to_dict(url)
        except psycopg.Error as exc:
            raise ConfigError(
                "MASIS_POSTGRES_URL is not a PostgreSQL address; write it as "
                "postgresql://user:password@host:5432/database."
            ) from exc
        self._where = (
            f"postgresql://{info.get('host', 'localhost')}:{info.get('port', 5432)}"
            f"/{info.get('dbname', '')}"
        )
        self._integrity = psycopg.IntegrityError
        try:  # one direct try first: the pool would retry quietly until its time-out
            psycopg.connect(url, connect_timeout=10).close()
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"PostgreSQL at {self._where} cannot be used ({first}): start it, or fix "
                "MASIS_POSTGRES_URL (unset it to keep the data in SQLite in the data dir)."
            ) from exc
        self.pool: ConnectionPool[Any] = ConnectionPool(
            url, min_size=1, max_size=8, kwargs={"row_factory": _pg_rows}, open=True
        )
        self._saver_pool: Any = None
        self.ensure_schema()

    def describe(self) -> str:
        return self._where

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with self.pool.connection() as conn:  # commits on success, rolls back on an error
            yield Connection(conn, True, self._integrity)

    def ensure_schema(self) -> None:
        """SQLite's schema with PostgreSQL's types, under an advisory lock (two processes
        creating the same table at once would collide in PostgreSQL's catalog)."""
        wanted = [(t, c, _pg_types(d)) for t, c, d in MIGRATIONS]
        wanted += [(t, "rowid", "BIGSERIAL") for t in PG_ROWID_TABLES]
        with self.connect() as conn:
            conn.raw.execute(f"SELECT pg_advisory_xact_lock({PG_SCHEMA_LOCK})")
            have = {
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT table_name, column_name FROM information_schema.columns"
                    " WHERE table_schema = current_schema()"
                )
            }
            missing = [(t, c, d) for t, c, d in wanted if (t, c) not in have]
            indexes = {
                r[0]
                for r in conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                )
            }
            ready = (
                not missing
                and {t for t, _ in have} >= set(TABLES.findall(SCHEMA))
                # An index a later version adds to existing tables counts too.
                and indexes >= set(INDEXES.findall(SCHEMA + "\n".join(LATE_INDEXES)))
            )
            if ready:
                return  # no DDL on a ready database: it would lock tables others are using
            conn.raw.execute(_pg_types(SCHEMA))
            for table, column, definition in missing:  # IF NOT EXISTS: SCHEMA made some
                conn.raw.execute(
                    f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {definition}"
                )
            for statement in LATE_INDEXES:
                conn.raw.execute(statement)

    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """``PostgresSaver`` on its own pool (it needs autocommit and dict rows); ``setup``
        runs its migrations once, under the schema lock."""
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        if self._saver_pool is None:
            self._saver_pool = ConnectionPool(
                self.url,
                min_size=1,
                max_size=8,
                kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
                open=True,
            )
        saver = PostgresSaver(self._saver_pool)
        with self.pool.connection() as conn:
            conn.execute(f"SELECT pg_advisory_lock({PG_SCHEMA_LOCK})")
            try:
                saver.setup()
            finally:
                conn.execute(f"SELECT pg_advisory_unlock({PG_SCHEMA_LOCK})")
        return saver

    def close(self) -> None:
        self.pool.close()
        if self._saver_pool is not None:
            self._saver_pool.close()


_PG: dict[str, PostgresDatabase] = {}
_PG_LOCK = threading.Lock()


def open_database(settings: Settings) -> Database:
    """The database the settings name: PostgreSQL (one pool per URL and process) when
    ``MASIS_POSTGRES_URL`` is set, the data dir's SQLite file otherwise."""
    if settings.postgres_url is None:
        return SqliteDatabase(settings.db_path)
    url = settings.postgres_url.get_secret_value()
    with _PG_LOCK:
        if url not in _PG:
            _PG[url] = PostgresDatabase(url)
            log.info("registry, runs and checkpoints in PostgreSQL at %s", _PG[url].describe())
        return _PG[url]


def close_database(url: str) -> None:
    """Close the pools of a PostgreSQL URL (tests dropping their database, a clean exit)."""
    with _PG_LOCK:
        db = _PG.pop(url, None)
    if db is not None:
        db.close()
