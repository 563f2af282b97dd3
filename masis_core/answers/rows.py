"""A table's rows as answer candidates for the offline engine.

A table block (a CSV or sheet's rows, a table in a Word file, a web page or a Markdown note)
is chunked by whole rows under its head (``ingest.chunking``): the heading path and header row,
a blank line, then one row per line. Rows are not sentences, so the composer had nothing to
quote from them: "What is the replacement interval of the seal?" of a note whose table says
"seal | 2000 h" paused with an empty draft. Here each row becomes one candidate, read with its
header ("Part: seal; Interval: 2000 h"), the document's own words in its own order, and the
passage scorer weighs it against the prose windows like any other.

A row is read by its header only when the two agree: a two-column "header" that opens with
a figure is a first row of data ("Weight | 12 kg"), and a row with more cells than the
header (a "|" inside a cell, a spanned cell) is quoted as its line, unlabelled.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from masis_core.state import Evidence
from masis_core.text.figures import CELL_FIGURE
from masis_core.text.sentences import content_stems, defang
from masis_core.text.tables import CELL, looks_like_header
from masis_core.text.words import WORD

# A cell bar: an empty cell leaves "a | | b" once the chunk's spaces are folded.
_BAR = re.compile(r"(?<!\S)\|(?!\S)")
# A table block's place ends with its rows ("rows 2–14", "Q3, rows 2–14", "… table 1, row 2").
ROWS_PLACE = re.compile(r"\brows? \d+(?:–\d+)?$")
# Decimals this long are a fixed format's ("%.6f"), their trailing zeros padding.
_PADDED = 4
# A row of more words is cut to its first cell and the cells the question names.
MAX_ROW_WORDS = 90


@dataclass(frozen=True)
class Table:
    heading: str  # the heading path above the table ("" when none)
    header: list[str]  # the header's cells; empty when the rows are read unlabelled
    rows: list[str]  # one line per row


def cells_of(line: str) -> list[str]:
    """A row line's cells ("a | | b": "a", "", "b")."""
    return [cell.strip() for cell in _BAR.split(line)]


_cells = cells_of


def parse(text: str) -> Table | None:
    """A table chunk as ingest writes it: its head, a blank line, its rows. None for any other
    text, and for a chunk stored before table chunks had that shape (one line of words)."""
    head, blank, body = text.partition("\n\n")
    rows = [line.strip() for line in body.split("\n") if line.strip()]
    if not blank or not rows:
        return None
    lines = [line.strip() for line in head.split("\n") if line.strip()]
    header = _cells(lines[-1]) if lines and CELL in lines[-1] else []
    named = sum(map(bool, header)) >= 2 and looks_like_header(header)
    if named and len(header) == 2 and any(cell[:1].isdigit() for cell in header):
        named = False  # "Weight | 12 kg": a key-value table without a header
    heading = " ".join(lines[:-1] if header else lines)
    if not named:
        rows = rows if not header else [lines[-1], *rows]
        # One column ("| Note" over a paragraph is an admonition): prose, quoted as such.
        return Table(heading, [], rows) if any(CELL in r for r in rows) else None
    return Table(heading, header, [r for r in rows if _cells(r) != header])


def table_of(ev: Evidence) -> Table | None:
    """The table of a retrieved chunk of a table block (a document's, never the web's)."""
    if ev.get("source", "kb") != "kb" or not ROWS_PLACE.search(ev.get("place") or ""):
        return None
    return parse(str(ev.get("text") or ""))


def _figures(text: str) -> set[str]:
    """The figures of ``text``, and a version's leading parts ("3.11.4": "3", "3.11"); a
    fixed-format decimal's padding dropped ("54.400000" is the "54.4" asked; "3.10" stays
    itself, a version is no "3.1")."""
    out: set[str] = set()
    for n in CELL_FIGURE.findall(text.replace(",", "")):
        parts = n.split(".")
        out.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
        if len(parts) == 2 and len(parts[1]) >= _PADDED and parts[1].endswith("00"):
            out.add(f"{parts[0]}.{parts[1].rstrip('0')}".rstrip("."))
    return out


def _names(question: str) -> set[str]:
    """Content stems of the question's capitalised words after its first ("Texas",
    "Stirling", "Rules"): what names a row, beside a figure. Composed first, as ingest stores
    rows: a pasted "Zu\u0308rich" had split into "Zu" and "rich" and named nothing."""
    said = re.findall(WORD, unicodedata.normalize("NFKC", question))[1:]
    named = (re.sub(r"['’]s$", "", w) for w in said if w[:1].isupper())
    return content_stems(" ".join(named))


