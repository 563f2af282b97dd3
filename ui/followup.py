"""Follow-up questions under an answer: type, see the standalone rewrite, edit it, ask.

The rewrite is shown before anything runs because a wrong guess at what "it" means would send
retrieval after the wrong topic; the analyst can correct it in place. Each follow-up is its own
run, linked to its thread (``RunService.start(thread=…)``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from masis_core.errors import MasisError
from masis_core.services.runs import RunRecord
from masis_core.text.markup import untrusted
from ui.auth import door
from ui.resources import jobs, run_service
from ui.views import HEADING_CHARS, shorten


def thread_caption(rec: RunRecord) -> None:
    """Where a follow-up sits in its thread, and the words the analyst typed."""
    if not rec.thread:
        return
    turns = run_service().thread(rec.run_id)
    n = next((i for i, t in enumerate(turns, start=1) if t.run_id == rec.run_id), len(turns))
    st.caption(
        f"🧵 Follow-up {n - 1} in thread `{rec.thread}` "
        f"(first question: “{untrusted(shorten(turns[0].question, 120))}”), "
        f"asked as “{untrusted(shorten(rec.follow_up or rec.question, HEADING_CHARS))}”"
    )


def follow_up_box(rec: RunRecord) -> tuple[str, str] | None:
    """The follow-up form under a finished answer; returns (typed, standalone question) when
    the analyst asks it, else None."""
    key = f"follow-{rec.run_id}"
    rewritten_key = f"{key}-question"
    with st.container(border=True):
        st.markdown("**Ask a follow-up**")
        typed = st.text_input(
            "Your follow-up",
            key=f"{key}-typed",
            placeholder="e.g. How often is it serviced?",
            help="Pronouns and short questions are made standalone from this thread first.",
        )
        if st.button("Rewrite as a standalone question", key=f"{key}-rewrite"):
            if not typed.strip():
                st.warning("Type a follow-up first.")
            else:
                try:
                    rewrite = run_service().rewrite(rec.run_id, typed)
                except MasisError as exc:
                    st.error(untrusted(str(exc)))
                else:
                    st.session_state[rewritten_key] = rewrite.question
                    st.session_state[f"{key}-note"] = rewrite.note()
        if rewritten_key not in st.session_state:
            return None
        question = st.text_area(
            "Standalone follow-up (edit it if the rewrite guessed wrong)", key=rewritten_key
        )
        st.caption(untrusted(st.session_state.get(f"{key}-note", "")))
        if st.button("Ask this follow-up", type="primary", key=f"{key}-ask"):
            if not question.strip():
                st.warning("The standalone question is empty.")
                return None
            return typed.strip() or question, question
    return None


def ask_follow_up(rec: RunRecord, options: dict[str, Any]) -> str | None:
    """The follow-up form; when the analyst asks, the follow-up starts as a run of the
    thread (a server job, like any run) with the page's current options (web search, retrieval
    mode, retries, trusted domains) and its id is returned."""
    follow_up = follow_up_box(rec)
    if follow_up is None:
        return None
    typed, question = follow_up
    try:
        job = jobs().ask(
            rec.workspace_id, question, door=door(), thread=rec.run_id, follow_up=typed, **options
        )
    except MasisError as exc:
        st.error(untrusted(str(exc)))
        return None
    return job.id
