"""Each chunk's place in the document's sections, stored at ingest.

Chunks are windows of about 200 words cut without regard to headings, so a retrieved chunk
rarely carries the heading of the section it lies in, and two chunks of one long section
retrieved apart look like two unrelated texts. The answer composer ranks sections as wholes
(``masis_core.answers.sections``); here every chunk learns, from the document's own structure
(its PDF outline, or its numbered headings where the outline is missing or coarse), which
section it starts in and where in its words any further sections start. Stored as the chunk's
``sections`` metadata: ``[[word, number, title], ...]``, ``word`` counted in the chunk's text
split on whitespace, ``number`` the section's position in the document.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import deque
from dataclasses import replace

from ingest.chunking import Chunk
from ingest.outline import Heading

_NOT_WORD = re.compile(r"[^\w]+")
TITLE_WORDS = 8  # a title is found by its first words: long ones wrap and hyphenate


def _norm(word: str) -> str:
    """A word as compared: NFKC like the page text (``ingest.document.clean_text``), since an
    outline's title may be decomposed ("Re\u0301sume\u0301") or carry ligatures ("ﬁlters")."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", word)).lower()


def _title_words(title: str) -> list[str]:
    return [w for w in map(_norm, title.split()) if w][:TITLE_WORDS]


def _find(words: list[str], title: list[str], start: int) -> int | None:
    """Where ``title`` starts in ``words`` at or after ``start`` (None when it does not)."""
    if not title:
        return None
    k = len(title)
    for i in range(start, len(words) - k + 1):
        if words[i] == title[0] and words[i : i + k] == title:
            return i
    return None


LOOK_AHEAD = 5  # titles tried past one that is not found in the text


def _next_found(
    words: list[str],
    titles: list[list[str]],
    headings: list[Heading],
    pending: list[int],
    at: int,
    last_page: int,
) -> tuple[int | None, int]:
    """Where the first of the next pending titles found in ``words`` starts, and how many
    pending ones before it were not found (an outline entry worded unlike the printed
    heading must not hide the sections after it)."""
    for skip, n in enumerate(pending[:LOOK_AHEAD]):
        if headings[n].page > last_page:
            break
        where = _find(words, titles[n], at)
        if where is not None:
            return where, skip
    return None, 0


def assign_sections(chunks: list[Chunk], headings: list[Heading], overlap: int = 40) -> list[Chunk]:
    """The chunks, each with its ``sections`` (empty before the first heading, on contents
    and index pages, and in documents without headings). A heading whose title is not found
    in the text (extracted differently, or drawn as an image) starts at the first chunk past
    its page, so a missed title costs precision, never the sections after it."""
    if not headings:
        return chunks
    titles = [_title_words(h.title) for h in headings]
    pending = deque(sorted(range(len(headings)), key=lambda i: (headings[i].page, i)))
    current: int | None = None
    before: int | None = None  # the section before ``current``, when found in the last chunk
    out = []
    for c in chunks:
        if c.navigation or c.place:
            out.append(c)
            continue
        words = [_norm(w) for w in c.text.split()]
        while pending and headings[pending[0]].page < c.page_start:
            current, before = pending.popleft(), None
        starts: list[tuple[int, int]] = []
        again = None
        if before is not None and current is not None:  # only where the chunks overlap
            again = _find(words[: overlap + len(titles[current])], titles[current], 1)
            if again is not None:  # the heading sits in the overlap with the chunk before
                starts = [(0, before), (again, current)]
        if current is not None and again is None:
            starts = [(0, current)]
        at, found_here = (again or 0), False
        while pending and headings[pending[0]].page <= c.page_end:
            where, skip = _next_found(words, titles, headings, list(pending), at, c.page_end)
            if where is None:
                break
            if skip:  # titles not found in the text: they start here, at the latest
                missed = [pending.popleft() for _ in range(skip)][-1]
                starts = [s for s in starts if s[0] < at] + [(at, missed)]
                current = missed
            before, current = current, pending.popleft()
            starts = [s for s in starts if s[0] < where] + [(where, current)]
            at, found_here = where + len(titles[current]), True
        if not found_here:
            before = None
        sections = tuple((w, n, headings[n].title) for w, n in starts)
        out.append(replace(c, sections=sections))
    return out


def sections_json(sections: tuple[tuple[int, int, str], ...]) -> str:
    """The chunk's ``sections`` as its metadata keeps them ("" when none)."""
    return json.dumps([list(s) for s in sections], ensure_ascii=False) if sections else ""
