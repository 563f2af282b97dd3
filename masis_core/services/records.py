"""A run's record and where it is kept: the ``runs`` table (one row per run), the atomic claim
that hands a paused or failed run to one process, the heartbeat column and the sweep that
fails runs whose process is gone."""

from __future__ import annotations

import json
import logging
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from masis_core.storage.db import Connection, upsert
from masis_core.storage.owners import owner_alive
from masis_core.storage.registry import Scope, now_iso, visible
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)

COLUMNS = (
    "run_id",
    "workspace_id",
    "question",
    "engine",
    "status",
    "answer",
    "citations",
    "confidence",
    "hitl",
    "metrics",
    "trace",
    "error",
    "created_at",
    "updated_at",
    "owner",
    "heartbeat",
    "input",
    "feedback",
    "thread",
    "follow_up",
    "asked_by",
)
SELECT = ", ".join(
    COLUMNS
)  # not *: PostgreSQL's runs have a rowid column (masis_core/storage/db.py)
# One whose heartbeat (masis_core/services/heartbeat.py) is silent for STALE_RUN is taken for
# dead even when its process id is alive (a reused pid, a process on another host).
STALE_RUN = timedelta(minutes=3)
RESUMABLE = ("needs_human", "failed")
INTERRUPTED = (
    "interrupted: the process running it stopped before it finished; resume it to continue "
    "from its last checkpoint"
)


STATUS_WORDS = {"needs_human": "awaiting review"}


@dataclass
class RunRecord:
    run_id: str
    workspace_id: str
    question: str
    engine: str
    status: str
    answer: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    confidence: float | None = None
    hitl: dict[str, Any] | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    created_at: str = ""
    updated_at: str = ""
    owner: str | None = None
    heartbeat: str | None = None
    # The graph's first input: a run stopped before its first checkpoint starts over from it.
    input: dict[str, Any] | None = None
    # The analyst's verdict on the answer: True right, False wrong, None not marked.
    feedback: bool | None = None
    # A follow-up's thread (the id of the thread's first run) and the words the analyst typed
    # before they were made standalone; None for a run asked on its own.
    thread: str | None = None
    follow_up: str | None = None
    # The account that asked it (None: the local user, or a run from before accounts).
    asked_by: str | None = None

    @property
    def shown_status(self) -> str:
        """The status in the analyst's words: "needs_human" is the graph's name for a run
        paused at review, and an export or a picker that printed it read as a log line."""
        return STATUS_WORDS.get(self.status, self.status.replace("_", " "))

    @property
    def confirmed_by(self) -> str | None:
        """Who confirmed the answer at review ("This answers it", or accept): the account's
        name, "the analyst" without accounts; None when no one did. Such an answer's
        confidence is the analyst's, not the figure the run paused on."""
        if self.status != "completed" or not self.metrics.get("accepted_by_analyst"):
            return None
        return str(self.metrics.get("confirmed_by") or "the analyst")

    @property
    def thread_id(self) -> str:
        """The thread this run belongs to: its first run's id (its own, for a first turn)."""
        return self.thread or self.run_id

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["owner"], data["heartbeat"], data["input"]
        if self.hitl:
            data["hitl"] = {k: self.hitl.get(k) for k in ("kind", "message", "options", "details")}
        return data


