"""Places, the page of a document without pages: chunked one place at a time, named in the
citation, shown with the cited words highlighted as escaped text."""

from __future__ import annotations

from ingest.chunking import chunk_pages
from ingest.parsing import Page
from masis_core.services.reports import citation_source
from masis_core.text.markup import highlighted_text
from tests.pdfs import filler


def test_pages_with_places_are_chunked_alone_and_keep_their_place() -> None:
    pages = [
        Page(1, filler("boiler", 160), place="slide 1"),
        Page(2, filler("pump", 30), place="slide 2"),
    ]
    chunks = chunk_pages(pages, 100, 20)
    assert [c.place for c in chunks] == ["slide 1", "slide 1", "slide 2"]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert "pump" not in chunks[1].text and "boiler" not in chunks[2].text


def test_a_citation_shows_its_place_and_a_pdf_citation_its_page() -> None:
    place = {"filename": "q3.xlsx", "page": 2, "page_end": 2, "place": "Revenue, rows 14–27"}
    assert citation_source(place) == "q3.xlsx, Revenue, rows 14–27"
    assert citation_source({"filename": "m.pdf", "page": 3, "page_end": 4}) == "m.pdf, pages 3–4"


def test_the_cited_words_are_highlighted_and_the_passage_stays_escaped() -> None:
    passage = "Intro [link](https://evil.example) line.\n\nThe *sample* was drawn\nat random. End."
    shown, found = highlighted_text(passage, ["The *sample* was drawn at random.", "Not there."])
    assert found == 1
    assert ":orange-background[The \\*sample\\* was drawn at random.] End." in shown
    assert "](" not in shown.replace("\\](", "")  # the link is text, not a link
    assert shown.startswith("Intro \\[link\\]")
    assert highlighted_text("A :red[b] c.", [])[1] == 0
    assert ":red[" not in highlighted_text("A :red[b] c.", [])[0]


def test_the_library_uploader_accepts_every_kind(bench) -> None:
    from tests.apptest import fresh_app

    bench.create_workspace("demo", "wordllama")
    at = fresh_app()
    at.switch_page("pages/library.py").run()
    assert not at.exception, at.exception
    (uploader,) = at.get("file_uploader")
    accepted = set(uploader.proto.type)
    for suffix in (".pdf", ".docx", ".docm", ".pptx", ".xlsx", ".xlsm", ".csv", ".html", ".epub"):
        assert suffix in accepted, accepted
    assert ".eml" in accepted


def _place_view_script() -> None:
    from ui.evidence import place_view

    place_view(
        {
            "filename": "survey.docx",
            "place": "3 Methods › 3.2 Sampling, paragraphs 1–2",
            "text": "3 Methods › 3.2 Sampling\n\nHouseholds were drawn at random. [x](https://e.vil)",
        },
        ("Households were drawn at random.",),
    )


def test_the_source_view_shows_the_place_and_highlights_the_cited_words() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_place_view_script).run()
    assert not at.exception, at.exception
    shown = [m.value for m in at.markdown]
    assert "**survey.docx** — 3 Methods › 3.2 Sampling, paragraphs 1–2" in shown
    assert any(":orange-background[Households were drawn at random.]" in m for m in shown), shown
    assert not any("](https" in m for m in shown)


def test_a_conflicting_source_shows_its_place_or_its_page() -> None:
    from masis_core.answers.stances import source_ref
    from ui.views import source_place

    ref = source_ref(
        {"doc_id": "d", "filename": "q3.xlsx", "page_start": 2, "place": "Revenue, rows 14–27"},
        "Q3 2023 | 3923",
    )
    assert source_place(ref) == "Revenue, rows 14–27"
    assert source_place({"page": 4, "place": ""}) == "page 4"


def test_a_word_citation_on_the_research_page_shows_its_place_highlighted(bench) -> None:
    """The whole way: a Word report ingested, asked offline on the research page; the
    citation names the heading path, and "Show the place" draws the passage with the cited
    sentence highlighted, and no page image."""
    from ingest.pipeline import Ingestor
    from tests.apptest import fresh_app, settle
    from tests.test_word import report_docx

    ws = bench.create_workspace("reports", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, report_docx(), "survey.docx").status == "ingested"
    at = fresh_app().run()
    at.switch_page("pages/research.py").run()
    at.text_area[0].input("How were the households sampled from the electoral roll?")
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    source = next(e for e in at.main.expander if e.label.startswith("[1]"))
    assert "survey.docx, Field survey of rural water supply › 3 Methods › 3.2 Sampling" in (
        source.label
    )
    at.toggle(key=f"page-{at.query_params['run']}-1").set_value(True).run()
    assert not at.exception, at.exception
    assert not at.get("image")
    shown = " ".join(m.value for m in at.markdown)
    # Every passage the answer quotes from this chunk is highlighted: the lead and the
    # section's second window offered beside it.
    highlighted = [part.split("]", 1)[0] for part in shown.split(":orange-background[")[1:]]
    assert any(
        "Households were drawn from the electoral roll by stratified random" in h
        for h in highlighted
    ), highlighted
