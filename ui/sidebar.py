"""The sidebar every page shares: the navigation, workspace picker, workspace creation and
deletion, active-mode badge; and the run an address names (``?run=ID``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from masis_core.errors import MasisError
from masis_core.llm.embeddings import NOMIC, WORDLLAMA
from masis_core.services.access import Door
from masis_core.services.runs import RunRecord
from masis_core.storage.accounts import ROLES, Role
from masis_core.storage.registry import Workspace
from masis_core.text.markup import counted, untrusted
from ui.auth import account_box, door, principal_or_stop
from ui.resources import highlighted_page, jobs, provider_status, workbench

WORKSPACE_KEY = "workspace_id"
# The analyst's choice of workspace, kept apart from the picker widget's own state.
CHOICE_KEY = "workspace_choice"
# Set once the router (app.py) has run in this process.
ROUTED = threading.Event()
# A workspace to select on the next run; the picker's own key cannot change once it is drawn.
PENDING_KEY = "workspace_id_pending"
# The run an address names: /research?run=ID, /runs?run=ID, /inspector?run=ID.
RUN_PARAM = "run"
# The workspace an address names (/library?ws=ID): a reload or a bookmark opens it again.
WS_PARAM = "ws"
# The workspace whose deletion waits for the analyst's confirmation.
DELETING_KEY = "workspace_deleting"
# What the last action did, said once on the next page drawn (a delete reruns the page).
NOTICE_KEY = "notice"
# The workspace name an address gave that the account cannot open (said once on the page).
UNKNOWN_KEY = "workspace_unknown"


def navigation_links(pages: Sequence[StreamlitPage]) -> None:
    """The page list at the top of the sidebar. Streamlit's own stays hidden (``app.py``,
    ``client.showSidebarNavigation``): for a page opened by its address it first listed the
    file names of ``pages/``."""
    with st.sidebar.container(key="masis-nav"):
        for page in pages:
            st.page_link(page)


def linked_run() -> RunRecord | None:
    """The run the address names, or None (no ``?run=``, or an id that names no run)."""
    run_id = st.query_params.get(RUN_PARAM)
    return door().run(run_id, quiet=True) if run_id else None


def unknown_run_notice() -> None:
    """Say so when the address names a run that does not exist (a mistyped or old link)."""
    run_id = st.query_params.get(RUN_PARAM)
    if run_id and linked_run() is None:
        st.warning(
            f"No run “{untrusted(run_id[:80])}” was found: the link is wrong, or the run was "
            "deleted with its workspace.",
            icon="🔗",
        )


def run_picker(
    label: str, runs: list[RunRecord], key: str, describe: Callable[[RunRecord], str]
) -> RunRecord:
    """A select box over ``runs`` (newest first) that opens the run the address names and
    keeps the choice in the address, so a reload or a shared link shows the same run."""
    linked = linked_run()
    if linked is not None and linked.workspace_id == runs[0].workspace_id:
        runs = [*runs, linked]  # older than the list shows; it is still this workspace's
    by_id = {r.run_id: r for r in runs}
    wanted = st.query_params.get(RUN_PARAM)
    if wanted in by_id:
        st.session_state[key] = wanted
    elif st.session_state.get(key) not in by_id:
        st.session_state[key] = runs[0].run_id

    def keep() -> None:
        st.query_params[RUN_PARAM] = st.session_state[key]

    chosen = st.selectbox(
        label, list(by_id), key=key, format_func=lambda i: describe(by_id[i]), on_change=keep
    )
    return by_id[str(chosen)]


def say_once(text: str, icon: str = "🗑️") -> None:
    """Keep ``text`` (Markdown, escaped by the caller) for the next page drawn."""
    st.session_state[NOTICE_KEY] = (text, icon)


def _notice() -> None:
    said = st.session_state.pop(NOTICE_KEY, None)
    if said:
        text, icon = said
        st.success(text, icon=icon)


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
    if status.forced_offline:
        st.caption(
            "To switch to Ollama mode, install Ollama, pull its models, and start the "
            "workbench again without MASIS_PROVIDER=offline:"
        )
    else:
        st.caption(
            "To switch to Ollama mode, install Ollama, then run the commands below (a "
            "recommended chat model you already have, such as qwen3.5 or gemma4, is used "
            "instead of the first; see docs/ollama.md):"
        )
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
                ws = door().create_workspace(name, embedder)
            except MasisError as exc:
                st.error(untrusted(str(exc)))
            else:
                st.session_state[PENDING_KEY] = ws.id
                renamed = f" (its id: `{ws.id}`)" if ws.id != ws.name else ""
                say_once(f"Created workspace **{untrusted(ws.name)}**{renamed}.", icon="✅")
                st.rerun()


@st.cache_resource
def _last_choices() -> dict[tuple[str, str], str]:
    """Each account's last workspace, per data dir, for as long as the server runs: a page
    opened in a new tab by its bare address (``/inspector``) opens it, not the first one."""
    return {}


def _remember_choice() -> None:
    st.session_state[CHOICE_KEY] = st.session_state.get(WORKSPACE_KEY)
    # A run link belongs to the workspace it was opened in; another choice leaves it.
    st.query_params.pop(RUN_PARAM, None)
    st.query_params[WS_PARAM] = st.session_state[CHOICE_KEY]


def _delete_box(gate: Door, ws: Workspace) -> None:
    """Delete the selected workspace: asked once, then said what went."""
    with st.expander("Delete this workspace", expanded=st.session_state.get(DELETING_KEY) == ws.id):
        if st.session_state.get(DELETING_KEY) != ws.id:
            st.caption("Its documents, runs and evaluations go with it.")
            if st.button(f"Delete {ws.id}", key="ws-delete"):
                st.session_state[DELETING_KEY] = ws.id
                st.rerun()
            return
        busy = jobs().working(ws.id)
        docs, runs = len(gate.documents(ws.id)), len(gate.runs(ws.id))
        if busy:
            st.info(
                "A batch, a run, an evaluation or a calibration is still working in this "
                "workspace; delete it once that has ended."
            )
        else:
            st.warning(
                f"Delete workspace **{ws.id}**, its {counted(docs, 'document')} and "
                f"{counted(runs, 'run')}? This cannot be undone."
            )
        yes, no = st.columns(2)
        if yes.button("Delete", type="primary", key="ws-delete-yes", disabled=bool(busy)):
            docs = len(gate.documents(ws.id))
            try:
                removed = gate.delete_workspace(ws.id, jobs())
            except MasisError as exc:  # work started since the page was drawn
                st.error(untrusted(str(exc)))
                return
            highlighted_page.clear()  # its pages, drawn for past runs, are not shown again
            st.session_state.pop(DELETING_KEY, None)
            st.session_state.pop(CHOICE_KEY, None)
            st.query_params.pop(RUN_PARAM, None)
            st.query_params.pop(WS_PARAM, None)
            say_once(
                f"Deleted workspace **{ws.id}** with its {counted(docs, 'document')} and "
                f"{counted(removed, 'run')}."
            )
            st.rerun()
        if no.button("Cancel", key="ws-delete-no"):
            st.session_state.pop(DELETING_KEY, None)
            st.rerun()


def render_sidebar() -> Workspace | None:
    """Draw the sidebar; return the selected workspace (None when there is none yet).

    Streamlit discards a widget's state when the page that drew it is left, and the picker is
    drawn anew by every page: it came back empty ("Choose an option") after a page switch and
    the next page crashed. The choice is therefore kept under a key of its own, which no
    widget owns, and handed back to the picker on every page.
    """
    who = principal_or_stop()
    gate = door()
    with st.sidebar:
        st.markdown("### MASIS Workbench")
        account_box(who)
        mode_badge()
        spaces = gate.workspaces()
        by_id = {ws.id: ws for ws in spaces}
        _choose(by_id, (str(workbench().settings.data_dir), who.name))
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
        if selected is not None and not who.local and gate.may(selected.id, "share"):
            _share_box(gate, selected)
        if selected is not None and gate.may(selected.id, "delete_workspace"):
            _delete_box(gate, selected)
    return selected


def _choose(by_id: dict[str, Workspace], mine: tuple[str, str]) -> None:
    """The workspace to show, kept under ``CHOICE_KEY`` and in the address (``?ws=``).

    A reload starts a new session, which would fall back on the first workspace: a run's
    address opens that run's workspace, else the address's ``?ws=``, else (a new tab) the
    account's last choice. An address naming no workspace the account can open (a stale
    bookmark, a typo) is noted for ``unknown_workspace_notice`` and taken out of the address,
    so it is said once, not replaced silently by a workspace that reads as the one asked for.
    """
    last = _last_choices()
    named = st.query_params.get(WS_PARAM)
    st.session_state[UNKNOWN_KEY] = None
    if PENDING_KEY in st.session_state:  # just created: it is the choice
        st.session_state[CHOICE_KEY] = st.session_state.pop(PENDING_KEY)
        st.query_params.pop(RUN_PARAM, None)
    else:
        linked = linked_run()
        if linked is not None and linked.workspace_id in by_id:
            st.session_state[CHOICE_KEY] = linked.workspace_id
        elif named in by_id:
            st.session_state[CHOICE_KEY] = named
        elif CHOICE_KEY not in st.session_state and last.get(mine) in by_id:
            st.session_state[CHOICE_KEY] = last[mine]
        if named and named not in by_id:
            st.session_state[UNKNOWN_KEY] = named
    choice = st.session_state.get(CHOICE_KEY)
    if choice not in by_id:
        choice = next(iter(by_id), None)
    st.session_state[CHOICE_KEY] = st.session_state[WORKSPACE_KEY] = choice
    if choice is None:
        st.query_params.pop(WS_PARAM, None)
    else:
        last[mine] = choice
        if named != choice:
            st.query_params[WS_PARAM] = choice


def unknown_workspace_notice() -> None:
    """Say so when the address named a workspace the account cannot open (see ``_choose``)."""
    named = st.session_state.get(UNKNOWN_KEY)
    if named:
        choice = st.session_state.get(CHOICE_KEY)
        shown = f"; showing **{untrusted(choice)}**" if choice else ""
        st.warning(f"No workspace “{untrusted(named[:80])}” that you can open{shown}.", icon="🔎")


def _share_box(gate: Door, ws: Workspace) -> None:
    """Owners share the workspace by account name: viewer (ask, read runs), editor (also
    upload and delete documents), owner (also share and delete)."""
    with st.expander("Share this workspace"):
        for member, has in gate.members(ws.id).items():
            st.caption(f"{untrusted(member)}: {has}")
        with st.form("share", clear_on_submit=True):
            name = st.text_input("Account name", key="share-name")
            choice = st.selectbox("Role", [*ROLES, "remove"], key="share-role")
            if st.form_submit_button("Share"):
                role: Role | None = next((r for r in ROLES if r == choice), None)
                try:
                    gate.share(ws.id, name, role)
                except MasisError as exc:
                    st.error(untrusted(str(exc)))
                else:
                    st.rerun()


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
    _notice()
    unknown_run_notice()
    unknown_workspace_notice()
    if ws is None:
        st.info("Create a workspace in the sidebar to start.")
        st.stop()
    return ws


def workspace_runs_or_stop(title: str) -> tuple[Workspace, list[RunRecord]]:
    """The opening of the pages about runs: as ``workspace_or_stop``, and a clear stop when
    the workspace has no run yet."""
    ws = workspace_or_stop(title)
    runs = door().runs(ws.id)
    if not runs:
        st.info("No runs in this workspace yet: ask a question on the Research page.")
        st.stop()
    return ws, runs
