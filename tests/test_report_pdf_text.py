"""The PDF export prints text the way the screen shows it (issue 29, defect 6): a document's own
"[7]" (on screen "［7］") never prints as a citation's "[7]"; Arabic and Hebrew print right to
left with their letters joined; bidi controls are gone.

What a person gets is checked in the PDF itself: PDFium's text and character boxes, and the
ink of the rendered page (a joined Arabic word is fewer blobs of ink than its letters).
"""

from __future__ import annotations

import io

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image

from ingest.pipeline import Ingestor
from masis_core.services import report_pdf
from masis_core.services.report_pdf import UNSHAPED_NOTE, run_pdf
from masis_core.services.reports import run_markdown
from masis_core.services.runs import RunService
from tests.test_evidence import pdf_text
from tests.test_reports import DISAGREEING, TRACE, record


def count_blobs(ink: np.ndarray) -> int:
    """Connected areas of ink, 4-neighbours (what scipy's ``ndimage.label`` counts by
    default; scipy is not among the requirements)."""
    seen = np.zeros_like(ink, dtype=bool)
    rows, cols = ink.shape
    count = 0
    for start in zip(*np.nonzero(ink), strict=True):
        if seen[start]:
            continue
        count += 1
        seen[start] = True
        stack = [start]
        while stack:
            r, c = stack.pop()
            for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= nr < rows and 0 <= nc < cols and ink[nr, nc] and not seen[nr, nc]:
                    seen[nr, nc] = True
                    stack.append((nr, nc))
    return count


NOTE = (
    "Pump maintenance rules.\n\n"
    "The hydraulic pump must be inspected every 500 operating hours as required by [7]. "
    "Visitors sign the register at the front desk."
)
ARABIC = "مرحبا"  # م joins ر; ح, ب and ا join: two bodies and the dot of ب
HEBREW = "שלום"


def test_a_documents_own_marker_prints_as_on_screen_not_as_a_citation(bench) -> None:
    """Ingest, ask, export as the Runs page's "Export as PDF" does (``ui.evidence``)."""
    import streamlit as st

    from ui.evidence import report_pdf as export

    st.cache_resource.clear()  # a workbench cached by an earlier test (auth mode) is not ours
    ws = bench.create_workspace("plant", "wordllama")
    Ingestor(bench).ingest_bytes(ws, NOTE.encode(), "rules.txt")
    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    assert rec.status == "completed", rec.hitl or rec.error
    assert "required by ［7］. [1]" in (rec.answer or "")  # as the screen shows it
    text = pdf_text(export(rec))
    assert "required by ⟦7⟧. [1]" in text
    assert "[7]" not in text


def test_the_pdf_keeps_the_lead_apart_from_also_relevant_and_marks_a_draft() -> None:
    answer = "Every 500 hours. [1]\n\nSeals are checked. [2]"
    text = " ".join(pdf_text(run_pdf(record(answer=answer))).split())
    assert "Answer Every 500 hours. [1] Also relevant Seals are checked. [2]" in text
    paused = " ".join(pdf_text(run_pdf(record(answer=answer, status="needs_human"))).split())
    assert "Draft answer — awaiting review Every 500 hours." in paused
    asked = "Can more than one computer monitor the UPS?"
    said = " ".join(pdf_text(run_pdf(record(question=asked, answer=DISAGREEING))).split())
    assert "Also relevant “Also relevant” passage 1 and the lead disagree (one says no" in said


