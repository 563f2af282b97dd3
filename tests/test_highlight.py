"""The cited words found again on the page and drawn highlighted (``ingest.highlight``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from ingest.chunking import chunk_pages
from ingest.highlight import align, fold, highlight_page, locate_passage
from ingest.isolate import highlight_pdf_page
from ingest.parsing import parse_pdf
from masis_core.answers.support import evidence_sentences
from tests.pdfs import filler, make_pdf

FIXTURE = Path(__file__).parent / "fixtures" / "nut-solaris-usb.pdf"
TIMEOUT_S = 30.0


def chunks_of(path: Path):
    return chunk_pages(parse_pdf(path.read_bytes()).pages)


def highlighted_share(png: bytes | Image.Image, box: tuple[float, float, float, float]) -> float:
    """Share of the paper inside ``box`` (pixels not taken by a glyph's ink) that shows the
    highlight: yellow, not white. Tolerant of anti-aliasing and of a re-encoded image."""
    image = png if isinstance(png, Image.Image) else Image.open(io.BytesIO(png))
    image = image.convert("RGB")
    left, top, right, bottom = (round(v) for v in box)
    paper = yellow = 0
    for x in range(max(0, left), min(image.width, right)):
        for y in range(max(0, top), min(image.height, bottom)):
            r, g, b = image.getpixel((x, y))
            if r > 180:  # not ink
                paper += 1
                yellow += b < 110 and g > 150
    return yellow / max(1, paper)


def test_fold_keeps_letters_and_digits_of_every_form() -> None:
    folded, where = fold("Co-operate: ﬁle №5")
    assert folded == "cooperatefileno5"
    assert where[9:11] == [12, 12]  # the ligature's two letters come from one character


def test_align_survives_hyphenation_whitespace_and_a_running_header() -> None:
    page = fold(
        "The relief valve is in-\nspected every 500 hours.\nPlant Manual 7\nIt opens at 230 bar."
    )
    passage = "The relief valve is inspected every 500 hours. It opens at 230 bar."
    mapping, found = align(passage, page[0])
    assert found == len(fold(passage)[0])
    assert mapping == sorted(mapping)  # in order, the header skipped


def test_every_chunk_of_a_real_manual_is_found_on_its_pages() -> None:
    chunks = chunks_of(FIXTURE)
    shares = [locate_passage(FIXTURE, c.page_start, c.page_end, c.text).share for c in chunks]
    assert min(shares) >= 0.9, shares


def test_text_not_on_the_page_is_not_located() -> None:
    loc = locate_passage(
        FIXTURE, 1, 1, "Mongolia's capital city had half a million people in 1990."
    )
    assert not loc.found and loc.share < 0.5


def test_cited_sentence_is_drawn_in_the_highlight_colour_on_its_page(tmp_path: Path) -> None:
    chunk = next(c for c in chunks_of(FIXTURE) if c.page_end > c.page_start)
    sentence = evidence_sentences(chunk.text)[-1]
    shot = highlight_page(FIXTURE, chunk.page_start, chunk.page_end, chunk.text, (sentence,))
    assert shot is not None and shot.located and shot.cited_found
    # The page drawn is the one that holds the cited sentence, not the chunk's first page.
    on_page = locate_passage(FIXTURE, shot.page, shot.page, sentence)
    assert on_page.found
    assert shot.boxes
    for box in shot.boxes:
        assert highlighted_share(shot.png, box) > 0.3, box
    image = Image.open(io.BytesIO(shot.png)).convert("RGB")
    assert image.size == (shot.width, shot.height) == (900, image.height)
    assert highlighted_share(image, (0, 0, 40, 40)) == 0  # the margin is not painted


def test_other_page_of_a_two_page_passage_and_zoom(tmp_path: Path) -> None:
    chunk = next(c for c in chunks_of(FIXTURE) if c.page_end > c.page_start)
    sentence = evidence_sentences(chunk.text)[-1]
    auto = highlight_page(FIXTURE, chunk.page_start, chunk.page_end, chunk.text, (sentence,))
    assert auto is not None
    other = next(p for p in (chunk.page_start, chunk.page_end) if p != auto.page)
    shot = highlight_page(
        FIXTURE, chunk.page_start, chunk.page_end, chunk.text, (sentence,), page=other
    )
    assert shot is not None and shot.page == other and not shot.cited_found
    zoomed = highlight_page(
        FIXTURE, chunk.page_start, chunk.page_end, chunk.text, (sentence,), zoom=2
    )
    assert zoomed is not None and zoomed.width == 900  # a window of the page twice as large
    inside = zoomed.boxes  # clipped to the window
    assert inside and all(highlighted_share(zoomed.png, b) > 0.3 for b in inside)
    # Twice the resolution: the highlighted line is about twice as tall as at zoom 1.
    height = lambda b: b[3] - b[1]  # noqa: E731
    assert height(inside[0]) > 1.6 * height(auto.boxes[0])


def test_a_pdf_made_with_hyphens_and_running_headers(tmp_path: Path) -> None:
    pages = [
        f"Plant handbook\n{filler('boiler', 60)} The safety valve is in-\nspected weekly.\n1",
        f"Plant handbook\n{filler('pump', 60)}\n2",
        f"Plant handbook\n{filler('turbine', 60)}\n3",
    ]
    path = tmp_path / "plant.pdf"
    path.write_bytes(make_pdf(pages))
    chunks = chunk_pages(parse_pdf(path.read_bytes()).pages, size=80, overlap=10)
    assert all(locate_passage(path, c.page_start, c.page_end, c.text).found for c in chunks)
    first = chunks[0]
    shot = highlight_page(
        path,
        first.page_start,
        first.page_end,
        first.text,
        ("The safety valve is inspected weekly.",),
    )
    assert shot is not None and shot.cited_found and shot.page == 1


@pytest.mark.parametrize("name", ["note.txt", "gone.pdf"])
def test_no_page_to_draw_is_none(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name.endswith(".txt"):
        path.write_text("The relief valve opens at 230 bar.")
    assert (
        highlight_pdf_page(path, (1, 1), "The relief valve opens at 230 bar.", (), TIMEOUT_S)
        is None
    )


def test_highlight_runs_in_the_isolated_child() -> None:
    chunk = chunks_of(FIXTURE)[0]
    shot = highlight_pdf_page(
        FIXTURE, (chunk.page_start, chunk.page_end), chunk.text, (), TIMEOUT_S
    )
    assert shot is not None and shot.located and shot.png.startswith(b"\x89PNG")
