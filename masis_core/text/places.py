"""A citation's place in a document without pages, as ingest writes it and answers read it:
"Pumps › Maintenance, paragraphs 1–2" is a heading path, then the paragraphs under its last
heading (``ingest.kinds``). One definition, so that the composer's reading of a section from
its place cannot drift from the way ingest wrote it."""

from __future__ import annotations

import re

PATH_SEPARATOR = " › "  # between the headings of a place
_PARAGRAPHS = re.compile(r"^(.+?), paragraphs? \d")


def heading_path(place: str) -> str | None:
    """The place's heading path ("Pumps › Maintenance"), or None for a place that is not
    paragraphs under headings (a slide, table rows, a PDF's empty place)."""
    m = _PARAGRAPHS.match(place)
    return m.group(1) if m else None
