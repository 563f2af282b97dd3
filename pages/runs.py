"""Runs: the workspace's history, a past run in full, and its Markdown export."""

from __future__ import annotations

import functools

import streamlit as st

from masis_core.services.inspection import run_table
from masis_core.services.report_pdf import pdf_filename
from masis_core.services.reports import (
    report_filename,
    run_markdown,
    thread_filename,
    thread_markdown,
)
from masis_core.text.markup import plain
from ui.auth import door
from ui.evidence import report_pdf
from ui.follow import watch_runs
from ui.followup import thread_caption
from ui.sidebar import run_picker, workspace_runs_or_stop
from ui.trace import render_trace
from ui.views import question_heading, render_answer, status_line

ws, runs = workspace_runs_or_stop("🗂️ Runs")
running = [r.run_id for r in runs if r.status == "running"]
if running:
    watch_runs(running)

st.dataframe(
    run_table(runs),
    hide_index=True,
    width="stretch",
    column_config={"confidence": st.column_config.NumberColumn(format="%d%%")},
)

rec = run_picker(
    "Open a run",
    runs,
    "runs-open",
    lambda r: f"{r.run_id} · {r.shown_status} · {plain(r.question[:80])}",
)
audited = functools.partial(door().exported, rec.run_id)  # a download is an audited export
left, mid, right = st.columns(3)
left.download_button(
    "Export as Markdown",
    run_markdown(rec),
    file_name=report_filename(rec),
    mime="text/markdown",
    key=f"export-{rec.run_id}",
    on_click=audited,
)
left.download_button(
    "Export as PDF",
    functools.partial(report_pdf, rec),  # made on click: it draws every cited page
    file_name=pdf_filename(rec),
    mime="application/pdf",
    key=f"export-pdf-{rec.run_id}",
    on_click=audited,
)
turns = door().thread(rec.run_id)
if len(turns) > 1:
    left.download_button(
        f"Export the thread ({len(turns)} turns)",
        thread_markdown(turns),
        file_name=thread_filename(turns),
        mime="text/markdown",
        key=f"export-thread-{rec.thread_id}",
        on_click=audited,
    )
if mid.button(
    "Continue on the Research page" if rec.status == "needs_human" else "Open in Research"
):
    st.switch_page("pages/research.py", query_params={"run": rec.run_id})
if right.button("Inspect retrieval"):
    st.switch_page("pages/inspector.py", query_params={"run": rec.run_id})

if rec.status == "needs_human":
    watch_runs([rec.run_id], "needs_human")  # answered or cancelled elsewhere: redraw
question_heading(rec.question)
thread_caption(rec)
status_line(rec)
render_answer(rec, ws)
render_trace(rec.trace, folded=True)  # the answer first; the steps folded below it
