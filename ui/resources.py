"""Streamlit resource factories: one Workbench and one compiled graph per server process."""

from __future__ import annotations

import streamlit as st

from evaluation.calibration import job_work
from ingest.highlight import HighlightedPage
from ingest.isolate import highlight_pdf_page, sentence_pdf_page
from ingest.parsing import has_pdf_header
from ingest.pipeline import Ingestor
from masis_core.answers.providers import ProviderStatus
from masis_core.config import get_settings
from masis_core.services.jobs import JobManager
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench

PROBE_TTL_S = 30


@st.cache_resource(show_spinner=False)
def workbench() -> Workbench:
    return Workbench(get_settings())


@st.cache_resource(show_spinner=False)
def run_service() -> RunService:
    """The compiled graph and its checkpointer (SQLite or PostgreSQL), shared by every browser
    session."""
    return RunService(workbench())


@st.cache_resource(show_spinner=False)
def jobs() -> JobManager:
    """The workers that run research, ingest and calibration jobs for every browser session.
    Made once per server process, which is also when half-ingested documents of a process
    that died are swept (``RunService`` sweeps its orphaned runs the same way)."""
    ingestor = Ingestor(workbench())
    ingestor.sweep_stale()
    # After a batch adds documents, the workspace's confidence is refitted to them.
    return JobManager(run_service(), ingestor, after_batch=job_work(workbench()))


@st.cache_data(ttl=PROBE_TTL_S, show_spinner=False)
def provider_status() -> ProviderStatus:
    """Probing Ollama costs up to a second; once per half-minute is enough for a badge."""
    return workbench().provider_status()


@st.cache_data(max_entries=1024, show_spinner=False)
def has_pages(doc_id: str) -> bool:
    """Whether a document's stored original is a PDF, by its bytes as ingest read it (a PDF
    named ``.txt`` has pages; a note never has)."""
    try:
        with workbench().file_path(doc_id).open("rb") as fh:
            return has_pdf_header(fh.read(1024))
    except OSError:  # its original is gone: the page view says so
        return True


@st.cache_data(max_entries=64, show_spinner=False)
def highlighted_page(
    doc_id: str,
    span: tuple[int, int],
    passage: str,
    cited: tuple[str, ...],
    page: int | None = None,
    zoom: int = 1,
) -> HighlightedPage | None:
    """A cited passage's page with its cited sentences highlighted (``None`` when there is no
    page to draw), rendered in a child process with a pixel cap and a time limit: the PDF is
    untrusted. Cached because an analyst flips between the same few pages and zooms, and a
    page that timed out should not be tried on every rerun. Cleared when a document or a
    workspace is deleted; other processes' copies are kept from view by
    ``Door.preview_allowed``, asked before a page is drawn."""
    bench = workbench()
    path, timeout_s = bench.file_path(doc_id), bench.settings.preview_timeout_s
    # A scanned page's words and boxes as its OCR engine read them: it has no text layer.
    words = bench.registry.ocr_words(doc_id, span[0], max(span))
    return highlight_pdf_page(path, span, passage, cited, timeout_s, page, zoom, words)


@st.cache_data(max_entries=256, show_spinner=False)
def quoted_page(doc_id: str, span: tuple[int, int], sentence: str) -> int | None:
    """The page of a passage over a page break that holds its first quoted sentence, as the
    citation's page view chooses it (``highlighted_page``): the picker's card had named the
    chunk's first page, one page early. Read in a child with the preview's time limit."""
    bench = workbench()
    path, timeout_s = bench.file_path(doc_id), bench.settings.preview_timeout_s
    words = bench.registry.ocr_words(doc_id, span[0], max(span))
    return sentence_pdf_page(path, span, sentence, timeout_s, words)
