"""CSV and TSV files with the standard library's csv: the encoding detected by
charset-normalizer, the delimiter and quoting sniffed from the first 64 KiB.

The file is a table: blocks of rows, each headed by the header row, cited by the rows'
line numbers in the file ("rows 2–40").
"""

from __future__ import annotations

import csv
import io
import re
from itertools import pairwise

from charset_normalizer import from_bytes

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, add_table, cell_text, extent_in_rows
from masis_core.errors import DocumentError
from masis_core.text.tables import numeric

SNIFF_BYTES = 64 * 1024
DELIMITERS = ",;\t|"


def decode(data: bytes) -> str:
    if b"\x00" in data[:SNIFF_BYTES] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError("unreadable: binary content in a CSV file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        best = from_bytes(data[: 4 * SNIFF_BYTES]).best()
        encoding = best.encoding if best is not None else "cp1252"
        return data.decode(encoding, errors="replace")


class Spaced(csv.excel):
    """Fields apart by spaces, as R's ``write.table`` writes them ("Aberdeen_City" 1142 136)."""

    delimiter = " "
    skipinitialspace = True


class SpacedSingle(Spaced):
    """The same, strings in single quotes ('OBS' 'GPA')."""

    quotechar = "'"


# A first line of quoted names only, for each quote character.
_QUOTED = (
    (Spaced, r'\s*(?:"[^"\n]*"\s*)+'),
    (SpacedSingle, r"\s*(?:'[^'\n]*'\s*)+"),
)
# Lines read to tell a table whose fields are apart by spaces from one column of words.
SPACED_LINES = 50
# Values a numeric table apart by spaces may hold besides numbers (R's missing value).
MISSING = frozenset({"NA", "NaN", "."})


def _spaced(sample: str) -> type[Spaced] | None:
    """Fields apart by spaces, when the lines read split into the same number of them, the
    first perhaps one fewer (a header over row names), and the file says it is a table: its
    first line all quoted names (R's ``write.table``), or three or more columns of numbers
    under it. A review found that a bare count of words split one column of names ("Ann
    Lee") or of numbers written "1 000" in two."""
    lines = [line for line in sample.splitlines()[:SPACED_LINES] if line.strip()][:-1]
    if len(lines) < 3:
        return None
    spaced = next((d for d, names in _QUOTED if re.fullmatch(names, lines[0])), None)
    rows = list(csv.reader(lines, spaced or Spaced))
    width = len(rows[1])
    if width < 2 or {len(r) for r in rows[1:]} != {width} or len(rows[0]) not in (width, width - 1):
        return None
    if spaced is not None:
        return spaced
    numbers = width >= 3 and all(numeric(c) or c in MISSING for row in rows[1:] for c in row)
    return Spaced if numbers else None


def dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:  # one column, spaces, or too little to tell: the usual comma
        if sample.count("\t") > sample.count(","):
            return csv.excel_tab
        return _spaced(sample) or csv.excel


def _row_names(rows: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """A header one cell shorter than every row is over row names (R's ``write.table``): an
    empty first cell keeps its names over their own columns. Blank lines aside."""
    filled = [(n, cells) for n, cells in rows if any(cells)]
    if len(filled) > 1 and {len(cells) for _, cells in filled[1:]} == {len(filled[0][1]) + 1}:
        n, first = filled[0]
        return [(n, ["", *first]), *filled[1:]]
    return rows


def _read(text: str, how: type[csv.Dialect] | csv.Dialect) -> list[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), how)
    return [(reader.line_num, [cell_text(c) for c in cells]) for cells in reader]


def rows_of(text: str) -> list[tuple[int, list[str]]]:
    """The file's numbered rows. Read apart by spaces, rows that then differ in width or span
    lines (a stray quote past the lines sniffed joins rows, found by a review) send the file
    back to one column, as before spaces were tried."""
    how = dialect(text[:SNIFF_BYTES])
    csv.field_size_limit(1024 * 1024)
    if isinstance(how, type) and issubclass(how, Spaced):
        try:
            rows = _read(text, how)
        except csv.Error:
            rows = []
        widths = {len(cells) for _, cells in rows[1:] if any(cells)}
        one_line = all(b - a == 1 for (a, _), (b, _) in pairwise(rows))
        if rows and len(widths) == 1 and one_line:
            return _row_names(rows)
        how = csv.excel
    try:
        return _read(text, how)
    except csv.Error as exc:
        raise DocumentError(f"corrupt: the CSV file could not be read ({exc})") from exc


def parse(data: bytes, title: str = "") -> ParsedDocument:
    """``title``: the file's name as words, heading the table (``kinds.file_title``)."""
    blocks = Blocks()
    add_table(blocks, "", rows_of(decode(data)), above=title)
    parsed = blocks.document()
    parsed.extent = extent_in_rows(blocks.rows())
    return parsed
