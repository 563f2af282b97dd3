"""The passage picker as the analyst meets it (``ui.picker``): each card's page is the page
of its first quoted sentence, as its citation's page view shows it; the picker works on a run
opened by its address; a pick shows the analyst's confirmation, never the paused figure."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from ingest.pipeline import Ingestor
from tests.pdfs import filler, make_pdf

VALVE = "The relief valve opens at 8 bar and closes again when the pressure falls to 7 bar."


def _picker_script(card: dict) -> None:  # type: ignore[type-arg]
    from ui.picker import passage_picker

    passage_picker("run-1", [card])


def test_a_card_names_the_page_of_its_first_sentence_not_its_chunks_first(bench) -> None:
    """One chunk over pages 1 and 2, the quoted sentence on page 2: the card had said page 1,
    one page early."""
    ws = bench.create_workspace("plant", "wordllama")
    pages = [filler("boiler", 60), f"{VALVE} {filler('valve', 30)}"]
    report = Ingestor(bench).ingest_bytes(ws, make_pdf(pages), "plant.pdf")
    card = {
        "n": 0,
        "text": VALVE,
        "heading": "",
        "title": "plant.pdf",
        "filename": "plant.pdf",
        "doc_id": report.doc_id,
        "page": 1,
        "page_end": 2,
        "place": "",
        "clashes": [],
    }
    st.cache_resource.clear()  # the app's workbench: this test's data directory
    st.cache_data.clear()
    at = AppTest.from_function(_picker_script, args=(card,), default_timeout=60).run()
    assert not at.exception, at.exception
    (head,) = [m.value for m in at.markdown if m.value.startswith("**The lead**")]
    assert head.endswith("— page 2"), head
