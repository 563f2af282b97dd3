"""Driving a run: stream the graph until it ends or pauses, pass its progress to the caller,
and write the record from the checkpoint whatever stopped it."""

from __future__ import annotations

import concurrent.futures.thread
import logging
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from masis_core.answers.providers import make_engine
from masis_core.errors import MasisError
from masis_core.graph.context import RunContext
from masis_core.services.heartbeat import Heartbeat
from masis_core.services.records import INTERRUPTED, RunRecord, RunStore
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)

Event = Callable[[str, dict[str, Any]], None]  # (kind: "node" | "progress", payload)


def run_config(run_id: str) -> RunnableConfig:
    """The graph's config for a run: its checkpoint thread is the run id."""
    return {"configurable": {"thread_id": run_id}, "recursion_limit": 100}


class RunDriver:
    """Runs the graph for one run at a time per call; the heartbeat covers every run it drives."""

    def __init__(self, bench: Workbench, graph: Any, store: RunStore, web_search: Any) -> None:
        self.bench = bench
        self.graph = graph
        self.store = store
        self.web_search = web_search
        self.heartbeat = Heartbeat(store)

    def drive(self, rec: RunRecord, graph_input: Any, on_event: Event | None = None) -> RunRecord:
        """Run the graph until it ends or pauses. Whatever stops it — an error, a stopped
        script, Ctrl-C — the record is written from the checkpoint before this returns or
        raises, so no run stays 'running' behind its owner's back."""
        config = run_config(rec.run_id)
        rec.status, rec.error = "running", None
        self.heartbeat.beating(rec.run_id, True)
        try:
            self._stream(rec, graph_input, config, on_event)
        except MasisError as exc:
            rec.status, rec.error = "failed", str(exc)
        except Exception as exc:
            rec.status, rec.error = "failed", self._failure(rec, exc)
        except BaseException:
            rec.status, rec.error = "failed", INTERRUPTED
            raise
        finally:
            self.heartbeat.beating(rec.run_id, False)
            record_state(rec, self.graph.get_state(config))
            self.store.save(rec)
        return rec

    def _failure(self, rec: RunRecord, exc: Exception) -> str:
        """The error a failed run shows, logged once (called while ``exc`` is handled)."""
        if stopping(exc):
            # The server stopped under the run (Ctrl-C, a restart): not the run's fault and
            # nothing to debug; it resumes from its checkpoint.
            log.warning("run %s interrupted: the process is stopping", rec.run_id)
            return INTERRUPTED
        log.exception("run %s failed", rec.run_id)
        gone = self.bench.store.unreachable(exc)
        return str(gone) if gone else f"{type(exc).__name__}: {exc}"

    def _stream(
        self, rec: RunRecord, graph_input: Any, config: RunnableConfig, on_event: Event | None
    ) -> None:
        engine = make_engine(self.bench.settings, rec.engine)
        context = RunContext(self.bench, engine, self.web_search)
        for mode, chunk in self.graph.stream(
            graph_input, config, context=context, stream_mode=["updates", "custom"]
        ):
            if on_event is not None:
                forward(on_event, mode, chunk)


def stopping(exc: Exception) -> bool:
    """Python refusing new work because the interpreter is exiting: the graph runs its nodes
    on a thread pool, whose submissions fail once ``concurrent.futures`` has seen the exit
    begin (its module flag; an executor shut down for another reason is a real failure)."""
    exiting = bool(getattr(concurrent.futures.thread, "_shutdown", False))
    return exiting and isinstance(exc, RuntimeError) and "cannot schedule new futures" in str(exc)


def forward(on_event: Event, mode: str, chunk: Any) -> None:
    """A custom chunk is progress; an update's trace entries are the nodes that ran."""
    if mode == "custom":
        on_event("progress", chunk)
        return
    for node_name, update in chunk.items():
        if node_name == "__interrupt__" or not isinstance(update, dict):
            continue
        for entry in update.get("trace") or []:
            on_event("node", entry)


def record_state(rec: RunRecord, snapshot: StateSnapshot) -> None:
    """Copy the checkpoint's answer, trace and metrics into the record and settle its status:
    paused at a review, or what the graph said (completed unless it said otherwise)."""
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
    if rec.status == "completed" and rec.metrics.get("lead_chosen_by_analyst") is not None:
        # Leading with the passage that answers is the analyst's verdict on it (and on the
        # lead passed over: ``calibration.verdict_points``) unless they gave one already.
        rec.feedback = True if rec.feedback is None else rec.feedback
    if rec.status == "cancelled":
        rec.answer, rec.citations = None, []
