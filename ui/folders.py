"""The Library's followed folders and document versions (issue 56): follow a folder, "Sync
now" with per-file progress (a job of the server's runner), a schedule, each document's
versions with delete for editors, and "Compare versions" side by side, highlighted.

Document text is shown escaped (``untrusted``): a changed sentence is words, never markup."""

from __future__ import annotations

import threading

import streamlit as st

from ingest.sync import Syncer, run_schedule, start_sync
from ingest.versioning import VersionKeeper, answer_comparison, compare_versions
from masis_core.answers.change_summary import OFFLINE_NOTE, summarise
from masis_core.answers.changes import Change, Comparison, word_marks
from masis_core.errors import MasisError
from masis_core.storage.registry import Document, Workspace
from masis_core.storage.versions import Version, Versions
from masis_core.text.markup import untrusted
from ui.auth import door
from ui.follow import batch_boxes
from ui.resources import highlighted_page, jobs, provider_status, workbench

SYNC_JOB = "sync_job"
SCHEDULE_TICK_S = 60.0


@st.cache_resource(show_spinner=False)
def scheduler() -> threading.Event:
    """One thread per server process queueing the syncs whose schedule is due (the schedule
    is kept in the database, so a restarted server takes it up again)."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(SCHEDULE_TICK_S):
            try:
                run_schedule(jobs(), workbench())
            except Exception:  # the next tick tries again; the log says why
                import logging

                logging.getLogger(__name__).exception("scheduled sync failed")

    threading.Thread(target=tick, name="masis-sync-schedule", daemon=True).start()
    return stop


def folder_panel(ws: Workspace) -> None:
    """The folders the workspace follows; an editor adds, schedules and syncs them."""
    scheduler()
    gate, syncer = door(), Syncer(workbench())
    folders = syncer.versions.folders(ws.id)
    may = gate.may(ws.id, "upload")
    with st.expander(f"📁 Followed folders ({len(folders)})", expanded=bool(folders)):
        for f in folders:
            c = st.columns([5, 2, 1, 1])
            last = f.last_sync or "never"
            c[0].markdown(f"{untrusted(f.path)}  \nlast sync: {last}")
            if may:
                every = c[1].number_input(
                    "sync every (minutes, 0: off)", 0, 10_080, f.every_minutes, key=f"ev-{f.path}"
                )
                if every != f.every_minutes:
                    syncer.versions.set_schedule(ws.id, f.path, int(every))
                if c[3].button("Unfollow", key=f"unf-{f.path}"):
                    _act(lambda p=f.path: syncer.unfollow(gate, ws.id, p))
        if not may:
            st.caption("Your role lets you see versions and changes, not add folders or sync.")
            return
        with st.form("follow", clear_on_submit=True):
            path = st.text_input(
                "Folder on the server to follow", placeholder="/srv/reports", key="follow-path"
            )
            if st.form_submit_button("Follow") and path.strip():
                _act(lambda: syncer.follow(gate, ws.id, path.strip()))
        if folders and st.button("Sync now", type="primary"):
            try:
                job = start_sync(jobs(), workbench(), gate, ws.id, "now")
                st.session_state[SYNC_JOB] = job.id
            except MasisError as exc:
                st.error(untrusted(str(exc)))
    sync_progress(ws)


def _act(action: object) -> None:
    try:
        action()  # type: ignore[operator]
    except MasisError as exc:
        st.error(untrusted(str(exc)))
        return
    st.rerun()


@st.fragment(run_every=1.0)
def sync_progress(ws: Workspace) -> None:
    """The last sync this session started: per-file progress, then its report."""
    job = jobs().get(st.session_state.get(SYNC_JOB))
    if job is None or job.workspace_id != ws.id:
        return
    if job.finished:
        seen = f"sync-drawn-{job.id}"
        if not st.session_state.get(seen):
            st.session_state[seen] = True
            st.rerun()  # the whole page once: the document list below shows what it did
        report = job.result
        if job.error:
            st.error(f"Sync failed: {untrusted(job.error)}")
        elif report is not None:
            st.success(f"Sync done: {report.summary()}")
            for folder in report.folders:
                if folder.get("error"):
                    st.error(untrusted(f"{folder['folder']}: {folder['error']}"))
        with st.expander("Files of the last sync"):
            batch_boxes(job)
        return
    st.caption(f"⏳ syncing: {len(job.files)} files seen — you can switch pages; it goes on.")
    batch_boxes(job)


# -- versions -----------------------------------------------------------------------------
def versions_of(ws: Workspace, doc: Document) -> None:
    """A document's versions (when it has more than one), delete for editors, and compare."""
    bench = workbench()
    versions = Versions(bench.db)
    mine = versions.version_of(ws.id, doc.doc_id)
    kept = versions.versions(ws.id, mine.lineage) if mine else []
    if len(kept) < 2:
        return
    with st.expander(f"🕘 {len(kept)} versions of {untrusted(doc.filename)}"):
        may = door().may(ws.id, "delete_document")
        for v in reversed(kept):
            c = st.columns([5, 1])
            c[0].markdown(
                f"**{v.label}** · {v.state} · seen {v.seen_at} · {v.pages} pages · "
                f"{v.chunks} chunks ({v.stored} stored by it) · `{v.doc_id[:12]}`"
            )
            if may and c[1].button("Delete", key=f"delv-{v.doc_id}"):
                _delete_version(ws, v)
        _compare_form(ws, kept)


