"""The Library's followed folders and document versions (issue 56): follow a folder, "Sync
now" with per-file progress (a job of the server's runner), a schedule, each document's
versions with delete for editors, and "Compare versions" side by side, highlighted.

Document text is shown escaped (``untrusted``): a changed sentence is words, never markup."""

from __future__ import annotations

import hashlib
import threading

import streamlit as st

from ingest.sync import Syncer, run_schedule, start_sync
from ingest.versioning import VersionKeeper, answer_comparison, compare_versions, version_pages
from masis_core.answers.change_summary import OFFLINE_NOTE, summarise
from masis_core.answers.changes import Change, Comparison, word_marks
from masis_core.errors import MasisError
from masis_core.storage.registry import Document, Workspace
from masis_core.storage.versions import Version, Versions
from masis_core.text.markup import highlighted_text, untrusted
from ui.auth import door
from ui.evidence import page_view
from ui.follow import batch_boxes
from ui.resources import has_pages, highlighted_page, jobs, provider_status, workbench

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


def sync_progress(ws: Workspace) -> None:
    """The last sync this session started: per-file progress while it runs, then its report.
    Only a running sync polls: a fragment that went on rerunning every second after the
    report was drawn could swallow a click elsewhere on the page (the browser test's "Compare
    versions" once did nothing under load)."""
    job = jobs().get(st.session_state.get(SYNC_JOB))
    if job is None or job.workspace_id != ws.id:
        return
    if not job.finished:
        _sync_running(job.id)
        return
    report = job.result
    if job.error:
        st.error(f"Sync failed: {untrusted(job.error)}")
    elif report is not None:
        st.success(f"Sync done: {report.summary()}")
        for folder in report.folders:
            if folder.get("error"):
                st.error(untrusted(f"{folder['folder']}: {folder['error']}"))
    with st.expander("Files of the last sync"):
        batch_boxes(job.files_now())


@st.fragment(run_every=1.0)
def _sync_running(job_id: str) -> None:
    job = jobs().get(job_id)
    if job is None or job.finished:
        st.rerun()  # the whole page: the report, and the document list showing what it did
    files = job.files_now()  # the count and the boxes say the same moment
    st.caption(f"⏳ syncing: {len(files)} files seen — you can switch pages; it goes on.")
    batch_boxes(files)


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
    """Two versions chosen and compared; the comparison stays shown (its pages open in
    place) until another pair is compared."""
    labels, lineage = [v.label for v in kept], kept[0].lineage
    c = st.columns([2, 2, 2])
    old = c[0].selectbox("from", labels, index=len(labels) - 2, key=f"cmp-a-{lineage}")
    new = c[1].selectbox("to", labels, index=len(labels) - 1, key=f"cmp-b-{lineage}")
    shown = f"cmp-shown-{lineage}"
    if c[2].button("Compare versions", key=f"cmp-{lineage}"):
        st.session_state[shown] = tuple(kept[labels.index(x)].version for x in (old, new))
    pair = st.session_state.get(shown)
    by_number = {v.version: v for v in kept}
    if not pair or any(n not in by_number for n in pair):
        return
    a, b = (by_number[n] for n in pair)
    try:
        diff = _compared(ws, ws.id, lineage, (a.doc_id, a.version), (b.doc_id, b.version))
    except (MasisError, OSError) as exc:
        st.error(untrusted(str(exc)))
        return
    show_comparison(diff, (ws, a, b))


@st.cache_data(max_entries=16, show_spinner="Comparing the versions…")
def _compared(
    _ws: Workspace, ws_id: str, lineage: str, old: tuple[str, int], new: tuple[str, int]
) -> Comparison:
    """Both versions read again and compared once, not on every rerun while it is shown
    (keyed by the versions' documents: a version deleted and made again is read anew)."""
    return compare_versions(workbench(), _ws, lineage, old[1], new[1])


def asked_diff(ws: Workspace, question: str) -> Comparison | None:
    """The diff a question asks for ("compare v2 and v3 of report.pdf", "what changed in the
    travel policy?"), offline; None for any other question (it goes to a research run)."""
    try:
        door().workspace(ws.id, "ask")
        return answer_comparison(workbench(), ws, question)
    except (MasisError, OSError) as exc:
        st.error(untrusted(str(exc)))
        return None


