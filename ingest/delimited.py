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


def dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:  # one column, or too little to tell: the usual comma
        return csv.excel_tab if sample.count("\t") > sample.count(",") else csv.excel


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
    add_table(blocks, "", rows, above=title)
    return blocks.document()
