"""Turn file bytes into cleaned per-page text (PDF via pypdfium2, plain text and Markdown)."""

from __future__ import annotations

import io
import logging
import math
import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from ingest import markdown
from ingest.document import Page, ParsedDocument, clean_text
from ingest.kinds import parse_kind
from ingest.ocr import (
    MAX_OCR_PIXELS,
    OCR_DPI,
    Engine,
    Limit,
    OcrOptions,
    ProgressFn,
    Reading,
    make_engine,
    read_page,
    resolve,
    time_limit,
    timed_out,
    unavailable_reason,
)
from ingest.outline import outline_entries
from masis_core.errors import DocumentError

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt", *MARKDOWN_SUFFIXES)
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = PDF_SUFFIXES + TEXT_SUFFIXES

# A page with fewer visible characters than this has no usable text layer (scanned image,
# figure only) or is blank.
MIN_PAGE_CHARS = 1
# A text-less page without images is rendered this small to tell a blank page (a white
# background rectangle, invisible marks) from a drawing.
BLANK_CHECK_PX = 96
# A page preview's pixel cap: a 3 x 14,400 pt page at 900 px wide asks for a 10.9 GiB bitmap.
MAX_PREVIEW_PIXELS = 20_000_000


def _pdf_open_error(exc: pdfium.PdfiumError) -> DocumentError:
    code = getattr(exc, "err_code", None)
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        return DocumentError("encrypted: the PDF is password-protected; remove the password first")
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return DocumentError("encrypted: the PDF uses an unsupported security handler")
    if code == pdfium_c.FPDF_ERR_FORMAT:
        return DocumentError("corrupt: the file is not a readable PDF (damaged or truncated)")
    return DocumentError(f"corrupt: the PDF could not be opened ({exc})")


# Running headers and footers: lines at a page's edge that repeat on many pages once page
# numbers are ignored. They are noise in every chunk and, worse, in extractive answers.
EDGE_LINES = 2
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.5
_ROMAN = re.compile(r"^[ivxlcdm]+$")
_NUMBERISH = {"#", "/", "of", "page", "-", "–", "|"}


def _edge_key(line: str) -> str:
    """A line without its page number: 'Title 3 / 12' and 'Title iv' both become 'title'."""
    words = re.sub(r"\d+", "#", line.strip().lower()).split()

    def is_number(w: str) -> bool:
        return w in _NUMBERISH or bool(_ROMAN.match(w)) or set(w) <= {"#", "/", "-", "."}

    while words and is_number(words[-1]):
        words.pop()
    while words and is_number(words[0]):
        words.pop(0)
    return " ".join(words)


def strip_running_lines(pages: list[Page]) -> list[Page]:
    """Drop repeated header/footer lines and bare page numbers from the pages' edges."""
    if len(pages) < RUNNING_MIN_PAGES:
        return pages
    counts: dict[str, int] = {}
    for page in pages:
        lines = page.text.split("\n")
        edges = {_edge_key(x) for x in (*lines[:EDGE_LINES], *lines[-EDGE_LINES:])}
        for key in edges:
            counts[key] = counts.get(key, 0) + 1
    needed = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * len(pages))
    running = {k for k, n in counts.items() if n >= needed}
    running.add("")  # a line that is only a page number
    out = []
    for page in pages:
        lines = page.text.split("\n")
        keep = [
            line
            for i, line in enumerate(lines)
            if not ((i < EDGE_LINES or i >= len(lines) - EDGE_LINES) and _edge_key(line) in running)
        ]
        text = "\n".join(keep).strip()
        if text:
            out.append(Page(page.number, text, page.ocr))
    return out


# A navigation page's entry: a title, then a page reference (one or more numbers, or a roman
# numeral) at the line's end; dot leaders between them ("2.1 Description . . . . 1").
_PAGE_REF = re.compile(
    r"^(?=.*[^\W\d_]).*[\s.](?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*[,–-]\s*\d{1,4})*$", re.I
)
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}")
_NAVIGATION_TITLE = re.compile(
    r"\b(?:contents|index|list of (?:figures|tables|illustrations))\b", re.I
)
NAVIGATION_MIN_LINES = 5
NAVIGATION_SHARE = 0.5


