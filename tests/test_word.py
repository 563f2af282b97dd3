"""Word documents: cited to the heading path and paragraph, tables kept as tables, the real
test files of python-docx ingested cleanly, hostile packages refused with a reason."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml
from PIL import Image

from ingest import word
from ingest.chunking import chunk_pages
from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.graph.nodes import researcher
from masis_core.retrieval.hybrid import retrieve
from masis_core.services.reports import citation_source
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.graphs import researcher_state, runtime_for
from tests.office import cited_places, ingest_all_cleanly, office_corpus, rezip, zip_bomb
from tests.pdfs import filler

SAMPLING = (
    "Households were drawn from the electoral roll by stratified random sampling, "
    "with 412 households in each of the nine districts."
)


def report_docx() -> bytes:
    """A small report as Word writes one: numbered headings, paragraphs, a table."""
    document = docx.Document()
    document.add_heading("Field survey of rural water supply", level=0)
    document.add_heading("1 Introduction", level=1)
    document.add_paragraph(filler("introduction", 60))
    document.add_heading("3 Methods", level=1)
    document.add_paragraph(filler("methods overview", 40))
    document.add_heading("3.1 Instruments", level=2)
    document.add_paragraph(filler("questionnaire", 40))
    document.add_heading("3.2 Sampling", level=2)
    document.add_paragraph(filler("sampling frame", 30))
    document.add_paragraph(SAMPLING)
    document.add_heading("4 Results", level=1)
    table = document.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Quarter", "Revenue", "Wells"), strict=True):
        cell.text = text
    for n in range(60):
        row = table.add_row().cells
        row[0].text, row[1].text, row[2].text = f"Q{n % 4 + 1} {2000 + n // 4}", f"{n * 7}", "3"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_paragraph_is_placed_by_its_heading_path_and_number() -> None:
    parsed = parse_bytes(report_docx(), "survey.docx")
    places = [p.place for p in parsed.pages]
    sampling = next(p for p in parsed.pages if "stratified random sampling" in p.text)
    # The title is the path's root; the two paragraphs of 3.2 fit one block.
    assert sampling.place == (
        "Field survey of rural water supply › 3 Methods › 3.2 Sampling, paragraphs 1–2"
    )
    assert sampling.text.startswith("Field survey of rural water supply › 3 Methods › 3.2")
    assert any(p.endswith("1 Introduction, paragraph 1") for p in places)


def test_a_word_table_is_chunked_by_rows_with_its_header_in_every_chunk() -> None:
    parsed = parse_bytes(report_docx(), "survey.docx")
    chunks = chunk_pages(parsed.pages, 200, 40)
    table = [c for c in chunks if "table 1" in c.place]
    assert len(table) >= 3
    for chunk in table:
        # The section's heading path, then the header row: found by either's words. Rows stay
        # lines, so the offline engine can quote one with its header.
        assert chunk.text.startswith(
            "Field survey of rural water supply › 4 Results\nQuarter | Revenue | Wells\n\nQ"
        ), chunk.text[:80]
        assert ", table 1, rows " in chunk.place
    ranges = [tuple(map(int, c.place.split("rows ")[1].split("–"))) for c in table]
    assert ranges[0][0] == 2 and ranges[-1][1] == 61  # the header is row 1; 60 rows follow
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))


def test_a_table_is_found_by_the_words_of_its_heading(bench: Workbench) -> None:
    """Only the heading says what the rows are: its words head every block of the table."""
    document = docx.Document()
    document.add_heading("Boilers", level=1)
    document.add_paragraph("The boiler is descaled once a year by a certified contractor.")
    document.add_heading("Pump maintenance intervals", level=1)
    table = document.add_table(rows=3, cols=2)
    rows = (("Part", "Hours"), ("filter", "500"), ("seal", "2000"))
    for row, cells in zip(table.rows, rows, strict=True):
        row.cells[0].text, row.cells[1].text = cells
    out = io.BytesIO()
    document.save(out)
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, out.getvalue(), "plant.docx").status == "ingested"
    found = retrieve(bench.index(ws.id, "wordllama"), ["pump maintenance intervals"], 2, "bm25")
    assert [c.metadata["place"] for c in found] == ["Pump maintenance intervals, table 1, rows 2–3"]


def test_the_citation_names_the_heading_path_and_paragraph(bench: Workbench) -> None:
    ws = bench.create_workspace("reports", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, report_docx(), "survey.docx")
    assert report.status == "ingested", report.error
    rec = RunService(bench).ask(ws.id, "How were the households sampled from the electoral roll?")
    places = [c.get("place") for c in rec.citations]
    assert places and places[0].endswith("3 Methods › 3.2 Sampling, paragraphs 1–2"), places
    assert citation_source(rec.citations[0]).startswith("survey.docx, Field survey")


def test_a_macro_enabled_document_is_read_without_its_macros(bench: Workbench) -> None:
    """A .docm: the same package with a macro content type and a VBA project; its text is
    read, its macros are bytes nobody opens."""
    plain = report_docx()
    types = docx_part(plain, "[Content_Types].xml").replace(word.PLAIN_TYPE, word.MACRO_TYPE)
    assert word.MACRO_TYPE in types
    docm = rezip(plain, {"[Content_Types].xml": types, "word/vbaProject.bin": b"\xd0\xcf\x11\xe0"})
    ws = bench.create_workspace("macros", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, docm, "survey.docm")
    assert report.status == "ingested", report.error
    assert report.chunks >= 4


def docx_part(data: bytes, name: str) -> bytes:
    import zipfile

    return zipfile.ZipFile(io.BytesIO(data)).read(name)


XXE = b'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        (
            "bomb.docx",
            lambda: zip_bomb("word/document.xml", 600),
            "refused: the Word document would unpack to 600 MB",
        ),
        (
            "xxe.docx",
            lambda: rezip(
                report_docx(),
                {
                    "word/document.xml": XXE
                    + docx_part(report_docx(), "word/document.xml")
                    .split(b"?>", 1)[1]
                    .replace(b"Households", b"&secret; Households")
                },
            ),
            "unsafe: the Word document's part word/document.xml declares XML entities",
        ),
        ("truncated.docx", lambda: report_docx()[:3000], "corrupt: the Word document is not"),
        ("notes.docx", lambda: b"just some text saved as docx", "corrupt: 'notes.docx' is not"),
    ],
)
def test_hostile_word_files_fail_with_one_line_and_leave_nothing(
    bench: Workbench, name: str, make, reason: str
) -> None:
    ws = bench.create_workspace("hostile", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, make(), name)
    assert report.status == "failed"
    assert report.error is not None and report.error.startswith(reason), report.error
    assert "\n" not in report.error
    assert bench.registry.list_documents(ws.id, status=None) == []
    assert bench.store.count("wordllama", ws.id) == 0


def test_a_word_file_named_as_something_else_is_read_by_its_content(bench: Workbench) -> None:
    ws = bench.create_workspace("renamed", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, report_docx(), "survey.bin")
    assert report.status == "ingested", report.error


@pytest.mark.slow
def test_every_real_word_file_ends_ingested_or_failed_cleanly(tmp_path) -> None:
    files = ingest_all_cleanly(office_corpus("docx"), tmp_path / "data", minimum=40)
    assert sum(f["status"] == "ingested" for f in files) >= 25, files


def test_a_real_word_file_is_cited_to_its_paragraphs(bench: Workbench) -> None:
    """python-docx's sct-first-page-hdrftr.docx: five one-line paragraphs, one block."""
    name = "python_docx__sct-first-page-hdrftr.docx"
    ws = bench.create_workspace("real", "wordllama")
    assert Ingestor(bench).ingest_path(ws, office_corpus("docx") / name).status == "ingested"
    question = "Which page is the first page of the second section?"
    assert (name, "paragraphs 1–5") in cited_places(RunService(bench), ws.id, question)


