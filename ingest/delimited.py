"""CSV and TSV files with the standard library's csv: the encoding detected by
charset-normalizer, the delimiter and quoting sniffed from the first 64 KiB.

The file is a table: blocks of rows, each headed by the header row, cited by the rows'
line numbers in the file ("rows 2–40").
"""

from __future__ import annotations

import csv
import io

from charset_normalizer import from_bytes

from ingest.kinds import Blocks, add_table, cell_text
from ingest.parsing import ParsedDocument
from masis_core.errors import DocumentError

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


# Lines read to tell a table whose fields are apart by spaces from one column of words.
SPACED_LINES = 50


def _spaced(sample: str) -> type[Spaced] | None:
    """Fields apart by spaces when every line read splits into the same number of them (two
    or more), but the first, which may have one fewer (a header over row names)."""
    lines = [line for line in sample.splitlines()[:SPACED_LINES] if line.strip()][:-1]
    spaced = SpacedSingle if sample.count("'") > sample.count('"') else Spaced
    widths = [len(cells) for cells in csv.reader(lines, spaced)]
    same = len(widths) > 2 and widths[1] >= 2 and set(widths[1:]) == {widths[1]}
    return spaced if same and widths[0] in (widths[1], widths[1] - 1) else None


def dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:  # one column, spaces, or too little to tell: the usual comma
        if sample.count("\t") > sample.count(","):
            return csv.excel_tab
        return _spaced(sample) or csv.excel


def _row_names(rows: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """A header one cell shorter than every row is over row names (R's ``write.table``): an
    empty first cell keeps its names over their own columns."""
    if len(rows) > 1 and {len(cells) for _, cells in rows[1:]} == {len(rows[0][1]) + 1}:
        n, first = rows[0]
        return [(n, ["", *first]), *rows[1:]]
    return rows


def parse(data: bytes, title: str = "") -> ParsedDocument:
    """``title``: the file's name as words, heading the table (``kinds.file_title``)."""
    text = decode(data)
    reader = csv.reader(io.StringIO(text, newline=""), dialect(text[:SNIFF_BYTES]))
    csv.field_size_limit(1024 * 1024)
    blocks = Blocks()
    try:
        rows = [(reader.line_num, [cell_text(c) for c in cells]) for cells in reader]
    except csv.Error as exc:
        raise DocumentError(f"corrupt: the CSV file could not be read ({exc})") from exc
    add_table(blocks, "", _row_names(rows), above=title)
    return blocks.document()