def navigation_page(text: str, continued: bool = False) -> bool:
    """A contents, index or list-of-figures page: most of its lines are entries ending in a
    page number, with dot leaders, or under such a title ("Contents", "Appendix E Concept
    index"); ``continued`` (the page before was one), entries alone will do. A question on
    the NUT FAQ had cited its contents pages as the answer; a page of data rows ("Sweden
    123") has no leaders and no such title, so it stays evidence."""
    lines = [line for line in text.split("\n") if len(line.strip()) > 1]
    if not lines or (len(lines) < NAVIGATION_MIN_LINES and not continued):
        return False
    entries = [line for line in lines if _PAGE_REF.match(line.strip())]
    needed = NAVIGATION_SHARE * len(lines)
    if len(entries) < needed:
        return False
    if continued:
        return True
    # Chapters' entries often go without leaders ("A Appendix 232"), their sections' with.
    led = sum(1 for line in entries if _DOT_LEADERS.search(line))
    return led >= needed / 2 or any(_NAVIGATION_TITLE.search(line) for line in lines[:3])


def _is_blank(page: pdfium.PdfPage) -> bool:
    """Nothing on the page: no objects, or no image and a render that is all white.

    A page with an image is never blank: rendering a scan to check would decode it, a cost
    on every page. Any doubt (a failed render) counts as not blank.
    """
    try:
        if pdfium_c.FPDFPage_CountObjects(page) == 0:
            return True
        if next(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]), None) is not None:
            return False
        scale = BLANK_CHECK_PX / max(1.0, *page.get_size())
        bitmap = page.render(scale=scale, grayscale=True)
    except (pdfium.PdfiumError, ValueError):  # ValueError: a page too thin for one pixel
        return False
    try:
        return bool((bitmap.to_numpy() == 255).all())
    finally:
        bitmap.close()


# A text layer is garbage when more than this share of it is U+FFFD (a font without a
# Unicode map), or when it has no letter at all (a page number over a scanned image) and not
# this many digits either (a page that is a table of figures is text, not a scan).
GARBAGE_SHARE = 0.3
MIN_FIGURE_DIGITS = 20
# A page image smaller than this on either side holds nothing legible.
MIN_OCR_SIDE_PX = 16


def usable_text(text: str) -> bool:
    """A text layer worth keeping rather than OCRing: some letters (or a page of figures),
    not mostly U+FFFD."""
    if len(text) < MIN_PAGE_CHARS:
        return False
    if not any(ch.isalpha() for ch in text) and sum(ch.isdigit() for ch in text) < (
        MIN_FIGURE_DIGITS
    ):
        return False
    return text.count("\ufffd") <= GARBAGE_SHARE * len(text)


def _page_text(pdf: pdfium.PdfDocument, index: int) -> tuple[str, bool]:
    """The page's cleaned text, and whether a text-less page is blank."""
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            text = clean_text(textpage.get_text_bounded())
        finally:
            textpage.close()
        return text, len(text) < MIN_PAGE_CHARS and _is_blank(page)
    finally:
        page.close()


def _render_for_ocr(pdf: pdfium.PdfDocument, index: int, dpi: float) -> tuple[np.ndarray, float]:
    """The page as a grayscale image at ``dpi`` (less past ``MAX_OCR_PIXELS``), and the
    resolution it got."""
    page = pdf[index]
    try:
        width_pt, height_pt = (max(1.0, side) for side in page.get_size())
        scale = min(dpi / 72, math.sqrt(MAX_OCR_PIXELS / (width_pt * height_pt)))
        bitmap = page.render(scale=scale, grayscale=True)
        try:
            return np.array(bitmap.to_numpy(), copy=True), scale * 72
        finally:
            bitmap.close()
    finally:
        page.close()


# A page read with less confidence than this at OCR_DPI (or not at all) is read again at
# SMALL_TEXT_DPI, and the more confident reading kept: print of 3 pt (a form's label, the one
# on pypdf's issue-3850 test page) is 8 px high at 200 dpi, read by tesseract as nothing or
# "ump sealrecord sheet" (0.39), and right at 400 (0.97). Pictures pay for it too, and
# the finer reading is kept only when it is itself that sure.
SMALL_TEXT_DPI = 2 * OCR_DPI
SMALL_TEXT_CONFIDENCE = 0.5


