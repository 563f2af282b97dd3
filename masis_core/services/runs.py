"""Starting, resuming and recording research runs (the engine behind the CLI and the UI).

``RunService`` runs them; the pages, the CLI and the jobs reach it through the door
(``services.access.Door``), which checks the principal's role first. The work sits beside it
in this package: the record and its table (``records``), driving the graph (``driving``),
the heartbeat (``heartbeat``), claiming a run to resume it (``claims``) and threads of
follow-ups (``threads``)."""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable
from typing import Any

from masis_core.answers.followup import Rewrite
from masis_core.answers.questions import check_question
from masis_core.errors import InputError, WorkspaceError
from masis_core.graph.build import compile_graph
from masis_core.modes import Mode
from masis_core.policy import POLICY
from masis_core.services import claims, threads
from masis_core.services.calibration import refit_with_verdicts
from masis_core.services.driving import Event, RunDriver
from masis_core.services.records import INTERRUPTED, RunRecord, RunStore
from masis_core.services.web import make_web_search
from masis_core.state import EngineName, ResearchInput
from masis_core.storage.db import Connection
from masis_core.storage.owners import current_owner
from masis_core.storage.registry import Scope, now_iso
from masis_core.workspaces.workbench import Workbench

__all__ = ["INTERRUPTED", "Event", "RunRecord", "RunService", "RunStore"]

log = logging.getLogger(__name__)


class RunService:
    """One per process (the UI caches it): the compiled graph plus the run store."""

    def __init__(self, bench: Workbench, web_search: Any = None) -> None:
        self.bench = bench
        self.graph = compile_graph(bench.db)
        self.store = RunStore(bench)
        # No key, no web hook: then nothing in a run can attempt a web request.
        self.web_search = web_search if web_search is not None else make_web_search(bench.settings)
        self.driver = RunDriver(bench, self.graph, self.store, self.web_search)
        self.store.sweep_orphans()

    def get(self, run_id: str, scope: Scope | None = None) -> RunRecord | None:
        return self.store.get(run_id, scope)

    def mark(self, run_id: str, right: bool | None) -> None:
        """The analyst's thumbs up (right) or down (wrong) on a run's answer: also a labelled
        point of its workspace's confidence calibration, refitted at once."""
        self.store.set_feedback(run_id, right)
        rec = self.store.get(run_id)
        if rec is not None:
            refit_with_verdicts(self.bench, self.store, rec.workspace_id)

    def runs(
        self,
        workspace_id: str,
        status: str | None = None,
        limit: int = 200,
        scope: Scope | None = None,
    ) -> list[RunRecord]:
        """A workspace's runs, newest first (none when the scope may not see it)."""
        return self.store.list(workspace_id, limit=limit, status=status, scope=scope)

    def thread(self, run_id: str) -> list[RunRecord]:
        """Every turn of the thread ``run_id`` belongs to, oldest first."""
        return threads.thread(self.store, run_id)

    def rewrite(self, run_id: str, follow_up: str, engine: EngineName | None = None) -> Rewrite:
        """A follow-up to run ``run_id`` as a standalone question (``threads.rewrite``)."""
        return threads.rewrite(self.bench, self.store, run_id, follow_up, engine)

    def delete_workspace(
        self, workspace_id: str, then: Callable[[Connection, int], None] | None = None
    ) -> int:
        """The workspace and everything of it: chunks, keyword rows, files, runs and their
        checkpoints. Returns the number of runs removed; ``then(conn, runs)`` is written in
        the transaction that deletes the workspace's row (its audit)."""
        runs = self.store.list(workspace_id, limit=1_000_000)
        for rec in runs:
            self.graph.checkpointer.delete_thread(rec.run_id)
        self.store.delete_workspace(workspace_id)
        after = None if then is None else functools.partial(_with_count, then, len(runs))
        self.bench.delete_workspace(workspace_id, after)
        return len(runs)

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
        asked_by: str | None = None,
    ) -> tuple[RunRecord, ResearchInput]:
        """Check the question, record the run as 'running' and owned by this process, and
        return it with the graph's input; ``mode`` (dense | bm25 | hybrid) overrides
        MASIS_RETRIEVAL_MODE. The record exists before any node runs, so its id can go into
        the address at once. ``thread``: the run this one follows up (any turn of its thread);
        ``follow_up``: the analyst's words before the rewrite, kept with the run; ``asked_by``:
        the account asking (team mode)."""
        question = check_question(question)
        if max_retries is not None and not 0 <= max_retries <= POLICY.max_retries_limit:
            raise InputError(
                f"max_retries is {max_retries}: give 0 to {POLICY.max_retries_limit} retries "
                "before the run asks you."
            )
        ws = self.bench.registry.get_workspace(workspace_id)
        if ws is None:
            raise WorkspaceError(f"There is no workspace '{workspace_id}'.")
        thread_id = threads.thread_of(self.store, thread, ws.id) if thread else None
        if engine is None:
            engine = threads.engine_name(self.bench)
        run_id = uuid.uuid4().hex[:12]
        rec = RunRecord(run_id, ws.id, question, engine, "running", owner=current_owner())
        rec.thread, rec.follow_up = thread_id, (follow_up or "").strip() or None
        rec.asked_by = asked_by
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
        if thread and (carried := threads.subject(self.store, thread, question)):
            state["subject"] = carried
        rec.input = dict(state)
        self.store.save(rec)
        return rec, state

    def resume(
        self, run_id: str, response: dict[str, Any] | None, on_event: Event | None = None
    ) -> RunRecord:
        """Answer a review (``response``) or, for a failed run, continue from its checkpoint."""
        rec, graph_input = self.claim(run_id, response)
        return self.drive(rec, graph_input, on_event)

    def claim(self, run_id: str, response: dict[str, Any] | None) -> tuple[RunRecord, Any]:
        """Take the run for this process; a second claimant gets ``RunBusy`` (``claims.claim``)."""
        return claims.claim(self.store, self.graph, run_id, response)

    def drive(self, rec: RunRecord, graph_input: Any, on_event: Event | None = None) -> RunRecord:
        """Run the graph until it ends or pauses, and record it (``RunDriver.drive``)."""
        rec = self.driver.drive(rec, graph_input, on_event)
        if rec.status == "completed" and rec.metrics.get("lead_chosen_by_analyst") is not None:
            # The choice was recorded as a verdict with the run (``driving.record_state``).
            try:
                refit_with_verdicts(self.bench, self.store, rec.workspace_id)
            except Exception:  # the run is done; the next verdict or calibration job refits
                log.warning("refit after run %s's chosen lead failed", rec.run_id, exc_info=True)
        return rec


def _with_count(then: Callable[[Connection, int], None], runs: int, conn: Connection) -> None:
    then(conn, runs)