def keyed(ev: Evidence, question: str) -> bool:
    """A table chunk one of whose rows holds what the question names it by: every figure the
    question gives outside the table's head, and at least one such figure or name. Kept as
    evidence like a keyword hit: "What is the violent crime rate in Texas?" of a file whose
    rows hold "Texas" ranked first but was dropped, its words too few of the question's
    (the dataset's description) to pass the keyword bar."""
    table = table_of(ev)
    if table is None:
        return False
    rows = asked_rows(table, question)
    if _figures(question) - _figures(_head(table)):
        return bool(rows)  # every row left holds the figures asked
    names = _names(question) - content_stems(_head(table))
    return any(names & content_stems(row) for row in rows)


def asked_rows(table: Table, question: str) -> list[str]:
    """The rows that may be the one asked about: those holding every figure the question gives
    (its head aside: a year in the header, "Pump P-12" above the table). "What was the sunspot
    activity in 1750?" had led with the row of 1778 at 78%. A figure that is no key ("over
    1000 h", "COVID-19") leaves no row, and the run pauses rather than guess: letting every
    row compete when none held it answered held-out questions with another row, over the
    review bar (docs/measurements/tables.md)."""
    asked = _figures(question) - _figures(_head(table))
    return [row for row in table.rows if asked <= _figures(row)]


def _head(table: Table) -> str:
    """What holds for every row of the table: its heading path and its header."""
    return " ".join([table.heading, *table.header])


def asked_of(question: str) -> set[str]:
    """What a long row keeps its cells for: the question's content stems and its figures (a
    column named "1970" is asked by "… in 1970?")."""
    return content_stems(question) | _figures(question)


def _filled(header: list[str], cells: list[str]) -> list[tuple[str, str]]:
    """The row's (column name, cell) pairs, empty cells left out."""
    return [(name, cell) for name, cell in zip(header, cells, strict=False) if cell]


def _pieces(header: list[str], cells: list[str]) -> list[str]:
    return [f"{name}: {cell}" if name else cell for name, cell in _filled(header, cells)]


def reading(table: Table, line: str, asked: set[str]) -> str | None:
    """The row as the answer quotes it (``read_row``), citation-like markers in it defanged."""
    said = read_row(table, line, asked)
    return defang(said) if said else None


def read_row(table: Table, line: str, asked: set[str]) -> str | None:
    """The row as "Header: cell; Header: cell" (empty cells left out), or its line when it
    cannot be read by the header. A labelled row too long to read as one answer keeps its
    first cell (what the row is about), the cells whose column names what is asked
    (``asked_of``) unless another column names more of it ("March 2021" keeps that month, not
    every March and every month of 2021; "price in EUR and weight" keeps both columns, not
    the price in USD), and those whose words are asked, "…" marking the cells left out; an
    unlabelled one that long is left out."""
    cells = _cells(line)
    if not table.header or len(cells) > len(table.header):
        return line if len(line.split()) <= MAX_ROW_WORDS else None
    said = _pieces(table.header, cells)
    if not said or sum(len(s.split()) for s in said) <= MAX_ROW_WORDS:
        return "; ".join(said) or None
    pairs = _filled(table.header, cells)
    named = [asked & (content_stems(name) | _figures(name)) for name, _ in pairs]
    kept = [
        k
        for k, (_, cell) in enumerate(pairs)
        if k == 0
        or (named[k] and not any(named[k] < other for other in named))
        or asked & content_stems(cell)
    ]
    out = [
        ("… " if k > before + 1 else "") + said[k]
        for before, k in zip([-1, *kept], kept, strict=False)
    ]
    return "; ".join(out) + (" …" if kept[-1] < len(said) - 1 else "")


def row_line(said: str, text: str) -> str | None:
    """The row of ``text`` (a table chunk) that ``said`` (a row's reading, as the answer
    quotes it) reads, as its line: what backs the reading and what the source view
    highlights. None when ``text`` is no table chunk or has no such row."""
    table = parse(text)
    if table is None:
        return None
    said = " ".join(said.split())
    cut = {p.strip("… ") for p in said.split("; ")} if "…" in said else None
    for line in table.rows:
        if reading(table, line, set()) == said:
            return line
        pieces = {defang(p) for p in _pieces(table.header, _cells(line))}
        if cut and table.header and cut <= pieces:
            return line
    return None
