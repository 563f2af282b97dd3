"""A checkable answer in a real browser: ask, open a sentence's support, open a citation's page,
and the image the browser shows holds the highlight colour inside the cited words' boxes; then
the PDF export holds one drawn page per cited PDF passage.

The boxes are found independently of ``ingest.highlight``: PDFium's own text search for the
backing sentence's first words, on the page the caption names, scaled to the image.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from masis_core.answers.support import cited_sentences, sentence_support
from masis_core.config import Settings
from masis_core.services.runs import RunStore
from masis_core.workspaces.workbench import Workbench
from tests.browser import run_in, screenshot
from tests.test_browser import FIXTURE, ask, create_workspace, go, ingest_files, page, show_the_page  # noqa: F401
from tests.test_highlight import highlighted_share

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect  # noqa: E402


def word_boxes(pdf_path: Path, page_number: int, text: str, image_width: int) -> list[tuple]:
    """Pixel boxes of ``text``'s characters on the page, by PDFium's search, one per char."""
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        page = pdf[page_number - 1]
        width_pt, height_pt = page.get_size()
        scale = image_width / width_pt
        textpage = page.get_textpage()
        searcher = textpage.search(text, match_case=False)
        hit = searcher.get_next()
        assert hit is not None, f"PDFium finds {text!r} on page {page_number}"
        index, count = hit
        boxes = []
        for i in range(index, index + count):
            left, bottom, right, top = textpage.get_charbox(i)
            if right - left < 0.5:
                continue  # a space
            boxes.append(
                (
                    left * scale,
                    (height_pt - top) * scale,
                    right * scale,
                    (height_pt - bottom) * scale,
                )
            )
        searcher.close()
        textpage.close()
        page.close()
        return boxes
    finally:
        pdf.close()


def test_open_a_citation_and_see_the_cited_words_highlighted(page: Page, tmp_path: Path) -> None:  # noqa: F811
    create_workspace(page, "ups-docs")
    ingest_files(page, [str(FIXTURE)])
    expect(page.get_by_text("nut-solaris-usb.pdf: ingested")).to_be_visible()
    go(page, "Research")
    ask(page, "Which driver should a USB UPS use on Solaris with NUT?")
    expect(page.get_by_text("Support per sentence")).to_be_visible()

    # The first sentence's support: the evidence sentence behind it.
    support = page.get_by_text(re.compile(r"^📄 1\. "))  # an offline sentence is a quote
    support.click()
    expect(
        page.get_by_text(re.compile(r"^Quoted from \[\d\] nut-solaris-usb\.pdf")).first
    ).to_be_visible()

    # The first citation's page, highlighted.
    page.get_by_text(re.compile(r"^\[1\] nut-solaris-usb\.pdf, page")).click()
    show_the_page(page)
    figure = page.get_by_test_id("stImage").first
    expect(figure).to_be_visible()
    caption = figure.get_by_text(re.compile(r"nut-solaris-usb\.pdf, page \d+")).inner_text()
    shown_page = int(caption.rsplit(" ", 1)[1])
    src = figure.locator("img").get_attribute("src")
    assert src
    body = page.request.get(src if src.startswith("http") else page.url.split("/research")[0] + src)
    image = Image.open(io.BytesIO(body.body())).convert("RGB")

    # What the run cited, from its record: the sentence that backs the answer in passage [1].
    run_id = run_in(page.url)
    assert run_id
    rec = RunStore(Workbench(Settings(data_dir=tmp_path / "data"))).get(run_id)
    assert rec is not None
    cited = cited_sentences(sentence_support(rec.answer or "", rec.citations))[1]
    first_words = " ".join(cited[0].split()[:6])
    boxes = word_boxes(FIXTURE, shown_page, first_words, image.width)
    assert boxes
    shares = [highlighted_share(image, box) for box in boxes]
    # Each character's paper on the highlight colour: a small letter of the served (re-encoded)
    # image keeps some blended edge pixels ('s' of "this": 0.80), the mean stays near 1.
    # One glyph at a line's end (a hyphen or a closing bracket the highlight's word boxes stop
    # before) may stay off it; every other character sits on it.
    assert sum(share > 0.7 for share in shares) >= len(shares) - 1, ("highlighted", shares)
    assert sum(shares) / len(shares) > 0.9, ("the cited words sit on the highlight colour", shares)
    assert highlighted_share(image, (0, 0, 40, 40)) == 0  # the margin is not painted

    citation = page.get_by_test_id("stExpander").filter(has=figure).first
    screenshot(page, "highlighted-citation.png", tmp_path, height=3000, element=citation)

    # The PDF export of the same run, made on click: the answer, and the cited pages drawn.
    go(page, "Runs")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export as PDF").click()
    report = Path(download.value.path()).read_bytes()
    assert report.startswith(b"%PDF-")
    pdf = pdfium.PdfDocument(report)
    try:
        images = sum(1 for p in pdf for _ in p.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE]))
    finally:
        pdf.close()
    assert images == len([c for c in rec.citations if not c.get("url")])