FOOTNOTES = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b'<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
    b'<w:footnote w:id="1"><w:p><w:r><w:t>The electoral roll of 2019, the latest</w:t></w:r>'
    b'<w:r><w:t xml:space="preserve"> published.</w:t></w:r></w:p></w:footnote>'
    b"</w:footnotes>"
)


def with_footnotes(data: bytes) -> bytes:
    """The report with a footnotes part as Word writes it: the part, its relationship from
    the document and its content type (python-docx can read but not write footnotes)."""
    rels = docx_part(data, "word/_rels/document.xml.rels").replace(
        b"</Relationships>",
        b'<Relationship Id="rIdFn" Target="footnotes.xml" Type="http://schemas.openxmlformats'
        b'.org/officeDocument/2006/relationships/footnotes"/></Relationships>',
    )
    types = docx_part(data, "[Content_Types].xml").replace(
        b"</Types>",
        b'<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-'
        b'officedocument.wordprocessingml.footnotes+xml"/></Types>',
    )
    return rezip(
        data,
        {
            "word/footnotes.xml": FOOTNOTES,
            "word/_rels/document.xml.rels": rels,
            "[Content_Types].xml": types,
        },
    )


def test_footnotes_are_read_and_cited_by_their_number() -> None:
    parsed = parse_bytes(with_footnotes(report_docx()), "survey.docx")
    last = parsed.pages[-1]
    assert last.place == "footnotes, footnote 1"
    assert last.text == "footnotes\n\nThe electoral roll of 2019, the latest published."


# -- text boxes, shapes, headers, footers, notes and comments (issue 54, point 1) ------------

FIXTURES = Path(__file__).parent / "fixtures"
# Made by LibreOffice 7.4 from libreoffice-features.fodt (`libreoffice --headless --convert-to
# docx`): a text frame holding a feature list, a header, a footer, a footnote and a comment.
LIBREOFFICE = FIXTURES / "libreoffice-features.docx"
FEATURE = "Embed documents to websites and apps"
_NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)


