"""How a table row is written as text: shared by the parsers that write rows (``ingest.kinds``)
and the offline engine that reads them back (``masis_core.answers.rows``)."""

from __future__ import annotations

from collections.abc import Sequence

CELL = " | "  # between a row's cells, on one line


def _numeric(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True


def looks_like_header(cells: Sequence[str]) -> bool:
    """A first row of column names: every filled cell is words, not a number, and at least
    one is filled (a first row of figures is data, and the table has no header)."""
    filled = [c for c in cells if c]
    return bool(filled) and not any(_numeric(c) for c in filled)
