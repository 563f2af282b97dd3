"""The Library's document list: each document with its pages and chunks, and a delete that
asks once before it removes anything, then says what it removed."""

from __future__ import annotations

import streamlit as st

from ingest.versioning import VersionKeeper
from masis_core.storage.registry import Document, Workspace
from masis_core.storage.versions import Versions
from masis_core.text.markup import untrusted
from ui.auth import door
from ui.folders import versions_of
from ui.resources import highlighted_page, workbench
from ui.sidebar import say_once

# The document whose deletion waits for the analyst's confirmation.
CONFIRM_KEY = "document_deleting"


def _delete(ws: Workspace, doc: Document) -> None:
    kept = Versions(workbench().db).version_of(ws.id, doc.doc_id)
    if kept is None:
        door().delete_document(ws.id, doc.doc_id)
    else:  # every version of it: the current one alone would leave the others orphaned
        door().workspace(ws.id, "delete_document")
        VersionKeeper(workbench()).delete_lineage(ws, kept.lineage)
        door().audit("document.delete", f"{ws.id}/{doc.doc_id}", "every version")
    # Past runs drew its pages; those drawings go (and page views ask the registry first).
    highlighted_page.clear()
    st.session_state.pop(CONFIRM_KEY, None)
    say_once(
        f"Deleted **{untrusted(doc.filename)}** ({untrusted(doc.extent or f'{doc.pages} pages')}, "
        f"{doc.chunks} chunks) from "
        f"workspace **{ws.id}**. Past runs keep the words they cited, not its pages."
    )


def _confirm(ws: Workspace, doc: Document) -> None:
    name = untrusted(doc.filename)
    with st.container(border=True):
        st.warning(
            f"Delete **{name}** from workspace **{ws.id}**? Its {doc.chunks} chunks leave "
            "retrieval, and past runs that cite it no longer show its pages. This cannot be "
            "undone; uploading the file again brings it back."
        )
        yes, no, _ = st.columns([1, 1, 4])
        if yes.button("Delete", type="primary", key=f"del-yes-{doc.doc_id}"):
            _delete(ws, doc)
            st.rerun()
        if no.button("Cancel", key=f"del-no-{doc.doc_id}"):
            st.session_state.pop(CONFIRM_KEY, None)
            st.rerun()


def document_list(ws: Workspace) -> None:
    docs = door().documents(ws.id)
    if not docs:
        st.info("No documents yet.")
    may_delete = door().may(ws.id, "delete_document")
    for doc in docs:
        cols = st.columns([6, 1, 1, 1])
        ocr = f" · OCR: {len(doc.ocr_pages)} of {doc.pages} pages" if doc.ocr_pages else ""
        cols[0].markdown(f"**{untrusted(doc.filename)}**  \n`{doc.doc_id[:12]}`{ocr}")
        if doc.extent:  # a sheet or a CSV file: its sheets and rows, not its blocks
            cols[1].markdown(f"**{untrusted(doc.extent)}**")
        else:
            cols[1].metric("pages", doc.pages)
        cols[2].metric("chunks", doc.chunks)
        if may_delete and cols[3].button("Delete", key=f"del-{doc.doc_id}"):
            st.session_state[CONFIRM_KEY] = doc.doc_id
        if st.session_state.get(CONFIRM_KEY) == doc.doc_id:
            _confirm(ws, doc)
        versions_of(ws, doc)