class RunStore:
    def __init__(self, bench: Workbench) -> None:
        self.db = bench.db

    def _conn(self) -> AbstractContextManager[Connection]:
        return self.db.connect()

    def save(self, rec: RunRecord) -> None:
        rec.updated_at = now_iso()
        rec.created_at = rec.created_at or rec.updated_at
        if rec.status != "running":
            rec.owner = rec.heartbeat = None
        row = {
            **asdict(rec),
            "citations": json.dumps(rec.citations),
            "hitl": json.dumps(rec.hitl) if rec.hitl else None,
            "metrics": json.dumps(rec.metrics),
            "trace": json.dumps(rec.trace),
            "input": json.dumps(rec.input) if rec.input is not None else None,
            # An integer column: PostgreSQL has no cast from a Python bool to BIGINT.
            "feedback": None if rec.feedback is None else int(rec.feedback),
        }
        with self._conn() as conn:
            conn.execute(upsert("runs", COLUMNS, ("run_id",)), [row[c] for c in COLUMNS])

    def set_feedback(self, run_id: str, right: bool | None) -> None:
        """Only the verdict changes: a thumbs click never rewrites the rest of the record."""
        value = None if right is None else int(right)
        with self._conn() as conn:
            conn.execute("UPDATE runs SET feedback = ? WHERE run_id = ?", (value, run_id))

    def claim(self, run_id: str, owner: str) -> bool:
        """Take a paused or failed run for this process: one conditional UPDATE, so of two
        claimants (two tabs, a double click, the CLI beside the UI) exactly one wins."""
        stamp = now_iso()
        placeholders = ", ".join("?" * len(RESUMABLE))
        with self._conn() as conn:
            cur = conn.execute(
                "UPDATE runs SET status = 'running', owner = ?, heartbeat = ?, error = NULL,"
                f" updated_at = ? WHERE run_id = ? AND status IN ({placeholders})",
                (owner, stamp, stamp, run_id, *RESUMABLE),
            )
            return cur.rowcount == 1

    def beat(self, owner: str, run_ids: list[str]) -> None:
        """Refresh the heartbeat of the runs this process is driving."""
        if not run_ids:
            return
        marks = ", ".join("?" * len(run_ids))
        with self._conn() as conn:
            conn.execute(
                f"UPDATE runs SET heartbeat = ? WHERE owner = ? AND status = 'running'"
                f" AND run_id IN ({marks})",
                (now_iso(), owner, *run_ids),
            )

    def sweep_orphans(self, run_id: str | None = None, now: datetime | None = None) -> int:
        """Runs left 'running' by an owner that is gone become 'failed' (resumable from their
        checkpoint). A run whose owner lives and beats is left alone."""
        cutoff = ((now or datetime.now(UTC)) - STALE_RUN).isoformat(timespec="seconds")
        query = "SELECT run_id, owner, heartbeat, updated_at FROM runs WHERE status = 'running'"
        args: tuple[str, ...] = ()
        if run_id is not None:
            query, args = f"{query} AND run_id = ?", (run_id,)
        swept = 0
        with self._conn() as conn:
            for row in conn.execute(query, args).fetchall():
                last = row["heartbeat"] or row["updated_at"]
                if owner_alive(row["owner"]) and row["owner"] and last > cutoff:
                    continue
                cur = conn.execute(
                    "UPDATE runs SET status = 'failed', error = ?, owner = NULL,"
                    " heartbeat = NULL, updated_at = ? WHERE run_id = ? AND status = 'running'"
                    " AND owner IS NOT DISTINCT FROM ?",
                    (INTERRUPTED, now_iso(), row["run_id"], row["owner"]),
                )
                swept += cur.rowcount
        if swept:
            log.warning("marked %d run(s) whose process stopped as failed (resumable)", swept)
        return swept

    def delete_workspace(self, workspace_id: str) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM runs WHERE workspace_id = ?", (workspace_id,))
            # the workspace's stored evaluations (evaluation/outline.py) go with it
            conn.execute("DELETE FROM evaluations WHERE workspace_id = ?", (workspace_id,))

    def get(self, run_id: str, scope: Scope | None = None) -> RunRecord | None:
        """The run; with a scope, only when its workspace is the scope's to see, in the same
        query (None alike for a missing run and a hidden one)."""
        where, args = visible("runs.workspace_id", scope)
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT {SELECT} FROM runs WHERE run_id = ? AND {where}", (run_id, *args)
            ).fetchone()
        return _record(row) if row else None

    def thread(self, thread_id: str) -> list[RunRecord]:
        """A thread's runs in the order they were asked: its first run, then the follow-ups."""
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {SELECT} FROM runs WHERE run_id = ? OR thread = ?"
                " ORDER BY created_at, rowid",
                (thread_id, thread_id),
            )
            return [_record(r) for r in rows.fetchall()]

    def list(
        self,
        workspace_id: str | None = None,
        limit: int = 200,
        status: str | None = None,
        scope: Scope | None = None,
    ) -> list[RunRecord]:
        """Newest first, filtered in the query (a workspace never reads another's runs; with
        a scope, only runs of workspaces it may see)."""
        where, scoped = visible("runs.workspace_id", scope)
        clauses, args = [where], list(scoped)
        for column, value in (("workspace_id", workspace_id), ("status", status)):
            if value:
                clauses.append(f"{column} = ?")
                args.append(value)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {SELECT} FROM runs WHERE {' AND '.join(clauses)}"
                " ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*args, limit),
            )
            return [_record(r) for r in rows.fetchall()]


def _record(row: Any) -> RunRecord:
    d = dict(row)
    for key, empty in (("citations", "[]"), ("metrics", "{}"), ("trace", "[]")):
        d[key] = json.loads(d[key] or empty)
    d["hitl"] = json.loads(d["hitl"]) if d["hitl"] else None
    d["input"] = json.loads(d["input"]) if d.get("input") else None
    d["feedback"] = None if d.get("feedback") is None else bool(d["feedback"])
    return RunRecord(**d)
