"""Long work as jobs owned by the server process, not by a browser session.

Streamlit stops a page's script at its next ``st.*`` call whenever the analyst clicks anything
or switches page. Work done inside the script died with it: a run stayed 'running' forever, an
upload batch left half-ingested rows and silently skipped the rest of its files. Here a page
only *starts* a job and *follows* it; the work runs in a worker thread of the server process
(one small pool for research runs, one worker for ingest batches, so a 20-file batch never
holds up a question), and records its outcome in ``try/finally`` whatever ends it.

Jobs live in the memory of the process that runs them: a page that comes back finds its job by
id (a run id, or the batch id kept in the session). What must survive the process — run
records, checkpoints, ingested documents — is in the database (SQLite, or PostgreSQL in
server mode) and Chroma; a run whose process died is swept to 'failed' (resumable) by the next
``RunService``.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, get_args

from masis_core.errors import WorkspaceError
from masis_core.services.access import Door
from masis_core.services.runs import RunRecord, RunService
from masis_core.storage.db import Connection
from masis_core.storage.registry import Workspace

log = logging.getLogger(__name__)

JobKind = Literal["research", "ingest", "evaluation", "calibration"]
JobState = Literal["queued", "running", "done", "failed", "cancelled"]
# Finished jobs kept for pages that come back to them; older ones are forgotten (their
# results are in the run store and the registry anyway).
KEEP_FINISHED = 200


Progress = Callable[[str, int, int], None]  # (stage, done, total)
# What to queue after a batch has ingested into a workspace (the confidence calibration,
# ``evaluation/calibration.py``): the work of a task, or None for nothing.
AfterBatch = Callable[[Workspace], Callable[["Job"], Any] | None]


class BatchIngestor(Protocol):
    """What a batch job needs of the ingest pipeline (``ingest.pipeline.Ingestor``); the
    pipeline sits above this package, so the job manager is handed one."""

    def display_names(self, sources: Sequence[Any]) -> list[str]: ...

    def ingest_each(
        self,
        ws: Workspace,
        sources: Sequence[Any],
        on_start: Callable[[int, Any], Progress | None],
        cancelled: Callable[[], bool],
        added: Callable[[Connection, str, str], None] | None = None,
    ) -> Iterator[Any]: ...


@dataclass
class FileProgress:
    """One file of a batch as the page shows it."""

    name: str
    stage: str = "queued"  # queued, parsing, embedding, storing, publishing, then the outcome
    done: int = 0
    total: int = 0
    report: Any = None  # the file's report (``ingest.pipeline.FileReport``) once done

    @property
    def finished(self) -> bool:
        return self.report is not None or self.stage == "cancelled"


@dataclass
class Job:
    """One unit of long work and what a page needs to follow it."""

    id: str
    kind: JobKind
    workspace_id: str
    title: str
    # The account that started it (empty: the local user). A job runs on in the server after
    # that browser session signs out; it stays the account's, in the audit log too.
    account: str = ""
    state: JobState = "queued"
    error: str | None = None
    # research: the trace the run had before this job, then each node's entry as it finishes
    base_trace: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    progress: dict[str, Any] | None = None
    record: RunRecord | None = None
    # ingest: one entry per file, in batch order
    files: list[FileProgress] = field(default_factory=list)
    # other work (an evaluation): what the work returned
    result: Any = None
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the job to stop at its next safe point (a batch: before its next file)."""
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def files_now(self) -> list[FileProgress]:
        """The batch's files as they stand at one moment. The worker goes on updating them
        while a page draws: a line counted before the boxes were drawn said "3 of 6 files
        done" above five boxes that had meanwhile turned ingested. Both come from one copy."""
        return [replace(f) for f in self.files]

    def on_event(self, kind: str, payload: dict[str, Any]) -> None:
        """``RunService.drive``'s event hook: node entries are kept, progress overwritten."""
        with self._lock:
            if kind == "node":
                self.nodes.append(payload)
            else:
                self.progress = payload

    def trace(self) -> list[dict[str, Any]]:
        """The run's trace so far: what it had before this job, then the new panels."""
        with self._lock:
            return [*self.base_trace, *self.nodes]

    def _finish(self, state: JobState, error: str | None = None) -> None:
        with self._lock:
            self.state, self.error, self.progress = state, error, None
        self._done.set()


