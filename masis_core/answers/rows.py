"""A table's rows as answer candidates for the offline engine.

A table block (a CSV or sheet's rows, a table in a Word file, a web page or a Markdown note)
is chunked with its heading path, its header row and its rows, one per line
(``ingest.chunking``). Rows are not sentences, so the composer had nothing to quote from
them: "What is the interval for replacing the seal?" of a note whose table says
"seal | 2000 h" paused with an empty draft. Here each row becomes one candidate, read with
its header ("Part: seal; Interval: 2000 h"), the document's own words in its own order, and
the passage scorer weighs it against the prose windows like any other.
"""

from __future__ import annotations

import re

from masis_core.state import Evidence
from masis_core.text.tables import CELL, looks_like_header

# A cell bar: an empty cell leaves "a | | b" once the chunk's spaces are folded.
_BAR = re.compile(r"(?<!\S)\|(?!\S)")
# A table block's place ends with its rows ("rows 2–14", "Q3, rows 2–14", "… table 1, row 2").
_ROWS_PLACE = re.compile(r"\brows? \d+(?:–\d+)?$")
# A row of more words is cut to its first cell and the cells the question names.
MAX_ROW_WORDS = 90


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in _BAR.split(line)]


def _table(text: str) -> tuple[str, list[str], list[list[str]]] | None:
    """The lines above the header row, the header's cells, each row's cells. A header needs
    two named columns ("| Note" over a paragraph is an admonition, quoted as prose) and no
    figure: a table whose first row is figures was stored without a header
    (``ingest.kinds.add_table``), so its first line here is a row."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    at = next((i for i, line in enumerate(lines) if CELL in line), None)
    if at is None or at == len(lines) - 1:
        return None
    header = _cells(lines[at])
    if sum(map(bool, header)) < 2 or not looks_like_header(header):
        return None
    return " ".join(lines[:at]), header, [_cells(x) for x in lines[at + 1 :]]


def table_of(ev: Evidence) -> tuple[str, list[str], list[list[str]]] | None:
    """(heading lines, header cells, rows of cells) of a table block's chunk; None for any
    other chunk, for a one-column table (no header to read a cell by) and for a chunk stored
    before chunks kept their line breaks."""
    if ev.get("source", "kb") != "kb" or not _ROWS_PLACE.search(ev.get("place") or ""):
        return None
    return _table(str(ev.get("text") or ""))


def _pieces(header: list[str], cells: list[str]) -> list[str]:
    return [
        f"{name}: {cell}" if name else cell
        for name, cell in zip(header + [""] * len(cells), cells, strict=False)
        if cell
    ]


def row_line(reading: str, text: str) -> str | None:
    """The row of ``text`` (a table block) that ``reading`` ("Part: seal; Interval: 2000 h",
    cut or whole) reads, as its line: what backs the reading and what the source view
    highlights. None when ``text`` is no table or has no such row."""
    table = _table(text)
    if table is None:
        return None
    _, header, rows = table
    said = {piece.strip("… ") for piece in reading.split("; ")}
    return next((CELL.join(cells) for cells in rows if said <= set(_pieces(header, cells))), None)


def read_row(header: list[str], cells: list[str], asked: set[str]) -> str:
    """The row as "Header: cell; Header: cell", empty cells left out. A row too long to read
    as one answer keeps its first cell (what the row is about) and the cells whose header or
    words ``asked`` (the question's lower-cased words) names, "…" marking what was left out."""
    said = _pieces(header, cells)
    if sum(len(s.split()) for s in said) <= MAX_ROW_WORDS:
        return "; ".join(said)

    def named(k: int) -> bool:
        return bool(asked & set(re.findall(r"\w+", said[k].lower())))

    kept = [k for k in range(len(said)) if k == 0 or named(k)]
    out = []
    for before, k in zip([-1, *kept], kept, strict=False):
        out.append(("… " if k > before + 1 else "") + said[k])
    return "; ".join(out) + (" …" if kept[-1] < len(said) - 1 else "")