# A comparison of two kept versions: the workspace and both, so that each side opens its page.
Sides = tuple[Workspace, Version, Version]


def show_comparison(diff: Comparison, sides: Sides | None = None) -> None:
    """Sections added, removed and changed; changed sentences side by side, the changed
    words highlighted; every change cited to both versions' pages, whose pages open below
    each side (``sides``)."""
    if diff.unchanged:
        st.info(untrusted(diff.lines()[0]))
        return
    st.markdown(untrusted(diff.lines()[0]))
    explain(diff)
    n = 0
    for s in diff.sections:
        old = diff.cite(diff.old_label, s.old_page)
        new = diff.cite(diff.new_label, s.new_page)
        st.markdown(f"**{untrusted(s.title)}** — {s.kind} · [{untrusted(old)}] [{untrusted(new)}]")
        for ch in s.changes:
            n += 1
            _side_by_side(diff, ch, sides, n)


def explain(diff: Comparison) -> None:
    """With Ollama, the model's short summary of the diff, each claim cited to both versions'
    places; offline, or when the model's reply is unusable, a note saying so. Kept for the
    session: opening a page below does not ask the model again."""
    key = "diff-summary-" + hashlib.sha256("\n".join(diff.lines()).encode()).hexdigest()[:16]
    summary = st.session_state.get(key)
    if summary is None:
        with st.spinner("The model is summarising the changes…"):
            summary = summarise(workbench().settings, diff, provider_status())
        if summary.by == "ollama":
            st.session_state[key] = summary
    if summary.claims:
        st.markdown(f"**In short** — written by {untrusted(summary.model)} from the diff below:")
        st.markdown(
            "\n".join(f"- {untrusted(t)} [{untrusted('; '.join(c))}]" for t, c in summary.claims)
        )
    if summary.note == OFFLINE_NOTE:
        st.caption(summary.note)
    elif summary.note:
        st.warning(untrusted(summary.note))


def _side_by_side(diff: Comparison, ch: Change, sides: Sides | None, n: int) -> None:
    old = " ".join(x.text for x in ch.old)
    new = " ".join(x.text for x in ch.new)
    marks_a, marks_b = word_marks(old, new)
    left, right = st.columns(2)
    for col, said, marks, colour, side in (
        (left, ch.old, marks_a, "red", 1),
        (right, ch.new, marks_b, "green", 2),
    ):
        if not said:
            col.container(border=True)
            continue
        label = diff.old_label if side == 1 else diff.new_label
        with col.container(border=True):
            st.caption(untrusted(diff.cite(label, said[0].page)))
            st.markdown(_marked(marks, colour))
        if sides is None:
            continue
        page, version = said[0].page, (sides[1] if side == 1 else sides[2])
        if col.toggle(f"Show {label}'s page {page}", key=f"vp-{version.doc_id[:16]}-{n}"):
            with col:
                version_page(sides[0], version, page, tuple(x.text for x in said), f"vp{n}")


@st.cache_data(max_entries=32, show_spinner=False)
def _pages_of(doc_id: str, filename: str) -> dict[int, str]:
    return {n: text for n, _place, text in version_pages(workbench(), doc_id, filename)}


def version_page(ws: Workspace, v: Version, page: int, cited: tuple[str, ...], key: str) -> None:
    """A version's page as it was, the changed sentences highlighted: drawn for a PDF, its
    text for a note (which has no page to draw)."""
    try:
        text = _pages_of(v.doc_id, v.filename).get(page, "")
    except (MasisError, OSError) as exc:
        st.error(untrusted(f"The page of {v.filename}, {v.label} cannot be read: {exc}"))
        return
    if has_pages(v.doc_id):
        c = {"doc_id": v.doc_id, "filename": v.filename, "version": v.version, "page": page}
        page_view({**c, "text": text}, cited, key, ws.id)
        return
    shown, _ = highlighted_text(text, cited)
    st.caption(untrusted(f"{v.filename}, {v.label}, p. {page}: the page as it was"))
    with st.container(border=True, key=f"version-page-{v.version}-{key}"):
        st.markdown(shown)


def _marked(words: list[tuple[str, bool]], colour: str) -> str:
    """Escaped words, the changed ones on a coloured background."""
    return " ".join(
        f":{colour}-background[{untrusted(w)}]" if hot else untrusted(w) for w, hot in words
    )