def word_text_box(lines: list[str]) -> str:
    """A run holding a text box as Word writes it: the DrawingML shape, and the same box again
    as VML for readers that know no DrawingML."""
    body = "".join(f"<w:p><w:r><w:t>{line}</w:t></w:r></w:p>" for line in lines)
    content = f"<w:txbxContent>{body}</w:txbxContent>"
    return (
        f'<w:r {_NS}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor>'
        '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/'
        f'wordprocessingShape"><wps:wsp><wps:txbx>{content}</wps:txbx></wps:wsp>'
        "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict>"
        f"<v:shape><v:textbox>{content}</v:textbox></v:shape></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )


def boxed_docx() -> bytes:
    """A product sheet whose feature list is in text boxes, as in ONLYOFFICE's sample."""
    document = docx.Document()
    document.add_heading("Features", level=1)
    anchor = document.add_paragraph("Our editors run in any browser.")
    anchor._p.append(parse_xml(word_text_box([FEATURE, "Co-edit in real time"])))
    anchor._p.append(parse_xml(word_text_box(["Convert files to PDF and back"])))
    document.sections[0].footer.paragraphs[0].text = "Printed on recycled paper"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_word_text_boxes_are_read_once_each_and_cited_to_their_place() -> None:
    parsed = parse_bytes(boxed_docx(), "sheet.docx")
    by_place = {p.place: p.text for p in parsed.pages}
    assert by_place["Features, text boxes 1–2"] == (
        f"Features\n\n{FEATURE}\nCo-edit in real time\n\nConvert files to PDF and back"
    )
    every = "\n".join(p.text for p in parsed.pages)
    assert every.count(FEATURE) == 1  # the VML copy of the box is not read again
    assert by_place["Features, paragraph 1"] == "Features\n\nOur editors run in any browser."
    assert by_place["footer"] == "footer\n\nPrinted on recycled paper"


def test_a_libreoffice_file_keeps_its_boxes_header_footer_footnote_and_comment(
    bench: Workbench,
) -> None:
    places = {p.place: p.text for p in parse_bytes(LIBREOFFICE.read_bytes(), "x.docx").pages}
    assert FEATURE in places["Harbour Office Suite, text box 1"]
    assert "Harbour Office Suite product sheet" in places["header"]
    assert "Confidential: for resellers only" in places["footer"]
    # LibreOffice numbers its separators 0 and 1: its first footnote is still footnote 1.
    assert "Firefox 128" in places["footnotes, footnote 1"]
    assert "Ann Lee: Check the per-server price" in places["comments, comment 1"]

    ws = bench.create_workspace("sheets", "wordllama")
    assert Ingestor(bench).ingest_path(ws, LIBREOFFICE).status == "ingested"
    question = "Can documents be embedded to websites and apps?"
    out = researcher.node(researcher_state(ws.id, question), runtime_for(bench))
    boxed = [e for e in out["evidence"] if FEATURE in e["text"]]
    assert boxed, out["trace"]
    assert citation_source(dict(boxed[0])) == (
        f"{LIBREOFFICE.name}, Harbour Office Suite, text box 1"
    )


def test_headers_and_footers_of_real_word_files_are_read() -> None:
    """python-docx's test files, saved by Word: headers per section, odd and even pages."""
    folder = office_corpus("docx")
    places = [
        p.place
        for p in parse_bytes(
            (folder / "python_docx__doc-odd-even-hdrs.docx").read_bytes(), "a.docx"
        ).pages
    ]
    assert {"header", "even-page header"} <= set(places)
    parsed = parse_bytes((folder / "python_docx__hdr-header-footer.docx").read_bytes(), "b.docx")
    texts = {p.place: p.text for p in parsed.pages}
    assert "Header for section-1" in texts["header of section 1"]
    comments = parse_bytes((folder / "python_docx__comments-rich-para.docx").read_bytes(), "c.docx")
    assert any(p.place.startswith("comments, comment") for p in comments.pages)


def test_what_a_word_file_holds_and_is_not_read_is_named_in_its_notes(bench: Workbench) -> None:
    """python-docx's shp-inline-shape-access.docx: pictures, a chart and a SmartArt diagram."""
    ws = bench.create_workspace("shapes", "wordllama")
    path = office_corpus("docx") / "python_docx__shp-inline-shape-access.docx"
    report = Ingestor(bench).ingest_path(ws, path)
    # It has no words of its own: the reason says what it does hold.
    assert report.status == "failed"
    assert report.error == (
        "no text: the file contains no words (not read: 3 pictures, 1 chart, 1 SmartArt "
        "diagram: any words inside them are not in the Library)"
    )
    boxed = Ingestor(bench).ingest_bytes(ws, with_picture(boxed_docx()), "pictured.docx")
    assert boxed.status == "ingested", boxed.error
    assert "not read: 1 picture: any words inside them are not in the Library" in boxed.notes


def with_picture(data: bytes) -> bytes:
    """The document with a picture added (a one-pixel PNG)."""
    document = docx.Document(io.BytesIO(data))
    png = io.BytesIO()
    Image.new("RGB", (1, 1)).save(png, format="PNG")
    document.add_picture(io.BytesIO(png.getvalue()))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