class JobManager:
    """The server process's workers. One per process (the UI caches it)."""

    def __init__(
        self,
        research: RunService,
        ingestor: BatchIngestor,
        run_workers: int = 2,
        after_batch: AfterBatch | None = None,
    ) -> None:
        self.research = research
        self.ingestor = ingestor
        self.after_batch = after_batch
        self._runs = ThreadPoolExecutor(run_workers, thread_name_prefix="masis-run")
        self._batches = ThreadPoolExecutor(1, thread_name_prefix="masis-ingest")
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    # -- research runs ------------------------------------------------------------------
    def ask(
        self, workspace_id: str, question: str, *, door: Door | None = None, **options: Any
    ) -> Job:
        """Record the run (input errors raise here, before any job exists), then drive it in
        a worker. The job's id is the run id. ``door``: the principal asking (its role in
        the workspace is checked); None for the local user."""
        start = door.start if door is not None else self.research.start
        rec, state = start(workspace_id, question, **options)
        return self._run_job(rec, state, rec.question, account=_account(door))

    def resume(
        self, run_id: str, response: dict[str, Any] | None, *, door: Door | None = None
    ) -> Job:
        """Claim the run for this process (a second claimant gets ``RunBusy`` at once), then
        drive it in a worker."""
        if door is not None:
            door.require_resume(run_id)
        rec, graph_input = self.research.claim(run_id, response)
        heading = rec.question
        if response and response.get("action") == "rephrase":
            heading = str(response.get("text") or "").strip() or heading
        return self._run_job(
            rec, graph_input, heading, base_trace=rec.trace, account=_account(door)
        )

    def _run_job(
        self,
        rec: RunRecord,
        graph_input: Any,
        heading: str,
        base_trace: list[dict[str, Any]] | None = None,
        account: str = "",
    ) -> Job:
        job = Job(
            rec.run_id,
            "research",
            rec.workspace_id,
            heading,
            account=account,
            base_trace=base_trace or [],
        )

        def work() -> None:
            job.state = "running"
            try:
                job.record = self.research.drive(rec, graph_input, job.on_event)
            except BaseException as exc:  # drive has recorded the run; the job says why
                log.exception("run job %s ended abnormally", job.id)
                job._finish("failed", f"{type(exc).__name__}: {exc}")
                raise
            job._finish("done")

        self._submit(self._runs, job, work)
        return job

    # -- ingest batches -----------------------------------------------------------------
    def ingest(self, ws: Workspace, sources: Sequence[Any], *, door: Door | None = None) -> Job:
        """Ingest files in order in the batch worker; each file's stage and report show on
        the job as they happen, files not yet started stay 'queued'. ``door``: the principal
        uploading (it needs the editor role)."""
        if door is not None:
            ws = door.workspace(ws.id, "upload")
            door.audit("document.upload", ws.id, f"{len(sources)} files")
        names = self.ingestor.display_names(sources)
        title = names[0] if len(names) == 1 else f"{len(names)} files"
        self.cancel_active(ws.id, "calibration")  # fitted on documents about to change
        job = Job(uuid.uuid4().hex[:12], "ingest", ws.id, title, account=_account(door))
        job.files = [FileProgress(n) for n in names]

        def on_start(i: int, _source: Any) -> Progress:
            entry = job.files[i]
            entry.stage = "parsing"

            def progress(stage: str, done: int, total: int) -> None:
                entry.stage, entry.done, entry.total = stage, done, total

            return progress

        revoked: list[str] = []

        def stop() -> bool:
            """Asked before each file: the batch's cancel, or the uploader's role gone (a
            removed member's batch had kept writing: the role was checked once, at the start)."""
            if not revoked and door is not None and not door.may(ws.id, "upload"):
                revoked.append(
                    f"{door.who.name} may no longer add documents to {ws.id} (removed or "
                    "made viewer meanwhile): the rest of the batch was not ingested."
                )
                door.audit("access.refused", ws.id, "upload: role gone mid-batch")
            return job._cancel.is_set() or bool(revoked)

        def work() -> None:
            job.state = "running"
            added = door.added(ws.id) if door is not None else None  # each document's row
            reports = self.ingestor.ingest_each(ws, list(sources), on_start, stop, added)
            try:
                for i, report in enumerate(reports):
                    job.files[i].report, job.files[i].stage = report, report.status
            except BaseException as exc:
                log.exception("ingest batch %s ended abnormally", job.id)
                job._finish("failed", f"{type(exc).__name__}: {exc}")
                raise
            finally:
                for entry in job.files:
                    if not entry.finished:
                        entry.stage = "cancelled"
            if any(getattr(f.report, "status", None) == "ingested" for f in job.files):
                self._after_batch(ws)  # queued before the batch says it is done
            stopped = job.cancel_requested or bool(revoked)
            job._finish("cancelled" if stopped else "done", revoked[0] if revoked else None)

        self._submit(self._batches, job, work)
        return job

    def _after_batch(self, ws: Workspace) -> None:
        """Queue the follow-up work of a batch that added documents, replacing any such work
        of the workspace not yet finished (it would fit documents that have changed)."""
        work = self.after_batch(ws) if self.after_batch else None
        if work is not None:
            self.cancel_active(ws.id, "calibration")
            self.task("calibration", ws.id, f"confidence calibration of {ws.id}", work)

    # -- other long work ----------------------------------------------------------------
    def task(self, kind: JobKind, workspace_id: str, title: str, work: Callable[[Job], Any]) -> Job:
        """Other long work of a workspace (an evaluation) in the batch worker, after any
        batch queued before it: ``work(job)`` reports through ``job.progress`` and its return
        value becomes ``job.result``; an error ends the job 'failed' with its message, and
        work that returns after ``cancel`` ends it 'cancelled'."""
        job = Job(uuid.uuid4().hex[:12], kind, workspace_id, title)

        def run() -> None:
            job.state = "running"
            try:
                job.result = work(job)
            except Exception as exc:
                log.warning("%s job %s failed: %s", kind, job.id, exc)
                job._finish("failed", str(exc))
                return
            except BaseException as exc:
                job._finish("failed", f"{type(exc).__name__}: {exc}")
                raise
            job._finish("cancelled" if job.cancel_requested else "done")

        self._submit(self._batches, job, run)
        return job

    # -- following ----------------------------------------------------------------------
    def get(self, job_id: str | None) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id or "")

    def active(self, workspace_id: str, kind: JobKind) -> list[Job]:
        """Unfinished jobs of a workspace, oldest first (any session may have started them)."""
        with self._lock:
            jobs = list(self._jobs.values())
        return [
            j for j in jobs if j.workspace_id == workspace_id and j.kind == kind and not j.finished
        ]

    def working(self, workspace_id: str) -> list[Job]:
        """Unfinished jobs of a workspace, of every kind."""
        return [j for kind in get_args(JobKind) for j in self.active(workspace_id, kind)]

    def delete_workspace(
        self, workspace_id: str, then: Callable[[Connection, int], None] | None = None
    ) -> int:
        """Delete a workspace with its runs (how many), refused while any of its jobs works:
        a batch, run, evaluation or calibration would write into what is being removed. The
        check sits here, not in the page, so a job started after the page was drawn counts."""
        busy = self.working(workspace_id)
        if busy:
            raise WorkspaceError(
                f"Workspace {workspace_id!r} is busy ({', '.join(sorted({j.kind for j in busy}))}"
                "); delete it once that work has ended."
            )
        return self.research.delete_workspace(workspace_id, then)

    def cancel_active(self, workspace_id: str, kind: JobKind) -> None:
        for job in self.active(workspace_id, kind):
            job.cancel()

    def _submit(self, pool: ThreadPoolExecutor, job: Job, work: Callable[[], None]) -> None:
        with self._lock:
            self._jobs[job.id] = job
            finished = [k for k, j in self._jobs.items() if j.finished]
            for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
                del self._jobs[key]
        pool.submit(work)


def _account(door: Door | None) -> str:
    return "" if door is None or door.who.local else door.who.name
