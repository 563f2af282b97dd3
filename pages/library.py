"""Library: upload documents into the workspace, see what each file yielded, delete."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ingest.pipeline import Ingestor, Source
from masis_core.ui.resources import workbench
from masis_core.ui.sidebar import render_sidebar
from masis_core.ui.views import IngestBoxes

ws = render_sidebar()
st.title("📚 Library")
if ws is None:
    st.info("Create a workspace in the sidebar to start.")
    st.stop()

bench = workbench()
st.caption(f"Workspace **{ws.id}** · embeddings: `{ws.embed_model}`")

with st.form("upload", clear_on_submit=True):
    files = st.file_uploader(
        "Add PDFs, .txt or .md files",
        type=["pdf", "txt", "md"],
        accept_multiple_files=True,
    )
    submitted = st.form_submit_button("Ingest", type="primary")

if submitted and files:
    boxes = IngestBoxes(len(files))
    sources = [Source(upload.name, upload.getvalue) for upload in files]
    reports = [
        boxes.close(report) for report in Ingestor(bench).ingest_each(ws, sources, boxes.open)
    ]
    st.session_state["last_ingest"] = [r.to_json() for r in reports]

if st.session_state.get("last_ingest"):
    st.subheader("Last upload")
    table = pd.DataFrame(st.session_state["last_ingest"])
    table["empty_pages"] = table["empty_pages"].map(len)
    table["notes"] = table["notes"].map("; ".join)
    st.dataframe(
        table[["file", "status", "pages", "chunks", "empty_pages", "error", "notes"]].rename(
            columns={"empty_pages": "pages without text"}
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Documents")
docs = bench.documents(ws.id)
if not docs:
    st.info("No documents yet.")
for doc in docs:
    cols = st.columns([6, 1, 1, 1])
    cols[0].markdown(f"**{doc.filename}**  \n`{doc.doc_id[:12]}`")
    cols[1].metric("pages", doc.pages)
    cols[2].metric("chunks", doc.chunks)
    if cols[3].button("Delete", key=f"del-{doc.doc_id}"):
        bench.delete_document(ws.id, doc.doc_id)
        st.rerun()
