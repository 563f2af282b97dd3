"""Library: upload documents into the workspace, follow the batch, see what each file yielded."""

from __future__ import annotations

import streamlit as st

from ingest import kinds
from ingest.pipeline import Source
from masis_core.errors import MasisError
from masis_core.services.inspection import batch_table
from masis_core.text.markup import untrusted
from ui.auth import door, role_notice
from ui.documents import document_list
from ui.folders import folder_panel
from ui.follow import batch_boxes, follow_batch
from ui.resources import jobs
from ui.sidebar import workspace_or_stop

# The batch this browser session started last; the job itself lives in the server process.
BATCH = "ingest_job"

ws = workspace_or_stop("📚 Library")
workers = jobs()
st.caption(f"Workspace **{ws.id}** · embeddings: `{ws.embed_model}`")

gate = door()
files: list = []
submitted = False
if not gate.may(ws.id, "upload"):  # a viewer was refused only after choosing files
    role_notice(ws.id, "adding documents")
else:
    with st.form("upload", clear_on_submit=True):
        files = st.file_uploader(
            "Add PDFs, Word, PowerPoint, Excel, CSV, web pages, EPUB books, e-mails, .txt or .md",
            type=["pdf", "txt", "md", *(s.lstrip(".") for s in kinds.SUFFIXES)],
            accept_multiple_files=True,
            help="A citation points at a PDF's page; in the other kinds at the place: "
            "heading and paragraph, slide, sheet and rows, chapter, or the e-mail "
            "(docs/ingest-formats.md).",
        )
        submitted = st.form_submit_button("Ingest", type="primary")

if submitted and not files:
    st.warning("Choose one or more files first, then press Ingest.")
elif submitted:
    # The bytes are read now: an upload belongs to this browser session, the job does not.
    sources = [Source.of_bytes(f.name, f.getvalue()) for f in files]
    try:
        st.session_state[BATCH] = workers.ingest(ws, sources, door=gate).id
    except MasisError as exc:  # the role was taken away since the page was drawn
        st.error(untrusted(str(exc)))

job = workers.get(st.session_state.get(BATCH))
if job is not None and job.workspace_id != ws.id:
    job = None
others = [j for j in workers.active(ws.id, "ingest") if job is None or j.id != job.id]
for other in others:
    st.caption(f"⏳ Another batch is being ingested into this workspace: {untrusted(other.title)}.")

if job is not None and not job.finished:
    follow_batch(job.id)
elif job is not None:
    if job.error:  # why the batch stopped (the uploader's role was taken away meanwhile)
        st.error(untrusted(job.error), icon="🔒")
    files = job.files_now()
    batch_boxes(files)
    st.subheader("Last upload")
    st.dataframe(batch_table(files), hide_index=True, width="stretch")

folder_panel(ws)
st.subheader("Documents")
document_list(ws)
