"""The cited words found again on the PDF page and drawn highlighted.

A chunk's text is the page text after ``ingest.parsing.clean_text`` (NFKC, line-end hyphens
joined, whitespace folded), running headers and footers dropped, and words re-joined by single
spaces across a page break (``ingest.chunking``). So the text is searched in what survives every
one of those steps: letters and digits, case-folded, one per character of the page, each
remembering its character index for PDFium's character boxes. The search walks the passage in
runs of words that must appear in order, each looked for just after the last one found; a run
that is not found whole (a header line the parser cut out of it) is tried word by word, and a
word still missing (one the text layer spells otherwise) is skipped: nearly every chunk is
located, where an exact search of the chunk text in the page text finds barely half
(``python -m bench.highlight_accuracy``; docs/measurements/highlights.md).

A scanned page has no text layer to search: its letters are the OCR engine's words, kept at
ingest with their boxes (``ingest.ocr.OcrWord``), and a found letter is drawn as its word's box.

Everything here opens untrusted PDFs: call it through ``ingest.isolate.highlight_pdf_page``.
"""

from __future__ import annotations

import ctypes
import io
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageChops, ImageDraw

from ingest.ocr import PageWords
from ingest.parsing import open_stored_pdf, preview_scale

# Multiplied into the page, so black text stays black and white paper takes the colour exactly.
HIGHLIGHT_RGB = (255, 214, 0)  # the cited sentence(s)
PASSAGE_RGB = (214, 232, 255)  # the rest of the cited passage
# A passage counts as located when this share of its letters and digits was found in order.
LOCATED_SHARE = 0.9
# A run of words searched as one piece is at least this long (letters and digits): shorter
# pieces ("of the") occur everywhere. The first piece, found without a previous one to follow,
# must be longer still.
RUN_CHARS = 16
ANCHOR_CHARS = 32
# How far past the previous piece the next one may start: a running footer, the next page's
# header, a page number, a figure label between two parts of the passage.
GAP_CHARS = 400
ZOOMS = (1, 2, 3)


@dataclass(frozen=True)
class Located:
    """Where a passage lies in a run of pages: its characters as (page number, char index)."""

    chars: tuple[tuple[int, int], ...]
    share: float  # of the passage's letters and digits found, in order

    @property
    def found(self) -> bool:
        return self.share >= LOCATED_SHARE


@dataclass
class HighlightedPage:
    """A page drawn with its highlights, and what the drawing says (for captions and tests)."""

    png: bytes
    page: int
    located: bool  # the passage was found on its pages
    share: float
    cited_found: bool  # at least one cited sentence was found on this page
    width: int
    height: int
    # Highlight rectangles in image pixels (left, top, right, bottom), cited sentences only.
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)


def fold(text: str) -> tuple[str, list[int]]:
    """Letters and digits of ``text``, NFKC-normalised and case-folded, with the index in
    ``text`` each came from (a ligature "ﬁ" gives two letters of one index)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if c.isalnum():
                out.append(c)
                where.append(i)
    return "".join(out), where


def _words(text: str) -> list[tuple[int, int]]:
    """Each word's (start, end) in the folded text (words without letters or digits left out)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for word in text.split():
        size = len(fold(word)[0])
        if size:
            spans.append((pos, pos + size))
            pos += size
    return spans


