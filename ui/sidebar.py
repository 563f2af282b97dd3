"""The sidebar every page shares: workspace picker, workspace creation, active-mode badge."""

from __future__ import annotations

import threading

import streamlit as st

from masis_core.errors import MasisError
from masis_core.llm.embeddings import NOMIC, WORDLLAMA
from masis_core.services.runs import RunRecord
from masis_core.storage.registry import Workspace
from masis_core.text.markup import untrusted
from ui.resources import provider_status, run_service, workbench

WORKSPACE_KEY = "workspace_id"
# The analyst's choice of workspace, kept apart from the picker widget's own state.
CHOICE_KEY = "workspace_choice"
# Set once the router (app.py) has run in this process.
ROUTED = threading.Event()
# A workspace to select on the next run; the picker's own key cannot change once it is drawn.
PENDING_KEY = "workspace_id_pending"


def mode_badge() -> None:
    status = provider_status()
    if status.mode == "ollama" and status.ready:
        st.success(f"**{status.label}**", icon="🦙")
        st.caption(status.reason)
        return
    if status.mode == "ollama":
        st.error(f"**{status.label}** is selected but not usable", icon="⚠️")
        st.caption(status.reason)
        return
    st.info(f"**{status.label}**", icon="📄")
    st.caption(
        "Answers are built from your documents' own sentences, without a language model. "
        f"Why: {status.reason}"
    )
    st.caption("To switch to Ollama mode, install Ollama, then run:")
    st.code("\n".join(status.enable_commands), language="bash")


def _create_form() -> None:
    bench = workbench()
    status = provider_status()
    default = bench.default_embedder_name(status.ollama)
    options = [WORDLLAMA, NOMIC]
    with st.form("create_workspace", clear_on_submit=True):
        name = st.text_input("Name", placeholder="e.g. q3-filings")
        embedder = st.selectbox(
            "Embedding model (fixed for the workspace)",
            options,
            index=options.index(default) if default in options else 0,
            help="WordLlama is bundled and works offline; nomic-embed-text needs Ollama.",
        )
        if st.form_submit_button("Create"):
            try:
                ws = bench.create_workspace(name, embedder)
            except MasisError as exc:
                st.error(untrusted(str(exc)))
            else:
                st.session_state[PENDING_KEY] = ws.id
                st.rerun()


def _remember_choice() -> None:
    st.session_state[CHOICE_KEY] = st.session_state.get(WORKSPACE_KEY)


def render_sidebar() -> Workspace | None:
    """Draw the sidebar; return the selected workspace (None when there is none yet).

    Streamlit discards a widget's state when the page that drew it is left, and the picker is
    drawn anew by every page: it came back empty ("Choose an option") after a page switch and
    the next page crashed. The choice is therefore kept under a key of its own, which no
    widget owns, and handed back to the picker on every page.
    """
    bench = workbench()
    with st.sidebar:
        st.markdown("### MASIS Workbench")
        mode_badge()
        spaces = bench.workspaces()
        by_id = {ws.id: ws for ws in spaces}
        if PENDING_KEY in st.session_state:
            st.session_state[CHOICE_KEY] = st.session_state.pop(PENDING_KEY)
        choice = st.session_state.get(CHOICE_KEY)
        if choice not in by_id:
            choice = spaces[0].id if spaces else None
        st.session_state[CHOICE_KEY] = st.session_state[WORKSPACE_KEY] = choice
        selected = None
        if spaces:
            chosen = st.selectbox(
                "Workspace",
                list(by_id),
                key=WORKSPACE_KEY,
                format_func=lambda i: f"{i} · {by_id[i].embed_model}",
                on_change=_remember_choice,
            )
            selected = by_id.get(str(chosen)) or spaces[0]
        else:
            st.warning("No workspace yet: create one below.")
        with st.expander("New workspace", expanded=not spaces):
            _create_form()
    return selected


def ensure_router() -> None:
    """Make sure the page runs under ``app.py``'s navigation.

    Until the router has run once, a server with a ``pages/`` folder uses Streamlit's older
    pages-folder mode: a first request by address (``/research``, a bookmark, a refresh) ran
    the page alone, with the bare file names as navigation (``app``, ``inspector``, …).
    Turning that mode off and rerunning hands the same address to the router. Once the router
    has run in this process this does nothing (Streamlit's ``AppTest`` re-enters that mode on
    every run and runs pages directly; rerunning there would swallow every click).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if not ROUTED.is_set() and PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def routed() -> None:
    """Called by the router: from now on this process serves pages through it."""
    ROUTED.set()


def workspace_or_stop(title: str) -> Workspace:
    """The opening every page shares: the title, and the workspace the sidebar selected, or a
    clear stop when there is none yet."""
    ensure_router()
    ws = render_sidebar()
    st.title(title)
    if ws is None:
        st.info("Create a workspace in the sidebar to start.")
        st.stop()
    return ws


def workspace_runs_or_stop(title: str) -> tuple[Workspace, list[RunRecord]]:
    """The opening of the pages about runs: as ``workspace_or_stop``, and a clear stop when
    the workspace has no run yet."""
    ws = workspace_or_stop(title)
    runs = run_service().runs(ws.id)
    if not runs:
        st.info("No runs in this workspace yet: ask a question on the Research page.")
        st.stop()
    return ws, runs
