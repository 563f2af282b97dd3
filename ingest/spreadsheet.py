"""Excel workbooks (.xlsx, and .xlsm read without its macros) with openpyxl, read-only and
streaming, cached values only (no formula is evaluated, no macro run).

Each sheet is a table: blocks of rows, each headed by the sheet's header row, cited as the
sheet and its row numbers as Excel shows them ("Revenue, rows 14–27").
"""

from __future__ import annotations

import io

import openpyxl

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, add_table, cell_text, extent_in_rows, open_zip


def parse(data: bytes, title: str = "") -> ParsedDocument:
    """``title``: the file's name as words; with the sheet's name it heads the sheet's rows."""
    open_zip(data, "spreadsheet")
    workbook = openpyxl.load_workbook(
        io.BytesIO(data), read_only=True, data_only=True, keep_vba=False, keep_links=False
    )
    try:
        blocks = Blocks()
        for sheet in workbook.worksheets:
            # The size a sheet declares may be a lie ("A1:XFD1048576" pads every row to
            # 16,384 cells): the rows are read as they are stored.
            if hasattr(sheet, "reset_dimensions"):
                sheet.reset_dimensions()
            rows = (
                (n, [cell_text(v) for v in values])
                for n, values in enumerate(sheet.iter_rows(values_only=True), start=1)
            )
            add_table(blocks, sheet.title, rows, above=f"{title}: {sheet.title}" if title else "")
        parsed = blocks.document()
        sheets = len(workbook.worksheets)
        parsed.extent = (
            f"{sheets} sheet{'s' if sheets != 1 else ''}, {extent_in_rows(blocks.rows())}"
        )
        return parsed
    finally:
        workbook.close()