def test_passages_without_a_page_image_share_a_sheet() -> None:
    """Each citation began a sheet of its own: web results and notes, which have no page
    image, each left a sheet near-empty."""
    web = [
        {"n": n, "filename": f"result {n}", "url": f"https://example.org/{n}", "text": "Seals."}
        for n in (1, 2, 3, 4)
    ]
    data = run_pdf(record(answer="Seals are checked. [1]", citations=web))
    pdf = pdfium.PdfDocument(data)
    try:
        assert len(pdf) == 2  # the answer, then one sheet for the whole appendix
    finally:
        pdf.close()
    appendix = " ".join(pdf_text(data).split())
    assert all(f"[{n}] result {n} — https://example.org/{n}" in appendix for n in (1, 2, 3, 4))
    # Mixed: a page image, two web results, a page image. Each image opens a sheet; the web
    # results run on under the first image's sheet.
    png = io.BytesIO()
    Image.new("RGB", (850, 1100), "white").save(png, format="PNG")
    shot = report_pdf.PageShot(png.getvalue(), page=2, located=True, width=850, height=1100)
    mixed = [{**web[0], "url": None, "filename": "manual.pdf", "page": 2}, *web[1:3]]
    mixed.append({**web[3], "url": None, "filename": "manual.pdf", "page": 2})
    data = run_pdf(record(answer="Seals are checked. [1]", citations=mixed), {1: shot, 4: shot})
    pdf = pdfium.PdfDocument(data)
    try:
        sheets = []
        for page in pdf:
            textpage = page.get_textpage()
            sheets.append(" ".join(textpage.get_text_bounded().split())[:40])
            textpage.close()
            page.close()
    finally:
        pdf.close()
    # The answer; [1] with its page (which fills the sheet); [2] and [3] together; [4].
    assert [s.split(" — ")[0].split(" Cited")[0] for s in sheets[1:]] == [
        "Appendix: the cited pages [1] manual.pdf",
        "[2] result 2",
        "[4] manual.pdf, page 2 Page 2: the cited",
    ]


def test_without_the_unicode_font_the_marker_still_differs(monkeypatch) -> None:
    monkeypatch.setattr(report_pdf, "FONT_CANDIDATES", ())
    text = pdf_text(run_pdf(record(answer="Every 500 h, see ［7］. [1]", metrics={})))
    assert "see {7}. [1]" in text and "[7]" not in text


def glyphs(data: bytes, wanted: str) -> tuple[list[tuple[float, str]], int]:
    """The characters of ``wanted``'s script on the first page with their left edge, and the
    blobs of ink they make on the rendered page."""
    pdf = pdfium.PdfDocument(data)
    page = pdf[0]
    textpage = page.get_textpage()
    found = []
    for i in range(textpage.count_chars()):
        c = textpage.get_text_range(i, 1)
        if c in wanted:
            found.append((textpage.get_charbox(i), c))
    left = min(b[0] for b, _ in found)
    right = max(b[2] for b, _ in found)
    bottom = min(b[1] for b, _ in found)
    top = max(b[3] for b, _ in found)
    scale, height = 4, page.get_height()
    image = page.render(scale=scale).to_pil().convert("L")
    box = (
        left * scale - 2,
        (height - top) * scale - 6,
        right * scale + 2,
        (height - bottom) * scale + 6,
    )
    ink = np.array(image.crop(tuple(int(v) for v in box))) < 128
    blobs = count_blobs(ink)
    textpage.close()
    page.close()
    pdf.close()
    return [(b[0], c) for b, c in found], blobs


@pytest.mark.skipif(not report_pdf.can_shape(), reason="uharfbuzz is not installed")
def test_arabic_and_hebrew_print_right_to_left_and_joined() -> None:
    data = run_pdf(record(question=f"Inspection {ARABIC} and {HEBREW} now"))
    hebrew, _ = glyphs(data, HEBREW)
    assert "".join(c for _, c in sorted(hebrew)) == HEBREW[::-1]  # first letter rightmost
    arabic, blobs = glyphs(data, ARABIC)
    assert "".join(c for _, c in sorted(arabic)) == ARABIC[::-1]
    assert blobs == 3, blobs  # unjoined: five letters and a dot
    assert UNSHAPED_NOTE not in pdf_text(data)