def _pieces(words: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Words grouped into runs of at least ``RUN_CHARS`` letters and digits."""
    pieces: list[list[tuple[int, int]]] = [[]]
    for word in words:
        pieces[-1].append(word)
        if word[1] - pieces[-1][0][0] >= RUN_CHARS:
            pieces.append([])
    return [p for p in pieces if p]


def align(passage: str, haystack: str) -> tuple[list[int], int]:
    """Map the folded ``passage`` onto the folded ``haystack``: for each passage letter its
    position in the haystack (-1 where missing), and how many letters were found. A run of
    words that is not found whole (a header line cut into it) is tried word by word."""
    needle, _ = fold(passage)
    mapping = [-1] * len(needle)
    exact = haystack.find(needle) if needle else -1
    if exact >= 0:
        return list(range(exact, exact + len(needle))), len(needle)
    cursor: int | None = None
    found = 0

    def take(start: int, end: int, at: int) -> None:
        nonlocal cursor, found
        for k in range(end - start):
            mapping[start + k] = at + k
        found += end - start
        cursor = at + end - start

    for piece in _pieces(_words(passage)):
        start, end = piece[0][0], piece[-1][1]
        if cursor is None:
            # Nothing to follow yet: the run and what comes after it, long enough to trust.
            at = haystack.find(needle[start : max(end, start + ANCHOR_CHARS)])
            if at >= 0:
                take(start, end, at)
            continue
        at = haystack.find(needle[start:end], cursor, cursor + GAP_CHARS + end - start)
        if at >= 0:
            take(start, end, at)
            continue
        for w_start, w_end in piece:
            limit = cursor + GAP_CHARS + w_end - w_start
            at = haystack.find(needle[w_start:w_end], cursor, limit)
            if at >= 0:
                take(w_start, w_end, at)
    return mapping, found


def _page_chars(textpage: pdfium.PdfTextPage) -> str:
    """The page's characters, one per PDFium character index (a surrogate or a character
    without a code point counts as a blank: it is never a letter of the chunk)."""
    raw = textpage.raw
    chars = []
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(raw, i)
        chars.append(chr(code) if 0 < code < 0xD800 or 0xE000 <= code < 0x110000 else " ")
    return "".join(chars)


def _fold_words(words: Sequence[Sequence[Any]]) -> tuple[str, list[int]]:
    """An OCR page's words folded as ``fold`` folds a text layer, each letter with the index
    of the word it came from."""
    parts: list[str] = []
    where: list[int] = []
    for index, word in enumerate(words):
        folded, _ = fold(str(word[0]))
        parts.append(folded)
        where.extend([index] * len(folded))
    return "".join(parts), where


class PageRun:
    """Pages ``first``..``last`` of an open PDF as one folded string, for the passages that
    span a page break. A page in ``ocr_words`` is searched in its OCR words; its origins
    are word indexes instead of character indexes."""

    def __init__(
        self,
        pdf: pdfium.PdfDocument,
        first: int,
        last: int,
        ocr_words: PageWords | None = None,
    ) -> None:
        self.pdf = pdf
        self.pages = list(range(max(1, first), min(len(pdf), max(first, last)) + 1))
        self.ocr_words = {n: w for n, w in (ocr_words or {}).items() if w and n in self.pages}
        parts: list[str] = []
        self.origin: list[tuple[int, int]] = []  # folded position -> (page, char index)
        self.textpages: dict[int, pdfium.PdfTextPage] = {}
        self._pdf_pages: list[pdfium.PdfPage] = []
        for number in self.pages:
            page = pdf[number - 1]
            self._pdf_pages.append(page)
            textpage = page.get_textpage()
            self.textpages[number] = textpage
            if number in self.ocr_words:
                folded, where = _fold_words(self.ocr_words[number])
            else:
                folded, where = fold(_page_chars(textpage))
            parts.append(folded)
            self.origin.extend((number, i) for i in where)
        self.text = "".join(parts)

    def locate(self, passage: str) -> Located:
        mapping, found = align(passage, self.text)
        total = len(mapping)
        chars = tuple(dict.fromkeys(self.origin[p] for p in mapping if p >= 0))
        return Located(chars, found / total if total else 0.0)

    def close(self) -> None:
        for textpage in self.textpages.values():
            textpage.close()
        for page in self._pdf_pages:
            page.close()


def locate_passage(path: Path, page_start: int, page_end: int, passage: str) -> Located:
    """Where ``passage`` lies on pages ``page_start``..``page_end`` of the PDF at ``path``."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        run = PageRun(pdf, page_start, page_end)
        try:
            return run.locate(passage)
        finally:
            run.close()
    finally:
        pdf.close()


