"""How a table row is written as text: shared by the parsers that write rows (``ingest.kinds``)
and the offline engine that reads them back (``masis_core.answers.rows``)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from masis_core.text.figures import HEADER_YEARS, numeric

CELL = " | "  # between a row's cells, on one line


def _years(numbers: list[str]) -> bool:
    """Column names that are years: two or more, all whole, in order either way, gaps
    allowed ("2019 | 2020", "2023 | 2018 | 2010"). A review found that any two whole numbers
    in order ("Oslo | 12 | 15") took a header-less table's first row for its header."""
    try:
        values = [int(n) for n in numbers]
    except ValueError:
        return False
    steps = {b > a for a, b in pairwise(values)}
    return len(values) >= 2 and all(v in HEADER_YEARS for v in values) and len(steps) == 1


def looks_like_header(cells: Sequence[str]) -> bool:
    """A first row of column names: its filled cells are words, or words then a run of years
    (a statistics office's wide table: "Country | Code | 1960 | 1961 | …"), never figures
    alone (a first row of figures is data, and the table has no header)."""
    filled = [c for c in cells if c]
    numbers = [c for c in filled if numeric(c)]
    return len(numbers) < len(filled) and (not numbers or _years(numbers))