def _better(finer: Reading | None, first: Reading | None) -> bool:
    """The finer reading replaces the first only when it is sure itself: at 400 dpi a
    photograph's texture reads as words too ("ae picnics teinad", confidence 0.18)."""
    if finer is None or finer.confidence < SMALL_TEXT_CONFIDENCE:
        return False
    return first is None or finer.confidence > first.confidence


def _read(
    engine: Engine, pdf: pdfium.PdfDocument, index: int, dpi: float
) -> tuple[Reading | None, float]:
    """Render, read, drop the image: the reading (``None`` for a sliver of a page) and the
    resolution it was read at."""
    image, got = _render_for_ocr(pdf, index, dpi)
    if min(image.shape[:2]) < MIN_OCR_SIDE_PX:
        return None, got
    return read_page(engine, image, got), got


def _reread_finer(
    engine: Engine,
    pdf: pdfium.PdfDocument,
    number: int,
    first: Reading | None,
    started: float,
    options: OcrOptions,
) -> Reading | None:
    """The page read again at SMALL_TEXT_DPI in what is left of its time; the first reading
    stands when the second is not better, fails or runs out of time."""
    left = options.page_timeout_s - (time.monotonic() - started)
    if left < 1:
        return first
    try:
        with time_limit(left):
            finer, _ = _read(engine, pdf, number - 1, SMALL_TEXT_DPI)
    except Exception as exc:  # the first reading is kept whatever went wrong
        log.info("page %d: the finer reading failed (%s); the first is kept", number, exc)
        return first
    return finer if _better(finer, first) else first


def _ocr(
    pdf: pdfium.PdfDocument,
    numbers: list[int],
    parsed: ParsedDocument,
    options: OcrOptions,
    progress: ProgressFn,
) -> None:
    """Read ``numbers`` (pages without a usable text layer) one at a time: render, OCR, drop
    the image, so memory stays that of one page whatever the length of the scan."""
    resolved = resolve(options.engine)
    if resolved is None:
        parsed.ocr_unavailable = unavailable_reason(options.engine)
        parsed.empty_pages.extend(numbers)
        return
    todo = numbers[: options.max_pages] if options.max_pages > 0 else numbers
    parsed.ocr_skipped = numbers[len(todo) :]
    parsed.empty_pages.extend(parsed.ocr_skipped)
    try:
        engine = make_engine(resolved)
    except Exception as exc:  # a broken install: the pages stay reported, the file goes on
        log.warning("OCR engine %s could not start: %s", resolved, exc)
        parsed.ocr_unavailable = f"the OCR engine {resolved} could not start ({exc})"
        parsed.empty_pages.extend(todo)
        return
    parsed.ocr_engine = resolved
    for done, number in enumerate(todo):
        progress(done, len(todo))
        started = time.monotonic()
        limit = Limit()
        try:
            with time_limit(options.page_timeout_s, limit):
                reading, dpi = _read(engine, pdf, number - 1, OCR_DPI)
        except pdfium.PdfiumError:
            parsed.failed_pages.append(number)
            continue
        except Exception as exc:  # the engine choked on this image, or ran out of time
            if timed_out(exc, limit):
                parsed.ocr_timeouts.append(number)
            else:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                log.warning("OCR of page %d failed: %s", number, first)
                parsed.ocr_errors[number] = first
            parsed.empty_pages.append(number)
            continue
        unsure = reading is None or reading.confidence < SMALL_TEXT_CONFIDENCE
        if unsure and dpi >= 0.99 * OCR_DPI:  # not already shrunk to the pixel cap
            reading = _reread_finer(engine, pdf, number, reading, started, options)
        text = clean_text(reading.text) if reading is not None else ""
        if reading is None or not usable_text(text):
            parsed.empty_pages.append(number)
            continue
        parsed.pages.append(Page(number, text, ocr=True))
        parsed.ocr_pages.append(number)
        parsed.ocr_words[number] = list(reading.words)
        if reading.rotation:
            parsed.rotated_pages[number] = reading.rotation
    progress(len(todo), len(todo))


def no_progress(_done: int, _total: int) -> None:
    return None


