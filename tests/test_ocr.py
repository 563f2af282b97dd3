"""OCR of scanned pages: real page images made here (text rendered by PDFium, then stored as
a picture with no text layer), read by the real engines in the real parse child."""

from __future__ import annotations

import ctypes
import io
import json
import shutil
import signal
import threading

import numpy as np
import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from PIL import Image

from ingest.ocr import OCR_DPI, Limit, OcrOptions, rapidocr_available, time_limit, timed_out
from ingest.pipeline import FileReport, Ingestor, Source
from masis_core.services.reports import citation_source, run_markdown
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench

A6 = (105, 148)  # mm: a small page keeps OCR in the tests to a few seconds
PUMP = (
    "Hydraulic pump maintenance. The hydraulic pump must be inspected every 500 operating "
    "hours. Replace the pump seals when the pressure drops below 180 bar. Record each "
    "inspection in the plant logbook."
)
ENGINES = [
    pytest.param("rapidocr", id="rapidocr"),
    pytest.param(
        "tesseract",
        id="tesseract",
        marks=pytest.mark.skipif(
            shutil.which("tesseract") is None,
            reason="Debian's tesseract-ocr is not installed (optional engine)",
        ),
    ),
]
pytestmark = pytest.mark.skipif(
    not rapidocr_available(), reason="rapidocr-onnxruntime needs Python < 3.13"
)


def typed_page(text: str) -> bytes:
    """``text`` typeset on an A6 page: a PDF with a text layer."""
    pdf = FPDF(format=A6)
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.set_xy(8, 10)
    pdf.multi_cell(w=89, h=6, text=text)
    return bytes(pdf.output())


def scanned_page(text: str) -> Image.Image:
    """``text`` typeset on an A6 page and rendered at the OCR resolution: what a scanner
    makes of a printed page."""
    doc = pdfium.PdfDocument(typed_page(text))
    try:
        return doc[0].render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    finally:
        doc.close()


def image_pdf(pages: list[Image.Image | None]) -> bytes:
    """Pages that are pictures only (``None``: a blank page), as a scan is stored."""
    out = FPDF(format=A6)
    for image in pages:
        wide = image is not None and image.width > image.height
        out.add_page(orientation="L" if wide else "P")  # a page turned sideways is landscape
        if image is not None:
            buf = io.BytesIO()
            image.save(buf, format="PNG")
            out.image(buf, x=0, y=0, w=out.w, h=out.h)
    return bytes(out.output())


def ingest_scan(bench: Workbench, data: bytes, name: str, engine: str = "rapidocr") -> FileReport:
    """``data`` ingested into a fresh "plant" workspace with the OCR engine ``engine``."""
    bench.settings.ocr_engine = engine
    ws = bench.create_workspace("plant", "wordllama")
    return Ingestor(bench).ingest_bytes(ws, data, name)


def mixed_pdf() -> bytes:
    """A typed page (real text layer), then a scanned one."""
    typed = FPDF(format=A6)
    typed.add_page()
    typed.set_font("Helvetica", size=11)
    typed.multi_cell(w=89, h=6, text="Boiler startup. Open the feed valve before lighting.")
    mixed = pdfium.PdfDocument(bytes(typed.output()))
    mixed.import_pages(pdfium.PdfDocument(image_pdf([scanned_page(PUMP)])))
    buf = io.BytesIO()
    mixed.save(buf)
    return buf.getvalue()


def words(text: str) -> set[str]:
    return {w.strip(".,").lower() for w in text.split()}


def test_a_scanned_page_is_read_and_its_answer_cites_ocr(bench: Workbench) -> None:
    bench.settings.ocr_engine = "rapidocr"  # the engine requirements.txt installs
    ws = bench.create_workspace("plant", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, image_pdf([scanned_page(PUMP)]), "scan.pdf")
    assert report.status == "ingested", report.error
    assert (report.ocr_pages, report.ocr_engine, report.empty_pages) == ([1], "rapidocr", [])
    assert "OCR (rapidocr) read page 1" in report.notes
    (chunk,) = bench.store.collection("wordllama", ws.id).get(where={"doc_id": report.doc_id})[
        "metadatas"
    ]
    assert (chunk["ocr"], chunk["ocr_engine"]) == (True, "rapidocr")

    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    # rapidocr reads this page's "500" as "5o0": the sentence is found, not every digit.
    assert rec.answer and "operating hours" in rec.answer, rec.answer
    assert rec.citations and all(c["ocr"] for c in rec.citations)
    assert citation_source(rec.citations[0]) == "scan.pdf, page 1 (OCR)"
    # The export escapes document text for Markdown ("scan\\.pdf"); unescaped, the same line.
    assert "1. scan.pdf, page 1 (OCR)" in run_markdown(rec).replace("\\", "")


