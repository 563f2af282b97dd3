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
