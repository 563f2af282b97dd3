"""Research: ask, watch each node finish, read the cited answer, answer a review in place.

Runs are jobs of the server process: this page starts one and follows it, and the analyst may
switch pages meanwhile. The run id goes into the address (``?run=…``) at once.
"""

from __future__ import annotations

import streamlit as st

from masis_core.errors import MasisError
from masis_core.modes import MODES
from masis_core.policy import POLICY
from masis_core.services.runs import RunRecord
from masis_core.services.web import parse_domains
from masis_core.text.markup import untrusted
from ui.auth import door
from ui.folders import asked_diff, show_comparison
from ui.follow import follow_run, watch_record, watch_runs
from ui.followup import ask_follow_up, thread_caption
from ui.regions import region
from ui.resources import jobs, workbench
from ui.sidebar import workspace_or_stop
from ui.trace import render_trace
from ui.views import (
    is_final,
    not_yours,
    question_heading,
    render_answer,
    review_form,
    status_line,
)

# The run this browser session looked at last: the page comes back to it from the navigation.
LAST_RUN = "research_run"

ws = workspace_or_stop("🔎 Research")
bench, workers = workbench(), jobs()
web_ready, web_reason = bench.web_status()

with st.form("ask"):
    question = st.text_area("Question", placeholder="What do your documents say about …?")
    left, mid, right = st.columns(3)
    web = left.toggle(
        "Search the web too",
        disabled=not web_ready,
        help=web_reason if not web_ready else "Tavily results are cited beside your documents.",
    )
    mode = mid.selectbox(
        "Retrieval",
        MODES,
        index=MODES.index(bench.settings.retrieval_mode),
        help="hybrid: meaning and exact terms fused; dense: meaning only; bm25: terms only.",
    )
    max_retries = right.number_input(
        "Max retries before asking you",
        min_value=0,
        max_value=POLICY.max_retries_limit,
        value=POLICY.default_max_retries,
        step=1,
    )
    trusted = left.toggle(
        "Trusted sources only",
        value=bench.settings.web_trusted_only,
        disabled=not web_ready,
        help="Web results only from the domains below (Tavily's domain filter).",
    )
    domains = st.text_input(
        "Trusted domains",
        value=", ".join(bench.settings.trusted_domains),
        disabled=not web_ready,
    )
    asked = st.form_submit_button("Ask", type="primary")
if not web_ready:
    st.caption(f"🌐 {web_reason}")

# Filled last, so a run resumed below is no longer listed as paused.
paused_box = st.container()
said = st.container()  # what asking said, above the run
run_box = st.container()  # the run shown, in one place whatever was said above it


def show(run_id: str) -> None:
    st.query_params["run"] = run_id
    st.session_state[LAST_RUN] = run_id


def start_resume(rec: RunRecord, response: dict | None) -> None:
    try:
        workers.resume(rec.run_id, response, door=door())
    except MasisError as exc:
        st.error(untrusted(str(exc)))
    else:
        st.rerun()


# What the form says applies to a follow-up too: it is asked like any question.
options = {
    "web": web,
    "max_retries": int(max_retries),
    "mode": mode,
    "trusted_only": trusted,
    "trusted_domains": parse_domains(domains),
}

with said:
    if asked and not question.strip():
        st.warning("Type a question first.")
    elif asked and (diff := asked_diff(ws, question)) is not None:  # "compare v2 and v3 of …"
        show_comparison(diff)
    elif asked:
        try:
            started = workers.ask(ws.id, question, door=door(), **options)
        except MasisError as exc:
            st.error(untrusted(str(exc)))
        else:
            show(started.id)

run_id = st.query_params.get("run") or st.session_state.get(LAST_RUN)
rec = door().run(run_id) if run_id else None
if rec is not None and rec.workspace_id != ws.id:
    rec = None  # a link from another workspace
job = workers.get(rec.run_id) if rec is not None else None

if rec is not None:
    show(rec.run_id)
    following = job if job is not None and not job.finished else None  # a run still in this process
    # A run whose status changed (a pick resumed it, it completed) is drawn afresh: the paused
    # run's picker had stayed, faded, beside the completed answer while the page redrew.
    with run_box, region("research-run", (rec.run_id, rec.status, following is not None)):
        if following is not None:
            question_heading(following.title)
            follow_run(following.id)
        elif rec.status == "running":  # driven by another process (the CLI, another server)
            question_heading(rec.question)
            watch_record(rec.run_id)
        else:
            # The run has ended or paused: what it asks of the analyst (the review) and its answer
            # come first; the steps that led there fold below them.
            question_heading(rec.question)
            thread_caption(rec)
            status_line(rec)
            if not door().may_review(rec):  # another account's run: theirs to review or resume
                if rec.status in ("failed", "needs_human"):
                    st.info(not_yours(rec), icon="🔒")
            elif rec.status == "failed" and st.button("Resume from the last checkpoint"):
                start_resume(rec, None)
            elif rec.status == "needs_human":
                watch_runs([rec.run_id], "needs_human")  # answered or cancelled elsewhere: redraw
                submitted = review_form(rec)
                if submitted is not None:
                    start_resume(rec, submitted)
            render_answer(rec, ws)
            follow_up_run = ask_follow_up(rec, options) if rec.answer and is_final(rec) else None
            if follow_up_run is not None:
                show(follow_up_run)
                st.rerun()
            render_trace(rec.trace, folded=True)

gate = door()  # one door for the list: each door() looks the session up again
paused = [r for r in gate.runs(ws.id, status="needs_human", limit=20) if gate.may_review(r)]
if paused:
    with paused_box.expander(f"🙋 {len(paused)} paused run(s) wait for your review"):
        for run in paused:
            label = f"{run.run_id} · {untrusted(run.question[:90])}"
            if st.button(label, key=f"open-{run.run_id}"):
                show(run.run_id)
                st.rerun()