def _line_rects(
    boxes: Iterable[tuple[float, float, float, float]],
) -> list[tuple[float, float, float, float]]:
    """Character boxes (left, bottom, right, top) in reading order merged into one rectangle
    per line: a box that starts a new line (below, or back to the left) starts a new one."""
    rects: list[list[float]] = []
    for left, bottom, right, top in boxes:
        if rects:
            r = rects[-1]
            middle = (bottom + top) / 2
            height = max(r[3] - r[1], top - bottom, 1.0)
            same_line = r[1] - 0.3 * height <= middle <= r[3] + 0.3 * height
            if same_line and left >= r[0] - height and left - r[2] <= 4 * height:
                r[:] = [min(r[0], left), min(r[1], bottom), max(r[2], right), max(r[3], top)]
                continue
        rects.append([left, bottom, right, top])
    return [(r[0], r[1], r[2], r[3]) for r in rects]


def _to_device(
    page: pdfium.PdfPage, size: tuple[int, int], x: float, y: float
) -> tuple[float, float]:
    """A page-space point in the rendered image's pixels (PDFium applies crop box and
    rotation as the render did)."""
    dx, dy = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, size[0], size[1], 0, x, y, dx, dy)
    return float(dx.value), float(dy.value)


def _pixel_rects(
    page: pdfium.PdfPage,
    textpage: pdfium.PdfTextPage,
    chars: Sequence[int],
    size: tuple[int, int],
) -> list[tuple[int, int, int, int]]:
    boxes = [textpage.get_charbox(i) for i in chars]
    rects = []
    for left, bottom, right, top in _line_rects(boxes):
        rects.append((*_to_device(page, size, left, top), *_to_device(page, size, right, bottom)))
    return _padded(rects, size)


def _word_rects(
    words: Sequence[Sequence[Any]], indexes: Sequence[int], size: tuple[int, int]
) -> list[tuple[int, int, int, int]]:
    """OCR words' boxes in the image's pixels, merged per line (``_line_rects`` reads y
    upwards, as PDF space does, hence the signs)."""
    width, height = size
    boxes = [
        (float(w[1]) * width, -float(w[4]) * height, float(w[3]) * width, -float(w[2]) * height)
        for w in (words[i] for i in indexes)
    ]
    return _padded([(a, -d, c, -b) for a, b, c, d in _line_rects(boxes)], size)


def _padded(
    rects: Iterable[tuple[float, float, float, float]], size: tuple[int, int]
) -> list[tuple[int, int, int, int]]:
    """Rectangles given by two opposite corners, in whole pixels, a little larger."""
    out = []
    pad = max(1, round(size[0] / 600))
    for x0, y0, x1, y1 in rects:
        out.append(
            (
                int(min(x0, x1)) - pad,
                int(min(y0, y1)) - pad,
                int(max(x0, x1)) + pad,
                int(max(y0, y1)) + pad,
            )
        )
    return out


def _best_page(located: Sequence[Located], fallback: int) -> int:
    """The page holding most of the cited sentences' characters (of the passage if none)."""
    counts: dict[int, int] = {}
    for loc in located:
        for page, _ in loc.chars:
            counts[page] = counts.get(page, 0) + 1
    return max(counts, key=lambda p: (counts[p], -p)) if counts else fallback


def _bounds(rects: Sequence[tuple[int, int, int, int]]) -> tuple[int, int, int, int] | None:
    if not rects:
        return None
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


def _clip(
    rects: Sequence[tuple[int, int, int, int]], size: tuple[int, int]
) -> list[tuple[int, int, int, int]]:
    """The rectangles' parts inside the image (a zoomed window cuts some off)."""
    out = []
    for left, top, right, bottom in rects:
        box = (max(0, left), max(0, top), min(size[0], right), min(size[1], bottom))
        if box[0] < box[2] and box[1] < box[3]:
            out.append(box)
    return out


