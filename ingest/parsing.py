"""Turn file bytes into cleaned per-page text (PDF via pypdfium2, plain text and Markdown)."""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from masis_core.errors import DocumentError

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = PDF_SUFFIXES + TEXT_SUFFIXES

# A page with fewer visible characters than this has no usable text layer (scanned image,
# blank page, figure only).
MIN_PAGE_CHARS = 1

_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*([a-z])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_BLANK_LINES = re.compile(r"\n\s*\n\s*\n+")


@dataclass(frozen=True)
class Page:
    number: int  # 1-based, as printed in citations
    text: str


@dataclass
class ParsedDocument:
    pages: list[Page]
    page_count: int
    empty_pages: list[int] = field(default_factory=list)
    failed_pages: list[int] = field(default_factory=list)


def clean_text(raw: str) -> str:
    """Undo line-end hyphenation, drop control characters, normalise whitespace."""
    text = unicodedata.normalize("NFKC", raw.replace("\r\n", "\n").replace("\r", "\n"))
    # PDFium marks a hyphen it saw at a line end as \x02 (and sometimes U+FFFE).
    text = re.sub(r"[\x02\ufffe]\s*\n?\s*", "", text)
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    text = _CONTROL.sub(" ", text)
    text = _SPACES.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


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
            out.append(Page(page.number, text))
    return out


def parse_pdf(data: bytes) -> ParsedDocument:
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise _pdf_open_error(exc) from exc
    try:
        count = len(pdf)
        if count == 0:
            raise DocumentError("corrupt: the PDF has no pages")
        pages: list[Page] = []
        empty: list[int] = []
        failed: list[int] = []
        for index in range(count):
            number = index + 1
            try:
                page = pdf[index]
                try:
                    textpage = page.get_textpage()
                    try:
                        raw = textpage.get_text_bounded()
                    finally:
                        textpage.close()
                finally:
                    page.close()
            except pdfium.PdfiumError:
                failed.append(number)
                continue
            text = clean_text(raw)
            if len(text) < MIN_PAGE_CHARS:
                empty.append(number)
                continue
            pages.append(Page(number, text))
        if len(failed) == count:
            raise DocumentError(f"corrupt: none of the {count} pages could be read")
        return ParsedDocument(strip_running_lines(pages), count, empty, failed)
    finally:
        pdf.close()


def parse_text(data: bytes) -> ParsedDocument:
    """Plain text or Markdown; a form feed starts a new page."""
    if b"\x00" in data[:8192]:
        raise DocumentError("unreadable: binary content in a text file")
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raw = data.decode("cp1252", errors="replace")
        log.info("text file is not UTF-8; decoded as cp1252")
    parts = raw.split("\f")
    pages = []
    empty = []
    for number, part in enumerate(parts, start=1):
        text = clean_text(part)
        if text:
            pages.append(Page(number, text))
        else:
            empty.append(number)
    return ParsedDocument(pages, len(parts), empty)


def parse_bytes(data: bytes, filename: str) -> ParsedDocument:
    """Dispatch on content first (a PDF is a PDF whatever its name), then on the suffix."""
    if not data:
        raise DocumentError("empty: the file has no content")
    lower = filename.lower()
    if b"%PDF-" in data[:1024] or lower.endswith(PDF_SUFFIXES):
        return parse_pdf(data)
    if lower.endswith(TEXT_SUFFIXES):
        return parse_text(data)
    raise DocumentError(f"unsupported: '{filename}' is not a PDF, .txt or .md file")


def render_pdf_page(path: Path, page_number: int, width_px: int = 900) -> bytes | None:
    """One page of a stored original as PNG, for the citation preview.

    ``None`` when the file is not a PDF (a text note has no page image) or the page does not
    exist; a preview must never break the answer it illustrates.
    """
    try:
        with path.open("rb") as fh:
            if b"%PDF-" not in fh.read(1024):
                return None
        pdf = pdfium.PdfDocument(str(path))
    except (OSError, pdfium.PdfiumError):
        return None
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        page = pdf[page_number - 1]
        try:
            scale = width_px / max(1.0, page.get_width())
            image = page.render(scale=scale).to_pil()
        finally:
            page.close()
    finally:
        pdf.close()
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