def _delete_version(ws: Workspace, v: Version) -> None:
    try:
        door().workspace(ws.id, "delete_document")
        VersionKeeper(workbench()).delete_version(ws, v.lineage, v.version)
    except MasisError as exc:
        st.error(untrusted(str(exc)))
        return
    door().audit("document.delete_version", f"{ws.id}/{v.doc_id}", v.label)
    highlighted_page.clear()
    st.rerun()


def _compare_form(ws: Workspace, kept: list[Version]) -> None:
    labels = [v.label for v in kept]
    c = st.columns([2, 2, 2])
    old = c[0].selectbox("from", labels, index=len(labels) - 2, key=f"cmp-a-{kept[0].lineage}")
    new = c[1].selectbox("to", labels, index=len(labels) - 1, key=f"cmp-b-{kept[0].lineage}")
    if c[2].button("Compare versions", key=f"cmp-{kept[0].lineage}"):
        a, b = (kept[labels.index(x)].version for x in (old, new))
        try:
            show_comparison(compare_versions(workbench(), ws, kept[0].lineage, a, b))
        except (MasisError, OSError) as exc:
            st.error(untrusted(str(exc)))


def asked_diff(ws: Workspace, question: str) -> Comparison | None:
    """The diff a question asks for ("compare v2 and v3 of report.pdf", "what changed in the
    travel policy?"), offline; None for any other question (it goes to a research run)."""
    try:
        door().workspace(ws.id, "ask")
        return answer_comparison(workbench(), ws, question)
    except (MasisError, OSError) as exc:
        st.error(untrusted(str(exc)))
        return None


def show_comparison(diff: Comparison) -> None:
    """Sections added, removed and changed; changed sentences side by side, the changed
    words highlighted; every change cited to both versions' pages."""
    if diff.unchanged:
        st.info(untrusted(diff.lines()[0]))
        return
    st.markdown(untrusted(diff.lines()[0]))
    explain(diff)
    for s in diff.sections:
        old = diff.cite(diff.old_label, s.old_page)
        new = diff.cite(diff.new_label, s.new_page)
        st.markdown(f"**{untrusted(s.title)}** — {s.kind} · [{untrusted(old)}] [{untrusted(new)}]")
        for ch in s.changes:
            _side_by_side(diff, ch)


def explain(diff: Comparison) -> None:
    """With Ollama, the model's short summary of the diff, each claim cited to both versions'
    places; offline, or when the model's reply is unusable, a note saying so."""
    with st.spinner("The model is summarising the changes…"):
        summary = summarise(workbench().settings, diff, provider_status())
    if summary.claims:
        st.markdown(f"**In short** — written by {untrusted(summary.model)} from the diff below:")
        st.markdown(
            "\n".join(f"- {untrusted(t)} [{untrusted('; '.join(c))}]" for t, c in summary.claims)
        )
    if summary.note == OFFLINE_NOTE:
        st.caption(summary.note)
    elif summary.note:
        st.warning(untrusted(summary.note))


def _side_by_side(diff: Comparison, ch: Change) -> None:
    old = " ".join(x.text for x in ch.old)
    new = " ".join(x.text for x in ch.new)
    marks_a, marks_b = word_marks(old, new)
    left, right = st.columns(2)
    with left.container(border=True):
        if ch.old:
            st.caption(untrusted(diff.cite(diff.old_label, ch.old[0].page)))
            st.markdown(_marked(marks_a, "red"))
    with right.container(border=True):
        if ch.new:
            st.caption(untrusted(diff.cite(diff.new_label, ch.new[0].page)))
            st.markdown(_marked(marks_b, "green"))


def _marked(words: list[tuple[str, bool]], colour: str) -> str:
    """Escaped words, the changed ones on a coloured background."""
    return " ".join(
        f":{colour}-background[{untrusted(w)}]" if hot else untrusted(w) for w, hot in words
    )