def _crop(
    image: Image.Image, zoom: int, focus: tuple[int, int, int, int] | None
) -> tuple[Image.Image, tuple[int, int]]:
    """At zoom > 1 the window of the zoom-1 size around the highlights; the offset moves the
    rectangles with it."""
    if zoom <= 1:
        return image, (0, 0)
    w, h = image.size
    cw, ch = max(1, w // zoom), max(1, h // zoom)
    if focus is None:
        cx, cy = w // 2, h // 2
    else:
        cx, cy = (focus[0] + focus[2]) // 2, (focus[1] + focus[3]) // 2
    left = min(max(0, cx - cw // 2), w - cw)
    top = min(max(0, cy - ch // 2), h - ch)
    return image.crop((left, top, left + cw, top + ch)), (left, top)


def highlight_page(
    path: Path,
    page_start: int,
    page_end: int,
    passage: str,
    cited: Sequence[str] = (),
    page: int | None = None,
    zoom: int = 1,
    ocr_words: PageWords | None = None,
    width_px: int = 900,
) -> HighlightedPage | None:
    """Page ``page`` (by default the one holding the cited sentences) of a passage on pages
    ``page_start``..``page_end``, drawn ``width_px * zoom`` wide and, zoomed, cropped to
    ``width_px`` around the highlights; scanned pages found in ``ocr_words`` (page: the OCR
    engine's words, kept at ingest). ``None`` when the file is not a readable PDF or the page
    does not exist: the caller says so and shows the passage."""
    pdf = open_stored_pdf(path)
    if pdf is None:
        return None
    try:
        page_end = max(page_start, page_end)
        if not 1 <= page_start <= len(pdf):
            return None
        run = PageRun(pdf, page_start, page_end, ocr_words)
        try:
            whole = run.locate(passage)
            sentences = [run.locate(s) for s in cited if s.strip()]
            sentences = [s for s in sentences if s.found]
            if page is None or page not in run.pages:
                page = _best_page(sentences or [whole], page_start)
            return _draw(run, page, whole, sentences, zoom, width_px)
        finally:
            run.close()
    finally:
        pdf.close()


def sentence_page(
    path: Path,
    page_start: int,
    page_end: int,
    sentence: str,
    ocr_words: PageWords | None = None,
) -> int | None:
    """The page of pages ``page_start``..``page_end`` that holds most of ``sentence``, as
    ``highlight_page`` chooses the page it draws for a citation; None when the file is no
    readable PDF or the sentence is not found on those pages."""
    pdf = open_stored_pdf(path)
    if pdf is None:
        return None
    try:
        if not 1 <= page_start <= len(pdf):
            return None
        run = PageRun(pdf, page_start, max(page_start, page_end), ocr_words)
        try:
            found = run.locate(sentence)
            return _best_page([found], page_start) if found.found else None
        finally:
            run.close()
    finally:
        pdf.close()


def _rects(
    run: PageRun, page: pdfium.PdfPage, number: int, found: Sequence[int], size: tuple[int, int]
) -> list[tuple[int, int, int, int]]:
    """The pixel rectangles of what was found on page ``number``: characters of its text
    layer, or words of its OCR."""
    if number in run.ocr_words:
        return _word_rects(run.ocr_words[number], found, size)
    return _pixel_rects(page, run.textpages[number], found, size)


def _draw(
    run: PageRun,
    number: int,
    whole: Located,
    sentences: Sequence[Located],
    zoom: int,
    width_px: int,
) -> HighlightedPage:
    zoom = min(max(ZOOMS), max(1, int(zoom)))
    page = run.pdf[number - 1]
    try:
        width_pt, height_pt = page.get_size()
        bitmap = page.render(scale=preview_scale(width_pt, height_pt, width_px * zoom))
        image = bitmap.to_pil().convert("RGB")
        size = image.size
        cited_chars = [i for loc in sentences for p, i in loc.chars if p == number]
        cited = set(cited_chars)
        rest = [i for p, i in whole.chars if p == number and i not in cited]
        rest_boxes = _rects(run, page, number, rest, size) if whole.found else []
        boxes = _rects(run, page, number, cited_chars, size)
    finally:
        page.close()
    paint = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(paint)
    for rect in rest_boxes:
        draw.rectangle(rect, fill=PASSAGE_RGB)
    for rect in boxes:
        draw.rectangle(rect, fill=HIGHLIGHT_RGB)
    image = ImageChops.multiply(image, paint)
    image, (dx, dy) = _crop(image, zoom, _bounds(boxes or rest_boxes))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return HighlightedPage(
        png=out.getvalue(),
        page=number,
        located=whole.found,
        share=round(whole.share, 3),
        cited_found=bool(cited_chars),
        width=image.size[0],
        height=image.size[1],
        boxes=_clip([(a - dx, b - dy, c - dx, d - dy) for a, b, c, d in boxes], image.size),
    )
