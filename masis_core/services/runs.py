"""Starting, resuming and recording research runs (the engine behind the CLI and the UI)."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from masis_core.answers.followup import Rewrite, Turn
from masis_core.answers.providers import make_engine
from masis_core.answers.questions import check_question
from masis_core.errors import InputError, MasisError, RunBusy, WorkspaceError
from masis_core.graph.build import compile_graph
from masis_core.graph.context import RunContext
from masis_core.graph.nodes.human_review import validate
from masis_core.modes import Mode
from masis_core.services.web import make_web_search
from masis_core.state import EngineName, ResearchInput
from masis_core.storage.db import Connection, upsert
from masis_core.storage.owners import current_owner, owner_alive
from masis_core.storage.registry import now_iso
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
)
SELECT = ", ".join(
    COLUMNS
)  # not *: PostgreSQL's runs have a rowid column (masis_core/storage/db.py)
# A running run's owner refreshes its heartbeat this often; one silent for STALE_RUN is taken
# for dead even when its process id is alive (a reused pid, a process on another host).
HEARTBEAT_S = 15.0
STALE_RUN = timedelta(minutes=3)
RESUMABLE = ("needs_human", "failed")
INTERRUPTED = (
    "interrupted: the process running it stopped before it finished; resume it to continue "
    "from its last checkpoint"
)


Event = Callable[[str, dict[str, Any]], None]  # (kind: "node" | "progress", payload)


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

    def get(self, run_id: str) -> RunRecord | None:
        with self._conn() as conn:
            row = conn.execute(f"SELECT {SELECT} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
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
        self, workspace_id: str | None = None, limit: int = 200, status: str | None = None
    ) -> list[RunRecord]:
        """Newest first, filtered in the query (a workspace never reads another's runs)."""
        clauses, args = [], []
        for column, value in (("workspace_id", workspace_id), ("status", status)):
            if value:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {SELECT} FROM runs{where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
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


class RunService:
    """One per process (the UI caches it): the compiled graph plus the run store."""

    def __init__(self, bench: Workbench, web_search: Any = None) -> None:
        self.bench = bench
        self.graph = compile_graph(bench.db)
        self.store = RunStore(bench)
        # No key, no web hook: then nothing in a run can attempt a web request.
        self.web_search = web_search if web_search is not None else make_web_search(bench.settings)
        self._driving: set[str] = set()
        self._beat_lock = threading.Lock()
        self._beat_thread: threading.Thread | None = None
        self.store.sweep_orphans()

    def get(self, run_id: str) -> RunRecord | None:
        return self.store.get(run_id)

    def mark(self, run_id: str, right: bool | None) -> None:
        """The analyst's thumbs up (right) or down (wrong) on a run's answer."""
        self.store.set_feedback(run_id, right)

    def runs(
        self, workspace_id: str, status: str | None = None, limit: int = 200
    ) -> list[RunRecord]:
        """A workspace's runs, newest first."""
        return self.store.list(workspace_id, limit=limit, status=status)

    def thread(self, run_id: str) -> list[RunRecord]:
        """Every turn of the thread ``run_id`` belongs to, oldest first."""
        rec = self.store.get(run_id)
        return self.store.thread(rec.thread_id) if rec is not None else []

    def rewrite(self, run_id: str, follow_up: str, engine: EngineName | None = None) -> Rewrite:
        """A follow-up to run ``run_id`` as a standalone question, from the thread's questions
        and answers up to that run: by the chat model with Ollama (the offline rewrite when
        it fails), by the offline rule otherwise. The analyst sees and may edit it."""
        follow_up = check_question(follow_up)
        turns = self.thread(run_id)
        if not turns:
            raise InputError(f"There is no run '{run_id}' to follow up.")
        upto = next(i for i, t in enumerate(turns) if t.run_id == run_id) + 1
        history = [Turn(t.question, t.answer or "") for t in turns[:upto]]
        name = engine or self._engine_name()
        result = make_engine(self.bench.settings, name).condense(follow_up, history)
        rewrite: Rewrite = result.value
        return rewrite

    def _engine_name(self) -> EngineName:
        status = self.bench.provider_status()
        return status.mode if status.ready else "offline"

    def delete_workspace(self, workspace_id: str) -> int:
        """The workspace and everything of it: chunks, keyword rows, files, runs and their
        checkpoints. Returns the number of runs removed."""
        runs = self.store.list(workspace_id, limit=1_000_000)
        for rec in runs:
            self.graph.checkpointer.delete_thread(rec.run_id)
        self.store.delete_workspace(workspace_id)
        self.bench.delete_workspace(workspace_id)
        return len(runs)

    def _config(self, run_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": run_id}, "recursion_limit": 100}

    def _context(self, engine: str) -> RunContext:
        return RunContext(self.bench, make_engine(self.bench.settings, engine), self.web_search)

    def ask(
        self,
        workspace_id: str,
        question: str,
        *,
        on_event: Event | None = None,
        **options: Any,
    ) -> RunRecord:
        """Start a run (``options`` as for ``start``) and drive it to its end or first pause,
        here and now: the CLI's way; the UI runs the same two steps as a job."""
        rec, state = self.start(workspace_id, question, **options)
        return self.drive(rec, state, on_event)

    def start(
        self,
        workspace_id: str,
        question: str,
        *,
        web: bool = False,
        max_retries: int | None = None,
        engine: EngineName | None = None,
        mode: Mode | None = None,
        trusted_only: bool | None = None,
        trusted_domains: list[str] | None = None,
        thread: str | None = None,
        follow_up: str | None = None,
    ) -> tuple[RunRecord, ResearchInput]:
        """Check the question, record the run as 'running' and owned by this process, and
        return it with the graph's input; ``mode`` (dense | bm25 | hybrid) overrides
        MASIS_RETRIEVAL_MODE. The record exists before any node runs, so its id can go into
        the address at once. ``thread``: the run this one follows up (any turn of its thread);
        ``follow_up``: the analyst's words before the rewrite, kept with the run."""
        question = check_question(question)
        ws = self.bench.registry.get_workspace(workspace_id)
        if ws is None:
            raise WorkspaceError(f"There is no workspace '{workspace_id}'.")
        thread_id = self._thread_of(thread, ws.id) if thread else None
        if engine is None:
            engine = self._engine_name()
        run_id = uuid.uuid4().hex[:12]
        rec = RunRecord(run_id, ws.id, question, engine, "running", owner=current_owner())
        rec.thread, rec.follow_up = thread_id, (follow_up or "").strip() or None
        rec.heartbeat = now_iso()
        state: ResearchInput = {
            "run_id": run_id,
            "question": question,
            "workspace_id": ws.id,
            "embed_model": ws.embed_model,
            "engine": engine,
            "web_enabled": web,
            "web_trusted_only": trusted_only,
            "trusted_domains": trusted_domains,
            "retrieval_mode": mode or self.bench.settings.retrieval_mode,
            "max_retries": max_retries,
            "retry_count": 0,
            "status": "running",
            "draft_answer": None,
            "metrics": {},
            "trace": [],
        }
        rec.input = dict(state)
        self.store.save(rec)
        return rec, state

    def _thread_of(self, run_id: str, workspace_id: str) -> str:
        """The thread a follow-up to ``run_id`` joins; a run of another workspace is none."""
        parent = self.store.get(run_id)
        if parent is None or parent.workspace_id != workspace_id:
            raise InputError(
                f"There is no run '{run_id}' in workspace '{workspace_id}' to follow up; "
                "see `python -m masis_core status` for recent run ids."
            )
        return parent.thread_id

    def resume(
        self, run_id: str, response: dict[str, Any] | None, on_event: Event | None = None
    ) -> RunRecord:
        """Answer a review (``response``) or, for a failed run, continue from its checkpoint."""
        rec, graph_input = self.claim(run_id, response)
        return self.drive(rec, graph_input, on_event)

    def claim(self, run_id: str, response: dict[str, Any] | None) -> tuple[RunRecord, Any]:
        """Check the response and take the run for this process (atomically: a second
        claimant gets ``RunBusy``); return the record and the graph input that resumes it."""
        self.store.sweep_orphans(run_id)
        rec = self.store.get(run_id)
        if rec is None:
            raise InputError(f"There is no run '{run_id}'.")
        if rec.status == "needs_human":
            if response is None:
                raise InputError("This run waits for a review response.")
            validate(rec.hitl or {}, response)
        elif rec.status == "running":
            raise RunBusy(
                f"Run '{run_id}' is already running (owner {rec.owner}); wait for it to pause "
                "or finish."
            )
        elif rec.status != "failed":
            raise InputError(f"Run '{run_id}' is {rec.status}; only paused or failed runs resume.")
        expected = rec.status
        if not self.store.claim(run_id, current_owner()):
            raise RunBusy(
                f"Run '{run_id}' was just taken by another tab or process; reload to follow it."
            )
        rec.status, rec.owner, rec.error = "running", current_owner(), None
        snapshot = self.graph.get_state(self._config(run_id))
        if not snapshot.values and not snapshot.next:
            return rec, rec.input  # stopped before its first checkpoint: start over
        if expected == "needs_human":
            if snapshot.interrupts:
                return rec, Command(resume=response)
            # The record said 'paused' but the checkpoint has moved on (an old interrupted
            # resume): continue from the checkpoint rather than send an answer nobody awaits.
            log.warning("run %s had no pending review; continuing from its checkpoint", run_id)
        return rec, None

    def drive(self, rec: RunRecord, graph_input: Any, on_event: Event | None = None) -> RunRecord:
        """Run the graph until it ends or pauses. Whatever stops it — an error, a stopped
        script, Ctrl-C — the record is written from the checkpoint before this returns or
        raises, so no run stays 'running' behind its owner's back."""
        config = self._config(rec.run_id)
        rec.status, rec.error = "running", None
        self._beating(rec.run_id, True)
        try:
            for mode, chunk in self.graph.stream(
                graph_input,
                config,
                context=self._context(rec.engine),
                stream_mode=["updates", "custom"],
            ):
                if on_event is None:
                    continue
                if mode == "custom":
                    on_event("progress", chunk)
                    continue
                for node_name, update in chunk.items():
                    if node_name == "__interrupt__" or not isinstance(update, dict):
                        continue
                    for entry in update.get("trace") or []:
                        on_event("node", entry)
        except MasisError as exc:
            rec.status, rec.error = "failed", str(exc)
        except Exception as exc:
            log.exception("run %s failed", rec.run_id)
            gone = self.bench.store.unreachable(exc)
            rec.status = "failed"
            rec.error = str(gone) if gone else f"{type(exc).__name__}: {exc}"
        except BaseException:
            rec.status, rec.error = "failed", INTERRUPTED
            raise
        finally:
            self._beating(rec.run_id, False)
            self._record_state(rec, config)
            self.store.save(rec)
        return rec

    def _beating(self, run_id: str, on: bool) -> None:
        """Keep this process's running runs' heartbeats fresh from one daemon thread."""
        with self._beat_lock:
            if on:
                self._driving.add(run_id)
            else:
                self._driving.discard(run_id)
            if on and self._beat_thread is None:
                self._beat_thread = threading.Thread(
                    target=self._beat_loop, name="run-heartbeat", daemon=True
                )
                self._beat_thread.start()

    def _beat_loop(self) -> None:
        """Beat while this process drives runs; end when none is left (the next run starts a
        new thread), so an idle service holds no thread and can be collected."""
        while True:
            time.sleep(HEARTBEAT_S)
            with self._beat_lock:
                ids = sorted(self._driving)
                if not ids:
                    self._beat_thread = None
                    return
            try:
                self.store.beat(current_owner(), ids)
            except Exception:  # a busy or unreachable database: the next beat will do
                log.warning("could not refresh run heartbeats", exc_info=True)

    def _record_state(self, rec: RunRecord, config: RunnableConfig) -> None:
        snapshot = self.graph.get_state(config)
        values = snapshot.values or {}
        rec.question = values.get("question", rec.question)
        rec.trace = values.get("trace", [])
        # The record keeps the documented shape: retry reasons inside the metrics.
        rec.metrics = {
            **values.get("metrics", {}),
            "retry_reasons": values.get("retry_reasons", []),
        }
        rec.citations = values.get("citations", []) if values.get("answer") else []
        rec.answer = values.get("answer")
        rec.confidence = (values.get("critique") or {}).get("confidence")
        if rec.status == "failed":
            rec.hitl = None
            return
        if snapshot.interrupts:
            rec.status = "needs_human"
            rec.hitl = snapshot.interrupts[0].value
            return
        rec.hitl = None
        rec.status = values.get("status", "completed")
        if rec.status == "cancelled":
            rec.answer, rec.citations = None, []
