"""The SQLite side of the data dir, in one place: the connection helper and every schema.

One file (``$MASIS_DATA_DIR/masis.db``) holds the registry of workspaces and documents, the
run store, the keyword rows of the BM25 indexes and the web cache, beside LangGraph's own
checkpoint tables (which ``langgraph-checkpoint-sqlite`` creates). Each store calls
``ensure_schema`` when it opens the file; the statements are idempotent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    follow_up TEXT
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
    ("documents", "ocr_pages", "TEXT NOT NULL DEFAULT '[]'"),
)
# Indexes on migrated columns: created after the migrations, or an old file lacks the column.
LATE_INDEXES = ("CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread, created_at)",)


@contextmanager
def connect(db_path: Path) -> Iterator[sqlite3.Connection]:
    """One short-lived connection, committed on success, so threads never share one."""
    conn = sqlite3.connect(db_path, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def ensure_schema(db_path: Path) -> None:
    """Create what is missing (tables, indexes, later columns); leave data alone."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with connect(db_path) as conn:
        conn.executescript(SCHEMA)
        for table, column, definition in MIGRATIONS:
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        for statement in LATE_INDEXES:
            conn.execute(statement)
