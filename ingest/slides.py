"""PowerPoint files (.pptx, and .pptm read without its macros) with python-pptx: each slide's
text boxes, tables (rows with their header), charts (title, then a category per row with each
series' value) and speaker notes, cited as "slide n"."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.base import BaseShape

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, cell_text, open_zip, row_text
from ingest.word import without_macros

log = logging.getLogger(__name__)

PLAIN_TYPE = b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
MACRO_TYPE = b"application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"


def _shapes(shapes: Iterable[BaseShape]) -> Iterator[BaseShape]:
    """Every shape, those inside groups too, in the slide's order."""
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)  # type: ignore[attr-defined]
        else:
            yield shape


def chart_lines(chart: Any) -> list[str]:
    """A chart as the table behind it: its title, a header of series names, a row per
    category ('Q3 | 4.3 | 2.4'), as a briefing's figures are asked about."""
    lines = [chart.chart_title.text_frame.text] if chart.has_title else []
    for plot in chart.plots:
        series = list(plot.series)
        if not series:
            continue
        lines.append(row_text(["", *(s.name for s in series)]))
        columns = [list(s.values) for s in series]
        for n, category in enumerate(plot.categories):
            values = (cell_text(col[n]) if n < len(col) else "" for col in columns)
            lines.append(row_text([cell_text(category), *values]))
    return lines


def slide_lines(shapes: Iterable[BaseShape]) -> list[str]:
    lines: list[str] = []
    for shape in _shapes(shapes):
        if getattr(shape, "has_chart", False):
            try:
                lines.extend(chart_lines(shape.chart))  # type: ignore[attr-defined]
            except (NotImplementedError, KeyError, ValueError, IndexError) as exc:
                # A chart type python-pptx cannot read (3-D area): the slide's text still is.
                log.info("a chart was skipped: %s", exc)
        elif getattr(shape, "has_table", False):
            table = shape.table  # type: ignore[attr-defined]
            lines.extend(row_text(c.text for c in row.cells) for row in table.rows)
        elif getattr(shape, "has_text_frame", False):
            text = shape.text_frame.text  # type: ignore[attr-defined]
            lines.extend(line for line in text.splitlines() if line.strip())
    return lines


def parse(data: bytes) -> ParsedDocument:
    archive = open_zip(data, "slides")
    deck = pptx.Presentation(io.BytesIO(without_macros(data, archive, MACRO_TYPE, PLAIN_TYPE)))
    blocks = Blocks()
    count = 0
    for number, slide in enumerate(deck.slides, start=1):
        count = number
        lines = slide_lines(slide.shapes)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                lines.extend(["Notes:", notes.text])
        blocks.add("\n".join(lines), f"slide {number}", number)
    return blocks.document(count)