def test_a_text_page_keeps_its_layer_and_only_the_scan_is_ocred(bench: Workbench) -> None:
    """A mixed file: the typed page is not OCRed nor marked; the scanned one is."""
    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, mixed_pdf(), "mixed.pdf")
    assert (report.status, report.ocr_pages, report.empty_pages) == ("ingested", [2], [])
    got = bench.store.collection("wordllama", ws.id).get(where={"doc_id": report.doc_id})
    assert any(m["ocr"] for m in got["metadatas"])
    assert "feed valve" in " ".join(got["documents"])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("turn", [180, 90])
def test_a_page_scanned_upside_down_or_sideways_is_read_upright(
    bench: Workbench, engine: str, turn: int
) -> None:
    bench.settings.ocr_engine = engine
    ws = bench.create_workspace("plant", "wordllama")
    page = scanned_page(PUMP).rotate(-turn, expand=True)  # turned clockwise, as fed in
    report = Ingestor(bench).ingest_bytes(ws, image_pdf([page]), "turned.pdf")
    assert (report.status, report.ocr_pages) == ("ingested", [1]), report.error
    (text,) = bench.store.collection("wordllama", ws.id).get(where={"doc_id": report.doc_id})[
        "documents"
    ]
    expected = words(PUMP)
    # rapidocr drops some spaces ("below180bar.Recordeach…"): most words, not all.
    assert len(words(text) & expected) >= 0.6 * len(expected), text
    assert text.lower().startswith("hydraulic pump"), text  # read in order, not backwards
    if turn == 180:  # a sideways page may be read as it lies (tesseract does), not turned
        assert "turned upright: page 1 (180°)" in "; ".join(report.notes)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_a_page_in_two_columns_is_read_column_by_column(bench: Workbench) -> None:
    """tesseract reads one-column pages line by line (--psm 4); a page with a gutter keeps
    its layout analysis, or each line would run into the other column's."""
    bench.settings.ocr_engine = "tesseract"
    ws = bench.create_workspace("plant", "wordllama")
    pdf = FPDF(format=(148, 210))
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(8, 10)
    pdf.multi_cell(w=60, h=5, text=" ".join(f"Left note {i} on the pump seals." for i in range(8)))
    pdf.set_xy(78, 10)
    pdf.multi_cell(w=60, h=5, text=" ".join(f"Right note {i} on the feed valve." for i in range(8)))
    doc = pdfium.PdfDocument(bytes(pdf.output()))
    page = doc[0].render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    doc.close()
    report = Ingestor(bench).ingest_bytes(ws, image_pdf([page]), "columns.pdf")
    assert report.status == "ingested", report.error
    got = bench.store.collection("wordllama", ws.id).get(where={"doc_id": report.doc_id})
    text = " ".join(got["documents"])
    assert "Left note 7" in text and "Right note 0" in text, text
    assert text.index("Right note 0") > text.index("Left note 7"), text