def extract_pdf(data: bytes) -> ParsedDocument:
    """The text layer, page by page; pages where it is missing or garbage are listed in
    ``ocr_pending``. Running lines are not stripped yet: that needs every page's text."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise _pdf_open_error(exc) from exc
    try:
        count = len(pdf)
        if count == 0:
            raise DocumentError("corrupt: the PDF has no pages")
        parsed = ParsedDocument([], count)
        for index in range(count):
            number = index + 1
            try:
                text, blank = _page_text(pdf, index)
            except pdfium.PdfiumError:
                parsed.failed_pages.append(number)
                continue
            if blank:
                parsed.blank_pages.append(number)
            elif usable_text(text):
                parsed.pages.append(Page(number, text))
            else:
                parsed.ocr_pending.append(number)
        if len(parsed.failed_pages) == count:
            raise DocumentError(f"corrupt: none of the {count} pages could be read")
        parsed.outline = _outline(pdf)
        return parsed
    finally:
        pdf.close()


def _outline(pdf: pdfium.PdfDocument) -> list[tuple[str, int, int]]:
    """The PDF's outline entries; none when it cannot be read (the text is what matters: a
    broken outline costs the answers their sections, not the file its ingest)."""
    try:
        return [(h.title, h.page, h.level) for h in outline_entries(pdf)]
    except (pdfium.PdfiumError, ValueError, RecursionError) as exc:
        log.info("the outline could not be read (%s): sections from the text's headings", exc)
        return []


def read_scans(
    data: bytes,
    filename: str,
    numbers: list[int],
    options: OcrOptions,
    progress: ProgressFn = no_progress,
) -> ParsedDocument:
    """OCR of pages ``numbers`` of the PDF (``filename`` names it in logs): the pages read,
    and what became of the others (empty, timed out, failed), for ``with_scans``."""
    pdf = pdfium.PdfDocument(data)
    try:
        scans = ParsedDocument([], len(pdf))
        _ocr(pdf, numbers, scans, options, progress)
        log.debug("%s: OCR read %d of %d pages", filename, len(scans.ocr_pages), len(numbers))
        return scans
    finally:
        pdf.close()


def with_scans(parsed: ParsedDocument, scans: ParsedDocument | None = None) -> ParsedDocument:
    """The text layer's pages with the OCR's (``None``: no OCR, the pending pages stay
    empty), in page order, running lines stripped."""
    if scans is None:
        parsed.empty_pages.extend(parsed.ocr_pending)
    else:
        parsed.pages.extend(scans.pages)
        parsed.empty_pages.extend(scans.empty_pages)
        parsed.failed_pages = sorted(parsed.failed_pages + scans.failed_pages)
        parsed.ocr_engine, parsed.ocr_unavailable = scans.ocr_engine, scans.ocr_unavailable
        parsed.ocr_pages, parsed.ocr_words = scans.ocr_pages, scans.ocr_words
        parsed.rotated_pages, parsed.ocr_timeouts = scans.rotated_pages, scans.ocr_timeouts
        parsed.ocr_errors, parsed.ocr_skipped = scans.ocr_errors, scans.ocr_skipped
    parsed.ocr_pending = []
    parsed.pages.sort(key=lambda p: p.number)
    parsed.empty_pages.sort()
    parsed.pages = marked_navigation(strip_running_lines(parsed.pages))
    return parsed


def marked_navigation(pages: list[Page]) -> list[Page]:
    """The pages, contents and index pages marked (``navigation_page``), a page that goes on
    from one such page with entries alone marked too."""
    out: list[Page] = []
    for page in pages:
        continued = bool(out) and out[-1].navigation and out[-1].number == page.number - 1
        out.append(
            replace(page, navigation=True) if navigation_page(page.text, continued) else page
        )
    return out


def parse_pdf(
    data: bytes, ocr: OcrOptions | None = None, progress: ProgressFn = no_progress
) -> ParsedDocument:
    """Text layer first, page by page; then, with ``ocr``, OCR of the pages where it is
    missing or garbage (without ``ocr`` they are only reported in ``empty_pages``)."""
    parsed = extract_pdf(data)
    if parsed.ocr_pending and ocr is not None:
        return with_scans(parsed, read_scans(data, "", parsed.ocr_pending, ocr, progress))
    return with_scans(parsed)


def parse_text(data: bytes, filename: str = "") -> ParsedDocument:
    """Plain text, where a form feed starts a new page, or Markdown (``ingest.markdown``: by
    heading and paragraph)."""
    if b"\x00" in data[:8192]:
        raise DocumentError("unreadable: binary content in a text file")
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raw = data.decode("cp1252", errors="replace")
        log.info("text file is not UTF-8; decoded as cp1252")
    if filename.lower().endswith(MARKDOWN_SUFFIXES):
        return markdown.parse(raw)
    parts = raw.split("\f")
    parsed = ParsedDocument([], len(parts))
    for number, part in enumerate(parts, start=1):
        text = clean_text(part)
        if text:
            parsed.pages.append(Page(number, text))
        else:
            parsed.blank_pages.append(number)  # a text file has no scans
    return parsed


def has_pdf_header(head: bytes) -> bool:
    """PDF bytes whatever the file is called: the ``%PDF-`` marker within the first KiB
    (readers accept junk before it)."""
    return b"%PDF-" in head[:1024]


def is_plain_text(data: bytes, filename: str) -> bool:
    """A .txt/.md file that is not PDF bytes under a text name: parsed by ``parse_text``."""
    return filename.lower().endswith(TEXT_SUFFIXES) and not has_pdf_header(data)


def parse_bytes(
    data: bytes,
    filename: str,
    ocr: OcrOptions | None = None,
    progress: ProgressFn = no_progress,
    ocr_later: bool = False,
) -> ParsedDocument:
    """Dispatch on content first (a PDF is a PDF whatever its name), then on the suffix.
    With ``ocr_later`` a PDF's pages to OCR are only listed (``ocr_pending``), for
    ``read_scans`` in another process (the batch goes on meanwhile); such a document is
    finished by ``with_scans``."""
    if not data:
        raise DocumentError("empty: the file has no content")
    if has_pdf_header(data) or filename.lower().endswith(PDF_SUFFIXES):
        if not ocr_later:
            return parse_pdf(data, ocr, progress)
        parsed = extract_pdf(data)
        return parsed if parsed.ocr_pending else with_scans(parsed)
    if is_plain_text(data, filename):
        return parse_text(data, filename)
    return parse_kind(data, filename)


def preview_scale(width_pt: float, height_pt: float, width_px: int) -> float:
    """The scale that renders the page ``width_px`` wide, or smaller where that would exceed
    ``MAX_PREVIEW_PIXELS`` (PDFium rounds each side up, hence the shrinking loop)."""
    width_pt, height_pt = max(1.0, width_pt), max(1.0, height_pt)
    scale = min(width_px / width_pt, math.sqrt(MAX_PREVIEW_PIXELS / (width_pt * height_pt)))
    while math.ceil(width_pt * scale) * math.ceil(height_pt * scale) > MAX_PREVIEW_PIXELS:
        scale *= 0.999
    return scale


def open_stored_pdf(path: Path) -> pdfium.PdfDocument | None:
    """A stored original opened for drawing, or ``None`` when it is not a readable PDF (a text
    note has no page image; the original may be gone)."""
    try:
        with path.open("rb") as fh:
            if not has_pdf_header(fh.read(1024)):
                return None
        return pdfium.PdfDocument(str(path))
    except (OSError, pdfium.PdfiumError):
        return None


def render_page_png(path: Path, page_number: int, width_px: int = 900) -> bytes | None:
    """One page of a stored original as PNG of at most ``MAX_PREVIEW_PIXELS``.

    ``None`` when the file is not a PDF (a text note has no page image) or the page does not
    exist. Untrusted PDFs: call it through ``ingest.isolate.render_pdf_page``, in a child.
    """
    pdf = open_stored_pdf(path)
    if pdf is None:
        return None
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        page = pdf[page_number - 1]
        try:
            width_pt, height_pt = page.get_size()
            bitmap = page.render(scale=preview_scale(width_pt, height_pt, width_px))
            image = bitmap.to_pil()
        finally:
            page.close()
    finally:
        pdf.close()
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


# PIL registers its file formats on first use, by importing them; done here, in the parent, so
# a child forked from a threaded server never waits on an import lock held at the fork.
Image.preinit()
