"""Following jobs from a page: the live per-node panels of a run, the per-file boxes of a batch,
the progress of a task.

A fragment redraws itself every ``POLL_S`` from the job's state while the job runs; the page
can be left and come back at any moment, since the work does not live in the script. When the
job ends the fragment reruns the whole page once, which then draws the finished result.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from masis_core.errors import MasisError
from masis_core.services.jobs import FileProgress, Job
from masis_core.text.markup import counted, untrusted
from ui.auth import door
from ui.resources import jobs, run_service
from ui.trace import render_trace

POLL_S = 0.5
BoxState = Literal["running", "complete", "error"]
FILE_ICONS: dict[str, BoxState] = {
    "ingested": "complete",
    "duplicate": "complete",
    "failed": "error",
}


@st.fragment(run_every=POLL_S)
def follow_run(job_id: str) -> None:
    """The run's panels so far and what is running now; a full rerun once it ends."""
    job = jobs().get(job_id)
    if job is None:
        return
    render_trace(job.trace())
    if job.finished:
        st.rerun()
    progress = job.progress
    where = f"{progress.get('node')}: {progress.get('status', '')}" if progress else "starting"
    st.caption(f"⏳ {where} — you can switch pages; the run goes on and shows here when done.")


def _file_box(entry: FileProgress, index: int, total: int) -> None:
    report = entry.report
    state: BoxState
    if report is not None:
        label = f"{untrusted(report.file)}: {report.status}"
        state = FILE_ICONS.get(report.status, "complete")
    elif entry.stage == "cancelled":
        label, state = f"{untrusted(entry.name)}: cancelled", "error"
    else:
        label, state = f"{untrusted(entry.name)} ({index + 1}/{total})", "running"
    # Not ``with st.status(...)``: leaving that block marks a running box complete, and
    # files still queued showed a green ✓ while "0 of 3 files done".
    box = st.status(label, state=state, expanded=False)
    if report is not None:
        box.progress(1.0, text=untrusted(report.line()))
    elif entry.stage == "cancelled":
        box.progress(0.0, text="not ingested: the batch was cancelled before this file")
    else:
        share = min(1.0, entry.done / entry.total) if entry.total else 0.0
        text = "waiting" if entry.stage == "queued" else f"{entry.stage} {entry.done}/{entry.total}"
        box.progress(share, text=text)


def batch_boxes(files: list[FileProgress]) -> None:
    """One collapsed box per file (``Job.files_now``): queued, in progress, or its outcome."""
    for i, entry in enumerate(files):
        _file_box(entry, i, len(files))


@st.fragment(run_every=POLL_S)
def follow_batch(job_id: str) -> None:
    """A running batch: its boxes, a count, and a cancel button; a full rerun once it ends,
    and each time a file finishes, so the page's document list shows it at once."""
    job = jobs().get(job_id)
    if job is None:
        return
    if job.finished:
        st.rerun()
    files = job.files_now()  # the line and the boxes say the same moment
    done = sum(1 for f in files if f.finished)
    seen_key = f"batch-done-{job.id}"
    if done != st.session_state.setdefault(seen_key, done):
        st.session_state[seen_key] = done
        st.rerun()  # the whole page: the list below this fragment is drawn by the page
    st.caption(f"⏳ {done} of {len(files)} files done — you can switch pages; the batch goes on.")
    if job.cancel_requested:
        st.caption(
            "Cancelling: a file being read or OCRed stops; one being stored finishes; "
            "the rest are not started."
        )
    elif door().may_cancel(job) and st.button("Cancel the batch", key=f"cancel-{job.id}"):
        _cancel(job)
    batch_boxes(files)


@st.fragment(run_every=POLL_S)
def follow_task(job_id: str, after: str, cancel_label: str | None = None) -> None:
    """A running task (an evaluation, a calibration): the progress it reports (``done``,
    ``total``, ``what``), ``after`` it, and a cancel button when given a label; a full rerun
    once it ends."""
    job = jobs().get(job_id)
    if job is None:
        return
    if job.finished:
        st.rerun()
    p = job.progress or {}
    done, total = int(p.get("done") or 0), int(p.get("total") or 0)
    st.progress(
        min(1.0, done / total) if total else 0.0,
        text=f"⏳ {p.get('what', 'starting')} {done}/{total} — {after}",
    )
    if job.cancel_requested:
        st.caption("Cancelling: it stops before its next step and keeps nothing.")
    elif (
        cancel_label and door().may_cancel(job) and st.button(cancel_label, key=f"cancel-{job.id}")
    ):
        _cancel(job)


def _cancel(job: Job) -> None:
    """The cancel through the door: checked again at the click, and audited."""
    try:
        door().cancel(job)
    except MasisError as exc:
        st.error(untrusted(str(exc)))


@st.fragment(run_every=2 * POLL_S)
def watch_record(run_id: str) -> None:
    """A run driven by another process: its record is written when it pauses or ends."""
    rec = run_service().get(run_id)
    if rec is None or rec.status != "running":
        st.rerun()
    st.caption(
        f"⏳ Run `{run_id}` is running in another process ({rec.owner}); "
        "it shows here when it pauses or ends."
    )


@st.fragment(run_every=2 * POLL_S)
def watch_runs(run_ids: list[str], status: str = "running") -> None:
    """Runs that had ``status`` when a page showing them was drawn: the page reruns once one
    has another. The Runs page had shown a finished run as "running" until the next click,
    and a paused run cancelled from another tab (or the CLI) kept its "Draft answer —
    awaiting your review" (``needs_human``)."""
    service = run_service()
    for run_id in run_ids:
        rec = service.get(run_id)
        if rec is None or rec.status != status:
            st.rerun()
    if status != "running":
        return
    st.caption(
        f"⏳ {counted(len(run_ids), 'run')} still running; this page updates when "
        f"{'it pauses or ends' if len(run_ids) == 1 else 'one pauses or ends'}."
    )
