"""Word documents (.docx, and .docm read without its macros) with python-docx.

A citation points at the heading path and the paragraph within its section ("3 Methods ›
3.2 Sampling, paragraph 4"); a table is cut into blocks of rows, each with the table's first
row as its header ("3 Methods, table 1, rows 2–9"); a text box or shape with text by its
number in its section ("Features, text box 2"). Headers and footers ("header", "first-page
footer of section 2"), footnotes, endnotes and comments come last, by their numbers
("footnotes, footnote 3", "comments, comment 2"). What is not read (pictures, charts,
SmartArt, embedded objects) is named in the file's notes.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator

import docx
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
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
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_HEADERS_FOOTERS = (
    ("header", "header"),
    ("first_page_header", "first-page header"),
    ("even_page_header", "even-page header"),
    ("footer", "footer"),
    ("first_page_footer", "first-page footer"),
    ("even_page_footer", "even-page footer"),
)
# What a body may hold that has no text here, by element: a picture (its text box aside), a
# chart, a SmartArt diagram, an embedded object (a spreadsheet, an equation editor's).
_UNREAD = (
    ("{http://schemas.openxmlformats.org/drawingml/2006/picture}pic", "picture"),
    ("{http://schemas.openxmlformats.org/drawingml/2006/chart}chart", "chart"),
    ("{http://schemas.openxmlformats.org/drawingml/2006/diagram}relIds", "SmartArt diagram"),
    ("{urn:schemas-microsoft-com:office:office}OLEObject", "embedded object"),
)


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


def footnotes(
    document: DocxDocument, reltype: str = RELATIONSHIP_TYPE.FOOTNOTES, tag: str = "w:footnote"
) -> list[tuple[int, str]]:
    """The footnotes' (or endnotes') numbers, as the document shows them, and texts.
    python-docx has no footnote API: the part is read with its XML parser (entities never
    resolved). The separator lines are typed notes; the others are numbered in order, not by
    id (LibreOffice gives its separators ids 0 and 1, so its first note is id 2)."""
    for rel in document.part.rels.values():
        if rel.reltype == reltype and not rel.is_external:
            root = parse_xml(rel.target_part.blob)
            notes = [
                note
                for note in root.iter(qn(tag))
                if note.get(qn("w:type"), "normal") == "normal"
                and int(note.get(qn("w:id"), "0")) > 0
            ]
            texts = [_text(note) for note in notes]
            return [(n, text) for n, text in enumerate(texts, start=1) if text]
    return []


def _text(element: BaseOxmlElement) -> str:
    """An element's words (``w:t``), spaces folded."""
    return " ".join("".join(t.text or "" for t in element.iter(qn("w:t"))).split())


def text_boxes(element: BaseOxmlElement) -> list[str]:
    """The text of each text box or shape anchored in ``element``, its paragraphs one a line.
    Word writes a box twice, as DrawingML and as a VML fallback for old readers: the fallback
    is skipped, and a box inside another is read with it. python-docx reads neither: the
    feature list of ONLYOFFICE's sample, all in text boxes, had been in no chunk."""
    out = []
    for box in element.iter(qn("w:txbxContent")):
        if any(a.tag in (_FALLBACK, qn("w:txbxContent")) for a in box.iterancestors()):
            continue
        lines = [_text(p) for p in box.iter(qn("w:p"))]
        text = "\n".join(line for line in lines if line)
        if text:
            out.append(text)
    return out


def body_items(container: BaseOxmlElement, parent: DocxDocument) -> Iterator[Paragraph | Table]:
    """The body's paragraphs and tables in order, those inside content controls (``w:sdt``: a
    cover page, a form's fields) too, which python-docx's ``iter_inner_content`` passes over."""
    for child in container.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, parent._body)
        elif child.tag == qn("w:tbl"):
            yield Table(child, parent._body)
        elif child.tag == qn("w:sdt"):
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from body_items(content, parent)


def headers_and_footers(document: DocxDocument) -> list[tuple[str, str]]:
    """Each header and footer a section defines, as (place, text): "header", "first-page
    footer of section 2"; one repeated unchanged is read once."""
    seen: set[str] = set()
    out = []
    many = len(document.sections) > 1
    for number, section in enumerate(document.sections, start=1):
        for attr, name in _HEADERS_FOOTERS:
            part = getattr(section, attr)
            if part.is_linked_to_previous:  # no definition of its own
                continue
            element = part._element
            lines = [_text(p) for p in element.iter(qn("w:p"))]
            text = "\n".join(line for line in lines if line)
            if text and text not in seen:
                seen.add(text)
                out.append((f"{name} of section {number}" if many else name, text))
    return out


def comments(document: DocxDocument) -> list[tuple[int, str]]:
    """The comments in order, each with its author: "Ann Lee: check the 2019 figure"."""
    out = []
    for number, comment in enumerate(document.comments, start=1):
        text = " ".join(comment.text.split())
        author = " ".join((comment.author or "").split())
        if text:
            out.append((number, f"{author}: {text}" if author else text))
    return out


def not_read(document: DocxDocument) -> list[str]:
    """What is in the file and not read, as one note ("not read: 3 pictures, 1 chart"):
    an analyst asking about a chart's figures must know they were never in the Library."""
    body = document.element.body
    found = []
    for tag, noun in _UNREAD:
        count = sum(1 for _ in body.iter(tag))
        if count:
            found.append(f"{count} {noun}{'s' if count > 1 else ''}")
    if not found:
        return []
    return [f"not read: {', '.join(found)}: any words inside them are not in the Library"]


def parse(data: bytes) -> ParsedDocument:
    archive = open_zip(data, "word")
    try:
        document = docx.Document(io.BytesIO(without_macros(data, archive, MACRO_TYPE, PLAIN_TYPE)))
    except ValueError as exc:  # python-docx: "file ... is not a Word file, content type is ..."
        raise DocumentError(f"unsupported: not a Word document ({exc})") from exc
    blocks = Blocks()
    sections = Sections(blocks)
    for item in body_items(document.element.body, document):
        if isinstance(item, Table):
            sections.header_rows(table_rows(item))
            for box in text_boxes(item._element):
                sections.box(box)
            continue
        text = " ".join(item.text.split())
        level = heading_level(item)
        if text and level is None:
            sections.paragraph(text)
        elif text:
            sections.heading(level or 0, text)
        for box in text_boxes(item._element):
            sections.box(box)
    sections.flush()
    for place, text in headers_and_footers(document):
        blocks.add(f"{place}\n\n{text}", place)
    blocks.paragraphs("footnotes", footnotes(document), noun="footnote")
    endnotes = footnotes(document, RELATIONSHIP_TYPE.ENDNOTES, "w:endnote")
    blocks.paragraphs("endnotes", endnotes, noun="endnote")
    blocks.paragraphs("comments", comments(document), noun="comment")
    parsed = blocks.document()
    parsed.notes = not_read(document)
    return parsed