def test_rapidocr_is_built_once_and_later_files_reuse_it(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a file needed rapidocr, the parent holds the built engine and the next file's
    child inherits it: that child reads its scan even though building one would fail."""
    from ingest import ocr

    monkeypatch.setattr(ocr, "_BUILT", {})
    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    first = Ingestor(bench).ingest_bytes(ws, image_pdf([scanned_page(PUMP)]), "first.pdf")
    assert first.ocr_pages == [1]

    def broken(_self: object) -> None:
        raise RuntimeError("models not loadable")

    monkeypatch.setattr(ocr.RapidOcrEngine, "__init__", broken)
    page = scanned_page(PUMP).rotate(-180, expand=True)  # other bytes: not a duplicate
    second = Ingestor(bench).ingest_bytes(ws, image_pdf([page]), "second.pdf")
    assert (second.status, second.ocr_pages) == ("ingested", [1]), second.error


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_tiny_print_found_at_no_text_is_read_again_at_twice_the_resolution(
    bench: Workbench,
) -> None:
    """3-pt print (a form's label) is too small to read at 200 dpi; scanned finer, it is
    there, and a page that gave nothing is read again at 400 dpi."""
    bench.settings.ocr_engine = "tesseract"
    ws = bench.create_workspace("plant", "wordllama")
    pdf = FPDF(format=A6)
    pdf.add_page()
    pdf.set_font("Helvetica", size=3)
    pdf.set_xy(8, 10)
    pdf.cell(text="Pump seal record sheet")
    doc = pdfium.PdfDocument(bytes(pdf.output()))
    page = doc[0].render(scale=600 / 72, grayscale=True).to_pil()  # a fine scan
    doc.close()
    report = Ingestor(bench).ingest_bytes(ws, image_pdf([page]), "form.pdf")
    assert (report.status, report.ocr_pages) == ("ingested", [1]), report.error
    (text,) = bench.store.collection("wordllama", ws.id).get(where={"doc_id": report.doc_id})[
        "documents"
    ]
    assert "seal record" in text.lower(), text


def test_a_scan_is_read_one_page_image_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays that of one page whatever the length of the scan: when a page is read,
    no earlier page's image is alive any more (500 pages measured: bench.ocr_quality)."""
    import weakref

    from ingest import parsing

    images: list[weakref.ref] = []
    alive_before: list[int] = []
    real = parsing.read_page

    def watched(engine, image, dpi):
        alive_before.append(sum(1 for ref in images if ref() is not None))
        images.append(weakref.ref(image))
        return real(engine, image, dpi)

    monkeypatch.setattr(parsing, "read_page", watched)
    parsed = parsing.parse_pdf(image_pdf([scanned_page(PUMP)] * 3), OcrOptions("auto"))
    assert parsed.ocr_pages == [1, 2, 3]
    assert alive_before == [0, 0, 0]
    assert all(ref() is None for ref in images)


def test_blank_pages_of_a_scan_are_neither_ocred_nor_reported_as_scans(bench: Workbench) -> None:
    white = Image.new("L", (400, 560), 255)
    report = ingest_scan(bench, image_pdf([scanned_page(PUMP), None, white]), "scan.pdf")
    assert report.status == "ingested", report.error
    # Page 2 has nothing on it; page 3 is a white picture: OCR finds nothing there and says so.
    assert (report.ocr_pages, report.blank_pages, report.empty_pages) == ([1], [2], [3])
    assert "1 of 3 pages without text: blank, nothing on them (page 2)" in report.notes
    assert "OCR (rapidocr) found no text on page 3" in "; ".join(report.notes)


def test_a_page_that_outlasts_its_time_limit_is_skipped_with_its_reason(
    bench: Workbench,
) -> None:
    bench.settings.ocr_page_timeout_s = 0.001
    report = ingest_scan(bench, image_pdf([scanned_page(PUMP)]), "slow.pdf")
    assert report.status == "failed"
    assert report.error == (
        "no text layer: its only page has no extractable text; "
        "OCR gave up on page 1 after 0.001 s (MASIS_OCR_PAGE_TIMEOUT_S)"
    )
    assert bench.documents("plant") == []


class _WaitsForTheAlarm:
    """A C call's argument whose conversion is where the alarm lands, as it did once in CI
    (pypdfium2 rendering a page under a 1 ms limit)."""

    @property
    def _as_parameter_(self) -> int:
        signal.pause()
        return 0


def test_a_timeout_that_lands_inside_a_c_call_is_still_a_timeout() -> None:
    assert threading.current_thread() is threading.main_thread()
    limit = Limit()
    with pytest.raises(ctypes.ArgumentError) as caught, time_limit(0.01, limit):
        ctypes.CDLL(None).abs(_WaitsForTheAlarm())
    # ctypes keeps only the text of what interrupted it: the exception alone cannot tell.
    assert "PageTimeout" in str(caught.value)
    assert not timed_out(caught.value)
    assert timed_out(caught.value, limit)


def test_ocr_can_be_turned_off_and_then_says_so(bench: Workbench) -> None:
    report = ingest_scan(bench, image_pdf([scanned_page(PUMP)]), "scan.pdf", engine="off")
    assert report.status == "failed"
    assert report.error.endswith("; OCR is off (MASIS_OCR_ENGINE=off)")


def test_ocr_beyond_the_page_bound_is_reported_not_done(bench: Workbench) -> None:
    bench.settings.ocr_max_pages = 1
    page = scanned_page(PUMP)
    report = ingest_scan(bench, image_pdf([page, page]), "long.pdf")
    assert (report.status, report.ocr_pages, report.empty_pages) == ("ingested", [1], [2])
    assert "page 2 not OCRed: over MASIS_OCR_MAX_PAGES=1" in "; ".join(report.notes)


def test_ocr_reports_progress_per_page_and_stops_with_the_batch(bench: Workbench) -> None:
    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    page = scanned_page(PUMP)
    seen: list[tuple[str, int, int]] = []
    stop = False

    def on_start(_i: int, _source: Source):
        def progress(stage: str, done: int, total: int) -> None:
            nonlocal stop
            seen.append((stage, done, total))
            stop = stage == "OCR pages" and done >= 1

        return progress

    sources = [Source.of_bytes("long.pdf", image_pdf([page] * 4))]
    (report,) = Ingestor(bench).ingest_each(ws, sources, on_start, cancelled=lambda: stop)
    assert ("OCR pages", 0, 4) in seen and ("OCR pages", 1, 4) in seen
    assert ("OCR pages", 4, 4) not in seen  # stopped after the first page, not at the end
    assert report.status == "failed"
    assert report.error.startswith("cancelled: the batch was stopped")
    assert bench.documents("plant") == []


def test_the_library_page_counts_ocred_pages(bench: Workbench, monkeypatch) -> None:
    from masis_core.config import get_settings
    from tests.apptest import fresh_app, settle

    monkeypatch.setenv("MASIS_OCR_ENGINE", "rapidocr")
    get_settings.cache_clear()
    bench.create_workspace("demo", "wordllama")
    at = fresh_app().run()
    at.file_uploader[0].set_value(
        [("scan.pdf", image_pdf([scanned_page(PUMP), None]), "application/pdf")]
    )
    at.button(key="FormSubmitter:upload-Ingest").click().run()
    settle(at)
    row = at.dataframe[0].value.set_index("file").loc["scan.pdf"]
    # Page 2 is blank: counted under "pages without text", as the notes name it.
    assert (row["status"], row["pages OCRed"], row["pages without text"]) == ("ingested", 1, 1)
    assert "OCR (rapidocr) read page 1" in row["notes"]
    assert "1 of 2 pages without text: blank, nothing on them (page 2)" in row["notes"]
    # The saved document list says so too, from the registry (after a reload of the page).
    at = fresh_app().run()
    assert any("scan.pdf" in m.value and "OCR: 1 of 2 pages" in m.value for m in at.markdown)


def test_ocr_pages_are_saved_with_the_document_and_listed_by_the_cli(
    bench: Workbench, capsys: pytest.CaptureFixture[str]
) -> None:
    from ingest.__main__ import main

    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    data = mixed_pdf()
    report = Ingestor(bench).ingest_bytes(ws, data, "mixed.pdf")
    assert report.ocr_pages == [2]
    (doc,) = bench.documents("plant")
    assert (doc.pages, doc.ocr_pages) == (2, [2])
    again = Ingestor(bench).ingest_bytes(ws, data, "mixed.pdf")
    assert (again.status, again.ocr_pages) == ("duplicate", [2])

    assert main(["--workspace", "plant", "--list"]) == 0
    assert (
        f"mixed.pdf: 2 pages, {doc.chunks} chunks, 1 read by OCR (page 2)"
        in capsys.readouterr().out
    )
    assert main(["--workspace", "plant", "--list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["documents"]
    assert (listed["filename"], listed["ocr_pages"]) == ("mixed.pdf", [2])


def _report_then_work(report) -> str:
    import time

    report(0, 1)
    time.sleep(1.0)  # a page being read: longer than the file's own limit below
    report(1, 1)
    return "read"


def test_progress_sent_while_the_parent_was_busy_still_moves_the_deadline() -> None:
    """A file parsed ahead reports its OCR pages while the parent stores the previous file;
    reports read late still count, so that file is not failed as timed out."""
    import time

    from ingest.isolate import ChildCall

    call = ChildCall(_report_then_work, (), timeout_s=0.5, progress_grace_s=30)
    time.sleep(0.8)  # the parent busy elsewhere, past the file's 0.5 s
    seen: list[tuple[int, int]] = []
    assert call.outcome(lambda d, t: seen.append((d, t))) == ("ok", "read")
    assert seen == [(0, 1), (1, 1)]


def test_a_finer_reading_that_fails_keeps_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unsure page is read again at 400 dpi; when that second reading fails (or runs out
    of the page's time) the first reading stands instead of the page being lost."""
    from ingest import parsing
    from ingest.ocr import Reading

    calls: list[float] = []

    def first_unsure_then_broken(engine, image, dpi):
        calls.append(dpi)
        if len(calls) == 1:
            return Reading("Pump seal record sheet, checked weekly.", 0.3, 0)
        raise RuntimeError("the engine choked on the finer image")

    monkeypatch.setattr(parsing, "read_page", first_unsure_then_broken)
    parsed = parsing.parse_pdf(image_pdf([scanned_page(PUMP)]), OcrOptions("auto"))
    assert len(calls) == 2 and calls[1] > calls[0]
    assert parsed.ocr_pages == [1]
    assert [p.text for p in parsed.pages] == ["Pump seal record sheet, checked weekly."]
    assert parsed.empty_pages == [] and parsed.ocr_timeouts == []


def test_an_engine_error_is_reported_as_such_not_as_a_page_without_text(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken engine is not a blank page: the report names the engine's error (the parse
    child is forked, so it inherits the patched reader)."""
    from ingest import parsing

    def broken(engine, image, dpi):
        raise RuntimeError("onnxruntime: model input has the wrong shape\nstack trace ...")

    monkeypatch.setattr(parsing, "read_page", broken)
    report = ingest_scan(bench, image_pdf([scanned_page(PUMP)]), "scan.pdf")
    assert report.status == "failed"
    assert report.error == (
        "no text layer: its only page has no extractable text; OCR (rapidocr) failed on "
        "page 1: onnxruntime: model input has the wrong shape"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_show_the_page_of_a_scan_highlights_the_cited_words(
    bench: Workbench, engine: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """Research page, a citation of a scanned PDF, "Show the page": the cited words are
    highlighted where the engine read them. Where they are is told independently: the scan
    is a picture of a typeset page, whose own text layer PDFium searches."""
    import streamlit

    from masis_core.answers.support import cited_sentences, sentence_support
    from masis_core.services.runs import RunStore
    from tests.apptest import fresh_app, settle
    from tests.test_browser_evidence import word_boxes
    from tests.test_highlight import highlighted_share

    typed = tmp_path / "typed.pdf"
    typed.write_bytes(typed_page(PUMP))
    report = ingest_scan(bench, image_pdf([scanned_page(PUMP)]), "scan.pdf", engine)
    assert report.ocr_pages == [1], report
    shown: list[bytes] = []
    real_image = streamlit.image

    def image(data, *args, **kwargs):  # what the page shows, kept for the test to look at
        shown.append(data)
        return real_image(data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "image", image)
    at = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input("How often must the hydraulic pump be inspected?")
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    run_id = at.query_params["run"]
    run_id = run_id[0] if isinstance(run_id, list) else run_id
    at.toggle(key=f"page-{run_id}-1").set_value(True).run()
    assert not at.exception
    assert not [w.value for w in at.warning if "could not be found" in w.value]
    (caption,) = [i.proto.imgs[0].caption for i in at.get("image")]
    assert caption == "scan.pdf, page 1"

    rec = RunStore(bench).get(run_id)
    assert rec is not None
    cited = cited_sentences(sentence_support(rec.answer or "", rec.citations))[1]
    assert any("hydraulic pump must be inspected" in s.lower() for s in cited), cited
    png = Image.open(io.BytesIO(shown[-1])).convert("RGB")
    # Words of the cited sentence found once on the page (spaces' boxes would be paper).
    words = ("must", "inspected", "operating")
    boxes = [box for word in words for box in word_boxes(typed, 1, word, png.width)]
    shares = [highlighted_share(png, box) for box in boxes]
    assert min(shares) > 0.8, ("the cited words sit on the highlight colour", shares)
    assert highlighted_share(png, (0, 0, 40, 40)) == 0  # the margin is not painted
    # The last sentence, "Record each inspection in the plant logbook.", is highlighted only
    # when the answer cites it.
    logbook = word_boxes(typed, 1, "logbook", png.width)
    painted = min(highlighted_share(png, box) for box in logbook) > 0.8
    assert painted == any("logbook" in s for s in cited), cited


@pytest.mark.parametrize("turn", [0, 90, 180, 270])
def test_a_word_read_on_a_turned_page_is_placed_on_the_page_as_stored(turn: int) -> None:
    """The engine reads the page turned upright; the preview draws it as stored, so each
    word's box is turned back."""
    from ingest.ocr import _turned, _unturned

    page = np.full((200, 100), 255, dtype=np.uint8)
    page[20:40, 10:70] = 0  # a word: x 0.1-0.7, y 0.1-0.2 of the page
    turned = _turned(page, turn)
    rows, cols = np.nonzero(turned == 0)
    height, width = turned.shape
    read = ("word", cols.min() / width, rows.min() / height, (cols.max() + 1) / width)
    box = _unturned((*read, (rows.max() + 1) / height), turn)
    assert box == pytest.approx(("word", 0.1, 0.1, 0.7, 0.2))


def _record_stores(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The doc ids of the documents whose chunks are written, in the order they are."""
    stored: list[str] = []
    real_add = bench.store.add_chunks

    def recording_add(model, ids, *args, **kwargs):
        stored.append(ids[0].split("/")[1])
        return real_add(model, ids, *args, **kwargs)

    monkeypatch.setattr(bench.store, "add_chunks", recording_add)
    return stored


def test_a_scan_is_read_aside_while_the_files_after_it_are_stored(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file with pages to OCR waits for them (read in a second child) while the files
    after it are embedded and stored; the reports still come in the batch's order."""
    from ingest.pipeline import doc_id_for
    from tests.pdfs import filler, make_pdf

    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    stored = _record_stores(bench, monkeypatch)
    files = {
        "scan.pdf": image_pdf([scanned_page(PUMP)]),
        "turbine.pdf": make_pdf([filler("turbine", 200)]),
        "boiler.pdf": make_pdf([filler("boiler", 200)]),
    }
    sources = [Source.of_bytes(name, data) for name, data in files.items()]
    reports = list(Ingestor(bench).ingest_each(ws, sources))

    assert [(r.file, r.status) for r in reports] == [(n, "ingested") for n in files]
    assert reports[0].ocr_pages == [1]
    names = {doc_id_for(data): name for name, data in files.items()}
    order = [names[d] for d in stored]
    # The next file is stored before the scan; the one after it too, unless the scan's
    # pages were read by the time the next file was done.
    assert order[0] == "turbine.pdf" and sorted(order) == sorted(files), order
    assert {d.filename for d in bench.documents("plant")} == set(files)


def test_a_file_to_ocr_past_the_aside_bound_waits_for_the_one_aside(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one file aside at most (``MAX_ASIDE``), a second scan waits for the first to be
    stored before it is set aside itself: the text file after them is stored between them,
    not before both."""
    from ingest import batch
    from ingest.pipeline import doc_id_for
    from tests.pdfs import filler, make_pdf

    monkeypatch.setattr(batch, "MAX_ASIDE", 1)
    bench.settings.ocr_engine = "rapidocr"
    ws = bench.create_workspace("plant", "wordllama")
    stored = _record_stores(bench, monkeypatch)
    files = {
        "first-scan.pdf": image_pdf([scanned_page(PUMP)]),
        "second-scan.pdf": image_pdf([scanned_page("Gearbox oil is changed every 4000 hours.")]),
        "turbine.pdf": make_pdf([filler("turbine", 200)]),
    }
    sources = [Source.of_bytes(name, data) for name, data in files.items()]
    reports = list(Ingestor(bench).ingest_each(ws, sources))

    assert [(r.file, r.status) for r in reports] == [(n, "ingested") for n in files]
    names = {doc_id_for(data): name for name, data in files.items()}
    assert [names[d] for d in stored] == ["first-scan.pdf", "turbine.pdf", "second-scan.pdf"]
