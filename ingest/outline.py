"""A PDF's own structure as (heading, page) pairs: its outline, or headings found in its text.

Run in a child process (``ingest.isolate.ChildCall``) like every other read of an untrusted
PDF. The outline (bookmarks) is the author's own map of the document: each entry names a topic
and the page it starts on. Where a PDF has no outline, numbered section headings ("3.2 Relief
valve") in the page text stand in for it; pages with many of them are tables of contents and
are skipped, since the heading's page there is not where its topic is.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

# pypdfium2 warns once per outline subtree deeper than MAX_DEPTH: expected here, not news.
logging.getLogger("pypdfium2._helpers.document").setLevel(logging.ERROR)
MAX_DEPTH = 3  # chapters, sections, subsections: deeper entries are often single commands
# A heading line: a section number, then a title of 1-12 words without a closing full stop.
_NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}|[A-Z](?:\.\d{1,2}){1,3})\.?\s+(\S.{1,90})$")
_SECTION_NUMBER = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,4}|[A-Z](?:\.\d{1,2}){1,4})\.?\s+")
_LEADERS = re.compile(r"(?:\.\s?){3,}|\s\d{1,4}$")  # "Title ....... 12" or "Title 12"
MAX_HEADINGS_PER_PAGE = 5  # more: a table of contents, an index or a numbered list
# An outline with fewer entries than one per this many pages is coarse: a 90-page manual with
# four chapter entries says little about where a topic starts (issue 51).
COARSE_PAGES = 8


@dataclass(frozen=True)
class Heading:
    title: str
    page: int  # 1-based
    level: int


def clean_title(title: str) -> str:
    """The topic without its section number: "3 Installing R under Windows" -> "Installing R
    under Windows"."""
    title = " ".join(title.replace("\x00", " ").split())
    return _SECTION_NUMBER.sub("", title).strip()


def read_outline(path: Path) -> list[Heading]:
    """Outline entries with a page (entries pointing nowhere are skipped), in outline order."""
    pdf = pdfium.PdfDocument(path)
    try:
        return outline_entries(pdf)
    finally:
        pdf.close()


def outline_entries(pdf: pdfium.PdfDocument) -> list[Heading]:
    """``read_outline`` of an open document (the parser's, at ingest)."""
    pages = len(pdf)
    out = []
    for item in pdf.get_toc(max_depth=MAX_DEPTH):
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        title = clean_title(item.get_title() or "")
        if index is None or not (0 <= index < pages) or not title:
            continue
        out.append(Heading(title, index + 1, item.level))
    return out


def _heading_line(line: str) -> str | None:
    line = " ".join(line.split())
    match = _NUMBERED.match(line)
    if match is None or _LEADERS.search(line):
        return None
    title = match.group(1).strip()
    words = title.split()
    if title.endswith((".", ",", ";", ":")) or len(words) > 12 or not title[0].isupper():
        return None
    if sum(w[0].isalpha() for w in words) < max(1, len(words) // 2):
        return None  # a table row or a list of figures
    return title


def detect_headings(path: Path) -> list[Heading]:
    """Numbered section headings found in the text, on pages that are not contents pages."""
    pdf = pdfium.PdfDocument(path)
    try:
        found: list[Heading] = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_bounded()
            finally:
                textpage.close()
                page.close()
            found.extend(headings_on(text, index + 1))
        return found
    finally:
        pdf.close()


def headings_on(text: str, page: int) -> list[Heading]:
    """A page's numbered heading lines; none on a page with more (a contents page, an index
    or a numbered list). FAQ questions alone on their line were tried as headings too: on the
    development FAQs they cut the text worse than the composer's own reading of entries
    (docs/measurements/passages.md), so a FAQ without an outline or numbered
    headings keeps the composer's sections."""
    titles = [t for t in map(_heading_line, text.splitlines()) if t]
    if 0 < len(titles) <= MAX_HEADINGS_PER_PAGE:
        return [Heading(t, page, 0) for t in titles]
    return []


def sections_of(
    outline: list[Heading], pages: list[tuple[int, str]], page_count: int
) -> list[Heading]:
    """The headings a document's text is cut into sections by: its outline, or, where the
    outline is missing or coarse (fewer than one entry per ``COARSE_PAGES`` pages) and the
    text's numbered headings are finer, those. ``pages``: (number, text) of the pages that
    are not contents or index pages."""
    if len(outline) * COARSE_PAGES >= page_count:
        return outline
    found = [h for number, text in pages for h in headings_on(text, number)]
    return found if len(found) > len(outline) else outline


def document_structure(path: Path) -> tuple[str, list[Heading]]:
    """("outline", entries) when the PDF has an outline, else ("headings", detected ones)."""
    outline = read_outline(path)
    if outline:
        return "outline", outline
    return "headings", detect_headings(path)
