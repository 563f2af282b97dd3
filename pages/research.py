"""Research: ask, watch each node finish, read the cited answer, answer a review in place."""

from __future__ import annotations

import streamlit as st

from masis_core.errors import MasisError
from masis_core.ui.resources import researcher, workbench
from masis_core.ui.sidebar import render_sidebar
from masis_core.ui.views import LiveTrace, render_answer, render_trace, review_form, status_line
from masis_core.web import parse_domains

# The review a submit asked for; applied on the next script run, below the stored trace.
PENDING = "review_pending"

ws = render_sidebar()
st.title("🔎 Research")
if ws is None:
    st.info("Create a workspace in the sidebar to start.")
    st.stop()

bench, research = workbench(), researcher()
web_ready, web_reason = bench.web_status()

with st.form("ask"):
    question = st.text_area("Question", placeholder="What do your documents say about …?")
    left, mid, right = st.columns(3)
    web = left.toggle(
        "Search the web too",
        disabled=not web_ready,
        help=web_reason if not web_ready else "Tavily results are cited beside your documents.",
    )
    modes = ["hybrid", "dense", "bm25"]
    mode = mid.selectbox(
        "Retrieval",
        modes,
        index=modes.index(bench.settings.retrieval_mode),
        help="hybrid: meaning and exact terms fused; dense: meaning only; bm25: terms only.",
    )
    max_retries = right.number_input(
        "Max retries before asking you", min_value=0, max_value=5, value=2, step=1
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


def live_run(start, note: str | None = None):
    """Run ``start(on_event)`` with a panel per node as it finishes; the record, or None."""
    if note:
        st.caption(note)
    live = LiveTrace()
    try:
        return start(live)
    except MasisError as exc:
        st.error(str(exc))
        return None
    finally:
        live.done()


rec = None
if asked and not question.strip():
    st.warning("Type a question first.")
elif asked:
    st.markdown(f"#### {question.strip()}")
    rec = live_run(
        lambda on: research.ask(
            ws.id,
            question,
            web=web,
            max_retries=int(max_retries),
            mode=mode,
            trusted_only=trusted,
            trusted_domains=parse_domains(domains),
            on_event=on,
        )
    )
    if rec is not None:
        st.query_params["run"] = rec.run_id
elif run_id := st.query_params.get("run"):
    rec = research.store.get(run_id)
    if rec is not None and rec.workspace_id != ws.id:
        rec = None  # a link from another workspace
    pending = st.session_state.pop(PENDING, {})
    if rec is not None:
        st.markdown(f"#### {rec.question}")
        render_trace(rec.trace)
    if rec is not None and rec.run_id in pending:
        response = pending[rec.run_id]
        note = f"🙋 Your review: {response['action']}" if response else "↻ Resuming"
        rec = live_run(
            lambda on: research.resume(rec.run_id, response, on_event=on), note
        ) or research.store.get(rec.run_id)

if rec is not None:
    status_line(rec)
    if rec.status == "failed" and st.button("Resume from the last checkpoint"):
        st.session_state[PENDING] = {rec.run_id: None}
        st.rerun()
    if rec.status == "needs_human":
        submitted = review_form(rec)
        if submitted is not None:
            st.session_state[PENDING] = {rec.run_id: submitted}
            st.rerun()
    render_answer(rec, ws)

paused = research.store.list(ws.id, status="needs_human", limit=20)
if paused:
    with paused_box.expander(f"🙋 {len(paused)} paused run(s) wait for your review"):
        for run in paused:
            if st.button(f"{run.run_id} · {run.question[:90]}", key=f"open-{run.run_id}"):
                st.query_params["run"] = run.run_id
                st.rerun()
