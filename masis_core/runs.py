"""Starting, resuming and recording research runs (the engine behind the CLI and the UI)."""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from typing import Any

from langgraph.types import Command

from masis_core.context import RunContext
from masis_core.errors import MasisError, WorkspaceError
from masis_core.graph import compile_graph
from masis_core.llm.engine import Engine, OfflineEngine
from masis_core.nodes.human_review import InvalidResponse
from masis_core.registry import connect, now_iso
from masis_core.services import Workbench
from masis_core.web import make_web_search

log = logging.getLogger(__name__)

RUNS_SCHEMA = """
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
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_workspace ON runs (workspace_id, created_at);
"""

# A question is a question: longer text belongs in a document. (Search uses the first 500
# characters anyway; this bounds what is stored, traced and shown.)
MAX_QUESTION_CHARS = 20_000

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

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.hitl:
            data["hitl"] = {k: self.hitl.get(k) for k in ("kind", "message", "options", "details")}
        return data


class RunStore:
    def __init__(self, bench: Workbench) -> None:
        self.db_path = bench.settings.db_path
        with self._conn() as conn:
            conn.executescript(RUNS_SCHEMA)

    def _conn(self) -> AbstractContextManager[sqlite3.Connection]:
        return connect(self.db_path)

    def save(self, rec: RunRecord) -> None:
        rec.updated_at = now_iso()
        rec.created_at = rec.created_at or rec.updated_at
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    rec.run_id,
                    rec.workspace_id,
                    rec.question,
                    rec.engine,
                    rec.status,
                    rec.answer,
                    json.dumps(rec.citations),
                    rec.confidence,
                    json.dumps(rec.hitl) if rec.hitl else None,
                    json.dumps(rec.metrics),
                    json.dumps(rec.trace),
                    rec.error,
                    rec.created_at,
                    rec.updated_at,
                ),
            )

    def delete_workspace(self, workspace_id: str) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM runs WHERE workspace_id = ?", (workspace_id,))

    def get(self, run_id: str) -> RunRecord | None:
        with self._conn() as conn:
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return _record(row) if row else None

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
                f"SELECT * FROM runs{where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*args, limit),
            )
            return [_record(r) for r in rows.fetchall()]


def _record(row: sqlite3.Row) -> RunRecord:
    d = dict(row)
    for key, empty in (("citations", "[]"), ("metrics", "{}"), ("trace", "[]")):
        d[key] = json.loads(d[key] or empty)
    d["hitl"] = json.loads(d["hitl"]) if d["hitl"] else None
    return RunRecord(**d)


def make_engine(bench: Workbench, name: str) -> Engine:
    if name == "ollama":
        from masis_core.llm.ollama_engine import OllamaEngine

        return OllamaEngine(bench.settings)
    return OfflineEngine()


class Researcher:
    """One per process (the UI caches it): the compiled graph plus the run store."""

    def __init__(self, bench: Workbench, web_search: Any = None) -> None:
        self.bench = bench
        self.graph = compile_graph(bench.settings.db_path)
        self.store = RunStore(bench)
        # No key, no web hook: then nothing in a run can attempt a web request.
        self.web_search = web_search if web_search is not None else make_web_search(bench.settings)

    def delete_workspace(self, workspace_id: str) -> int:
        """The workspace and everything of it: chunks, keyword rows, files, runs and their
        checkpoints. Returns the number of runs removed."""
        runs = self.store.list(workspace_id, limit=1_000_000)
        for rec in runs:
            self.graph.checkpointer.delete_thread(rec.run_id)
        self.store.delete_workspace(workspace_id)
        self.bench.delete_workspace(workspace_id)
        return len(runs)

    def _config(self, run_id: str, engine: str) -> dict[str, Any]:
        ctx = RunContext(self.bench, make_engine(self.bench, engine), self.web_search)
        return {"configurable": {"thread_id": run_id, "ctx": ctx}, "recursion_limit": 100}

    def ask(
        self,
        workspace_id: str,
        question: str,
        *,
        web: bool = False,
        max_retries: int | None = None,
        engine: str | None = None,
        mode: str | None = None,
        trusted_only: bool | None = None,
        trusted_domains: list[str] | None = None,
        on_event: Event | None = None,
    ) -> RunRecord:
        """Start a run; ``mode`` (dense | bm25 | hybrid) overrides MASIS_RETRIEVAL_MODE."""
        question = question.strip()
        if not question:
            raise MasisError("The question is empty.")
        if len(question) > MAX_QUESTION_CHARS:
            raise MasisError(
                f"The question is {len(question):,} characters long; the limit is "
                f"{MAX_QUESTION_CHARS:,}. Put long material into a document and ask about it."
            )
        ws = self.bench.registry.get_workspace(workspace_id)
        if ws is None:
            raise WorkspaceError(f"There is no workspace '{workspace_id}'.")
        if engine is None:
            status = self.bench.provider_status()
            engine = status.mode if status.ready else "offline"
        run_id = uuid.uuid4().hex[:12]
        rec = RunRecord(run_id, ws.id, question, engine, "running")
        self.store.save(rec)
        state = {
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
            "metrics": {"retry_reasons": []},
            "trace": [],
        }
        return self._drive(rec, state, on_event)

    def resume(
        self, run_id: str, response: dict[str, Any] | None, on_event: Event | None = None
    ) -> RunRecord:
        """Answer a review (``response``) or, for a failed run, continue from its checkpoint."""
        rec = self.store.get(run_id)
        if rec is None:
            raise MasisError(f"There is no run '{run_id}'.")
        if rec.status == "needs_human":
            if response is None:
                raise MasisError("This run waits for a review response.")
            payload = rec.hitl or {}
            from masis_core.nodes.human_review import validate

            try:
                validate(payload, response)
            except InvalidResponse as exc:
                raise MasisError(str(exc)) from exc
            return self._drive(rec, Command(resume=response), on_event)
        if rec.status == "failed":
            return self._drive(rec, None, on_event)
        raise MasisError(f"Run '{run_id}' is {rec.status}; only paused or failed runs resume.")

    def _drive(self, rec: RunRecord, graph_input: Any, on_event: Event | None) -> RunRecord:
        config = self._config(rec.run_id, rec.engine)
        rec.status, rec.error = "running", None
        try:
            for mode, chunk in self.graph.stream(
                graph_input, config, stream_mode=["updates", "custom"]
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
        except (MasisError, InvalidResponse) as exc:
            rec.status, rec.error = "failed", str(exc)
        except Exception as exc:
            log.exception("run %s failed", rec.run_id)
            gone = self.bench.store.unreachable(exc)
            rec.status = "failed"
            rec.error = str(gone) if gone else f"{type(exc).__name__}: {exc}"
        self._record_state(rec, config)
        self.store.save(rec)
        return rec

    def _record_state(self, rec: RunRecord, config: dict[str, Any]) -> None:
        snapshot = self.graph.get_state(config)
        values = snapshot.values or {}
        rec.question = values.get("question", rec.question)
        rec.trace = values.get("trace", [])
        rec.metrics = values.get("metrics", {})
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
