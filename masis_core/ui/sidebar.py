"""The sidebar every page shares: workspace picker, workspace creation, active-mode badge."""

from __future__ import annotations

import streamlit as st

from masis_core.errors import MasisError
from masis_core.llm.embeddings import NOMIC, WORDLLAMA
from masis_core.registry import Workspace
from masis_core.runs import RunRecord
from masis_core.ui.resources import provider_status, researcher, workbench

WORKSPACE_KEY = "workspace_id"
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
                st.error(str(exc))
            else:
                st.session_state[PENDING_KEY] = ws.id
                st.rerun()


def render_sidebar() -> Workspace | None:
    """Draw the sidebar; return the selected workspace (None when there is none yet)."""
    bench = workbench()
    with st.sidebar:
        st.markdown("### MASIS Workbench")
        mode_badge()
        spaces = bench.registry.list_workspaces()
        ids = [ws.id for ws in spaces]
        if PENDING_KEY in st.session_state:
            st.session_state[WORKSPACE_KEY] = st.session_state.pop(PENDING_KEY)
        if st.session_state.get(WORKSPACE_KEY) not in ids:
            st.session_state[WORKSPACE_KEY] = ids[0] if ids else None
        models = {ws.id: ws.embed_model for ws in spaces}
        selected = None
        if ids:
            chosen = st.selectbox(
                "Workspace", ids, key=WORKSPACE_KEY, format_func=lambda i: f"{i} · {models[i]}"
            )
            selected = next(ws for ws in spaces if ws.id == chosen)
        else:
            st.warning("No workspace yet: create one below.")
        with st.expander("New workspace", expanded=not ids):
            _create_form()
    return selected


def workspace_runs_or_stop(title: str) -> tuple[Workspace, list[RunRecord]]:
    """The opening of the pages about runs: sidebar, title, and a clear stop when there is
    no workspace or no run yet."""
    ws = render_sidebar()
    st.title(title)
    if ws is None:
        st.info("Create a workspace in the sidebar to start.")
        st.stop()
    runs = researcher().store.list(ws.id)
    if not runs:
        st.info("No runs in this workspace yet: ask a question on the Research page.")
        st.stop()
    return ws, runs
