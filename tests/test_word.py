"""Word documents: cited to the heading path and paragraph, tables kept as tables, the real
test files of python-docx ingested cleanly, hostile packages refused with a reason."""

from __future__ import annotations

import io
import itertools

import docx
import pytest

from ingest import word
from ingest.chunking import chunk_pages
from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.retrieval.hybrid import retrieve
from masis_core.services.reports import citation_source
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
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
