"""Word documents (.docx, and .docm read without its macros) with python-docx.

A citation points at the heading path and the paragraph within its section ("3 Methods ›
3.2 Sampling, paragraph 4"); a table is cut into blocks of rows, each with the table's first
row as its header ("3 Methods, table 1, rows 2–9"); footnotes come last, by their numbers
("footnotes, footnote 3").
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, Sections, open_zip, row_text
from masis_core.errors import DocumentError

# A macro-enabled document differs from a plain one only in its main part's content type
# (and a vbaProject.bin nothing here reads); python-docx refuses the type, so it is renamed.
MACRO_TYPE = b"application/vnd.ms-word.document.macroEnabled.main+xml"
PLAIN_TYPE = b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
_HEADING = re.compile(r"^(?:heading\s*(\d)|title)$", re.I)


def without_macros(data: bytes, archive: zipfile.ZipFile, macro: bytes, plain: bytes) -> bytes:
    """The package with its macro-enabled content type renamed to the plain one; the macros
    stay inert bytes (no library here runs or even parses them)."""
    types = archive.read("[Content_Types].xml")
    if macro not in types:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for member in archive.infolist():
            body = archive.read(member)
            if member.filename == "[Content_Types].xml":
                body = body.replace(macro, plain)
            copy.writestr(member, body)
    return out.getvalue()


def heading_level(paragraph: Paragraph) -> int | None:
    """1-9 for a 'Heading N' paragraph, 0 for the title, ``None`` for body text."""
    try:
        name = paragraph.style.name if paragraph.style is not None else ""
    except (KeyError, ValueError):  # a style id the styles part does not define
        return None
    match = _HEADING.match((name or "").strip())
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else 0


def table_rows(table: Table) -> list[str]:
    """Each row as a line; a merged cell, which python-docx repeats, is kept once."""
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:
                cells.append(text)
        rows.append(row_text(cells))
    return rows


def footnotes(document: DocxDocument) -> list[tuple[int, str]]:
    """The footnotes' numbers and texts. python-docx has no footnote API: the part is read
    with its XML parser (entities never resolved); ids below 1 are the separator lines."""
    for rel in document.part.rels.values():
        if rel.reltype == RELATIONSHIP_TYPE.FOOTNOTES and not rel.is_external:
            root = parse_xml(rel.target_part.blob)
            notes = []
            for note in root.iter(qn("w:footnote")):
                number = int(note.get(qn("w:id"), "0"))
                text = " ".join("".join(t.text or "" for t in note.iter(qn("w:t"))).split())
                if number > 0 and text:
                    notes.append((number, text))
            return notes
    return []


def parse(data: bytes) -> ParsedDocument:
    archive = open_zip(data, "word")
    try:
        document = docx.Document(io.BytesIO(without_macros(data, archive, MACRO_TYPE, PLAIN_TYPE)))
    except ValueError as exc:  # python-docx: "file ... is not a Word file, content type is ..."
        raise DocumentError(f"unsupported: not a Word document ({exc})") from exc
    blocks = Blocks()
    sections = Sections(blocks)
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            sections.header_rows(table_rows(item))
            continue
        text = " ".join(item.text.split())
        if not text:
            continue
        level = heading_level(item)
        if level is None:
            sections.paragraph(text)
        else:
            sections.heading(level, text)
    sections.flush()
    blocks.paragraphs("footnotes", footnotes(document), noun="footnote")
    return blocks.document()
