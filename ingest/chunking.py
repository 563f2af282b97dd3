"""Page-aware chunking: windows of about N words that remember the pages they came from.

A window also closes at ``MAX_CHUNK_CHARS``, and a token longer than ``MAX_TOKEN_CHARS`` is cut
into pieces first: text without spaces (CJK, a run-together PDF line, a base64 blob) would
otherwise make one multi-megabyte "word" or a window of 200 of them. Ordinary prose (200 words
are about 1,300 characters) never reaches either bound, so it is chunked as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import accumulate, groupby

from ingest.document import Page
from masis_core.answers.rows import ROWS_PLACE
from masis_core.retrieval.quality import length_score

SENTENCE_END = (".", "!", "?", ":", ";")
MAX_CHUNK_CHARS = 4000
MAX_TOKEN_CHARS = 100


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    page_start: int
    page_end: int
    word_count: int
    quality: float
    ocr: bool = False  # some of its words were read by OCR
    place: str = ""  # the page's place label (``Page.place``); empty for a PDF or text
    navigation: bool = False  # from a contents or index page (``Page.navigation``)
    rows: tuple[int, ...] = ()  # a table chunk's row numbers, one per row line (``Page.rows``)
    # Where the document's sections start in its words: (word, section number, title); the
    # first entry is the section it starts in (``ingest.sections``).
    sections: tuple[tuple[int, int, str], ...] = ()


def _line_ends(page: Page) -> frozenset[int]:
    """Positions of the page's tokens (``_tokens``) after which its text breaks a line."""
    ends, n = set(), 0
    for line in page.text.split("\n"):
        n += sum(-(-len(word) // MAX_TOKEN_CHARS) for word in line.split())
        if n:
            ends.add(n - 1)
    return frozenset(ends)


def _tokens(pages: list[Page]) -> list[tuple[str, int]]:
    """The document's words with their page, over-long ones cut into ``MAX_TOKEN_CHARS``."""
    return [
        (word[i : i + MAX_TOKEN_CHARS], page.number)
        for page in pages
        for word in page.text.split()
        for i in range(0, len(word), MAX_TOKEN_CHARS)
    ]


class _Lengths:
    """Characters of a run of words joined by single spaces, in constant time."""

    def __init__(self, words: list[tuple[str, int]]) -> None:
        self._ends = [0, *accumulate(len(w) + 1 for w, _ in words)]

    def chars(self, start: int, end: int) -> int:
        return self._ends[end] - self._ends[start] - 1

    def last_fitting(self, start: int, limit: int, budget: int) -> int:
        """The largest end ≤ ``limit`` whose run from ``start`` has at most ``budget``
        characters (at least one word, whatever its length)."""
        lo, hi = start + 1, limit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.chars(start, mid) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return lo


def _cut(words: list[tuple[str, int]], lengths: _Lengths, start: int, size: int) -> int:
    """End of the window: the last sentence end in its final quarter, else a hard cut."""
    hard = lengths.last_fitting(start, min(start + size, len(words)), MAX_CHUNK_CHARS)
    if hard == len(words):
        return hard
    floor = start + ((hard - start) * 3) // 4
    for end in range(hard, floor, -1):
        if words[end - 1][0].endswith(SENTENCE_END):
            return end
    return hard


def chunk_pages(pages: list[Page], size: int = 200, overlap: int = 40) -> list[Chunk]:
    """Slide over the document's words; a short tail joins the previous chunk.

    Pages with a place label (a Word section's paragraphs, a slide, a block of table rows
    with its header) are each chunked alone, so a chunk never mixes two places and a table's
    chunk always carries its header; a PDF's pages run on into each other as before.

    A placed page's chunks keep its line breaks (blank lines folded), and a block of table
    rows is chunked by whole rows, each chunk its head (heading path, header row), a blank
    line, then rows: the offline engine quotes a row read with its header (``answers.rows``),
    which a word window cut mid-row, or a chunk without the header, would misread. Words are
    embedded joined by spaces (``flat``), so retrieval reads what it read before."""
    if any(p.place for p in pages):
        chunks: list[Chunk] = []
        for page in pages:
            made = _rows(page, size) if page.head is not None else []
            made = made or _slide([page], size, overlap, _line_ends(page))
            for c in made:
                chunks.append(replace(c, index=len(chunks), place=rows_place(page.place, c.rows)))
        return chunks
    if not any(p.navigation for p in pages):
        return _slide(pages, size, overlap)
    # Contents and index pages are chunked apart from the text around them: a chunk is all
    # navigation or none, and only the navigation ones are kept out of evidence.
    out: list[Chunk] = []
    for navigation, run in groupby(pages, key=lambda p: p.navigation):
        for c in _slide(list(run), size, overlap):
            out.append(replace(c, index=len(out), navigation=navigation))
    return out


def _rows(page: Page, size: int) -> list[Chunk]:
    """A table block as chunks of whole rows under its head; none (the block is then cut as
    text) when it has no head or a row does not fit in a chunk with it.

    A row of a wide table (a statistics office's 58 columns of years) may stand alone with
    its head when its words fit, its cell bars not counted: cut as text, it lost its header
    and "… in 1970?" had no row to answer it."""
    lines = page.text.split("\n")
    head, rows = "\n".join(lines[: page.head]), lines[page.head or 0 :]

    def fits(group: list[str], bars: bool = True) -> bool:
        text = head + "\n\n" + "\n".join(group)
        words = [w for w in text.split() if bars or w != "|"]
        return len(words) <= size and len(text) <= MAX_CHUNK_CHARS

    groups: list[list[str]] = []
    for row in rows:
        if groups and fits([*groups[-1], row]):
            groups[-1].append(row)
        elif fits([row]) or fits([row], bars=False):
            groups.append([row])
        else:
            return []
    if not head or not groups:
        return []
    numbers = list(page.rows or ())
    out = []
    for group in groups:
        text = head + "\n\n" + "\n".join(group)
        ours, numbers = tuple(numbers[: len(group)]), numbers[len(group) :]
        out.append(
            Chunk(
                index=0,
                text=text,
                page_start=page.number,
                page_end=page.number,
                word_count=len(text.split()),
                quality=round(length_score(len(text.split())), 4),
                ocr=page.ocr,
                rows=ours if page.rows else (),
            )
        )
    return out


def rows_place(place: str, rows: tuple[int, ...]) -> str:
    """A block's place narrowed to its chunk's rows: "Sheet1, rows 2–40" cut in three chunks
    is cited "Sheet1, rows 2–14" for the first, not the whole block."""
    if not rows or not ROWS_PLACE.search(place):
        return place
    first, last = rows[0], rows[-1]
    return ROWS_PLACE.sub(f"row {first}" if first == last else f"rows {first}–{last}", place)


def flat(text: str) -> str:
    """A chunk's words joined by single spaces: what is embedded."""
    return " ".join(text.split())


def _slide(
    pages: list[Page], size: int, overlap: int, line_ends: frozenset[int] = frozenset()
) -> list[Chunk]:
    if overlap >= size:
        raise ValueError("overlap must be smaller than the chunk size")
    words = _tokens(pages)
    ocr_pages = {p.number for p in pages if p.ocr}
    lengths = _Lengths(words)
    chunks: list[Chunk] = []
    start = 0
    while start < len(words):
        end = _cut(words, lengths, start, size)
        # Fold a tail shorter than a quarter window into this chunk rather than emit a stub.
        if len(words) - end < size // 4 and lengths.chars(start, len(words)) <= MAX_CHUNK_CHARS:
            end = len(words)
        window = words[start:end]
        chunks.append(
            Chunk(
                index=len(chunks),
                text="".join(
                    w + ("\n" if start + i in line_ends else " ") for i, (w, _) in enumerate(window)
                )[:-1],
                page_start=window[0][1],
                page_end=window[-1][1],
                word_count=len(window),
                quality=round(length_score(len(window)), 4),
                ocr=bool(ocr_pages) and any(n in ocr_pages for _, n in window),
            )
        )
        if end >= len(words):
            break
        full = min(start + size, len(words))
        if lengths.chars(start, full) > MAX_CHUNK_CHARS:
            # A window cut short by characters shares its proportion of the overlap: 40 of
            # 200 words, not 40 of its 39 pieces (which would advance one piece per chunk).
            start = end - (end - start) * overlap // size
        else:
            start = max(end - overlap, start + 1)
    return chunks