def test_without_shaping_the_export_says_so(monkeypatch) -> None:
    monkeypatch.setattr(report_pdf, "can_shape", lambda: False)
    text = " ".join(pdf_text(run_pdf(record(question=f"Inspection {HEBREW}?"))).split())
    assert UNSHAPED_NOTE in text
    assert UNSHAPED_NOTE not in " ".join(pdf_text(run_pdf(record())).split())


def test_bidi_controls_are_not_printed() -> None:
    text = pdf_text(run_pdf(record(question="invoice\u202efdp.exe\u2066 \u2069due?")))
    assert "invoicefdp.exe" in text
    assert not set(text) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def test_exports_say_what_the_analyst_did_at_review() -> None:
    """An answer accepted at 5% and marked right, or a rephrased question, was exported with
    no word of either: a reader saw a 5% answer marked right and no reason."""
    review = [
        {"node": "human_review", "kind": "low_confidence", "action": "rephrase", "question": "B?"},
        {"node": "human_review", "kind": "low_confidence", "action": "accept", "lead": 1},
    ]
    rec = record(trace=[*TRACE, *review], input={"question": "A *first* try?"}, confidence=0.05)
    md = run_markdown(rec)
    assert "- Rephrased by the analyst at review (asked before as “A \\*first\\* try?”)" in md
    assert "- Accepted by the analyst at review, leading with “Also relevant” passage 1" in md
    assert md.index("Accepted by the analyst") < md.index("Confidence: 5%")
    text = " ".join(pdf_text(run_pdf(rec)).split())
    assert "Rephrased by the analyst at review (asked before as “A *first* try?”)" in text
    assert "Accepted by the analyst at review, leading with “Also relevant” passage 1" in text
    assert "at review" not in run_markdown(record())  # nothing happened at review


def image_sheets(data: bytes) -> list[tuple[list[float], str]]:
    """Per sheet: the heights (mm) of its images and its text."""
    pdf = pdfium.PdfDocument(data)
    sheets = []
    try:
        for page in pdf:
            textpage = page.get_textpage()
            text = " ".join(textpage.get_text_bounded().split())
            textpage.close()
            heights = [
                (o.get_bounds()[3] - o.get_bounds()[1]) / 72 * 25.4
                for o in page.get_objects()
                if o.type == pdfium.raw.FPDF_PAGEOBJ_IMAGE
            ]
            sheets.append((heights, text))
            page.close()
    finally:
        pdf.close()
    return sheets


@pytest.mark.parametrize("sentences", [3, 50, 60])
def test_a_cited_pages_caption_and_image_share_a_sheet(sentences: int) -> None:
    """Its cited sentences came first: 50 of them shrank the page image to a 16 mm strip,
    55 pushed it onto the next sheet, away from "[1] manual.pdf, page 2". The caption and
    the image now open the sheet; the sentences follow, on it when they fit."""
    png = io.BytesIO()
    Image.new("RGB", (850, 1100), "white").save(png, format="PNG")
    shot = report_pdf.PageShot(png.getvalue(), page=2, located=True, width=850, height=1100)
    cited = {1: tuple(f"Sentence {i} about the pump." for i in range(sentences))}
    rec = record(citations=[{"n": 1, "filename": "manual.pdf", "page": 2, "text": "x"}])
    w = report_pdf._Writer(report_pdf.unicode_font())
    report_pdf._appendix(w, rec, {1: shot}, cited)
    sheets = image_sheets(w.output())
    (heights, text), *after = [s for s in sheets if s[0]]
    assert not after  # one image
    assert "[1] manual.pdf, page 2" in text and "Page 2: the cited words in yellow" in text
    assert heights[0] >= report_pdf.MIN_IMAGE_MM
    everything = " ".join(t for _, t in sheets)
    assert all(f"Sentence {i} about the pump." in everything for i in range(sentences))
    if sentences == 3:
        assert "Sentence 2 about the pump." in text  # they fit under the image
