"""PowerPoint, Excel, CSV, HTML, EPUB and e-mail files: the real test files of their libraries
and Debian's manuals ingest cleanly, a question is cited to its place, tables keep their
header, and hostile files are refused with one line. (Word: tests/test_word.py.)"""

from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage

import openpyxl
import pytest

from ingest import kinds, slides
from ingest.chunking import chunk_pages
from ingest.isolate import PendingParse
from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.answers.compose import compose
from masis_core.errors import DocumentError
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama
from tests.office import cited_places, ingest_all_cleanly, office_corpus, rezip, zip_bomb
from tests.test_table_answers import chunks_of, table_chunk


def revenue_xlsx() -> bytes:
    """Quarterly figures as a finance team keeps them: a title row would be data, so the
    header is the first row, then 80 quarters."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Revenue"
    sheet.append(["Quarter", "Revenue (EUR k)", "Region"])
    for n in range(80):
        sheet.append([f"Q{n % 4 + 1} {2004 + n // 4}", 1000 + 37 * n, "North"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_sheet_is_chunked_by_rows_with_its_header_in_every_chunk() -> None:
    chunks = chunk_pages(parse_bytes(revenue_xlsx(), "figures.xlsx").pages, 200, 40)
    assert len(chunks) >= 4
    for chunk in chunks:
        # The file's and the sheet's names head the sheet's header in every chunk.
        assert chunk.text.startswith("figures: Revenue\nQuarter | Revenue (EUR k) | Region")
        assert chunk.place.startswith("Revenue, rows ")
    q3 = next(c for c in chunks if "Q3 2023 |" in c.text)
    first, last = map(int, q3.place.split("rows ")[1].split("–"))
    assert first <= 80 <= last  # Q3 2023 is the 79th quarter: Excel's row 80


def test_the_revenue_question_cites_the_sheet_and_its_rows(
    bench: Workbench, fake_ollama: FakeOllama
) -> None:
    bench.settings.ollama_host = fake_ollama.url
    ws = bench.create_workspace("finance", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, revenue_xlsx(), "figures.xlsx").status == "ingested"
    places = cited_places(
        RunService(bench),
        ws.id,
        "What was the revenue in Q3 2023?",
        fake_ollama,
        "The revenue in Q3 2023 was 3923 thousand euros.",
    )
    assert places and places[0][1].startswith("Revenue, rows "), places
    first, last = map(int, places[0][1].split("rows ")[1].split("–"))
    assert first <= 80 <= last, places


def test_a_csv_in_a_windows_code_page_with_semicolons_is_decoded_and_sniffed() -> None:
    text = "Région;Chiffre d'affaires\n" + "".join(f"Côte {n};{n * 10}\n" for n in range(30))
    parsed = parse_bytes(text.encode("cp1252"), "ventes.csv")
    assert parsed.pages[0].text.startswith("ventes\nRégion | Chiffre d'affaires\nCôte 0 | 0")
    assert parsed.pages[0].place.startswith("rows 2–")


def test_a_table_apart_by_spaces_is_a_table_with_its_row_names() -> None:
    """R's ``write.table``: fields apart by spaces, strings quoted, a header one cell short
    over the rows' names. Read as one column, its rows were never quoted as rows."""
    text = '"CouncilTax" "Density"\n' + "".join(
        f'"{area}" {700 + n} {n * 3}\n'
        for n, area in enumerate(["Aberdeen_City", "Angus", "Stirling"])
    )
    parsed = parse_bytes(text.encode(), "scotvote.csv")
    assert parsed.pages[0].text.startswith(
        "scotvote\n| CouncilTax | Density\nAberdeen_City | 700 | 0\nAngus | 701 | 3\n"
    )
    (lead,) = compose(
        "What was the council tax in Stirling?",
        table_chunk("rows 2–4", chunks_of(text.encode(), "scotvote.csv")[0]),
    )
    assert lead["text"] == "Stirling; CouncilTax: 702; Density: 6"
    # A blank last line keeps the names over their columns.
    parsed = parse_bytes(text.encode() + b"\n", "scotvote.csv")
    assert parsed.pages[0].text.startswith("scotvote\n| CouncilTax | Density\n")
    # Columns of numbers under a plain header are a table too (R's numeric tables).
    numbers = "popul TVnews age\n" + "".join(f"{n * 10} {n % 7} {20 + n}\n" for n in range(9))
    assert (
        parse_bytes(numbers.encode(), "anes.csv")
        .pages[0]
        .text.startswith("anes\npopul | TVnews | age\n0 | 0 | 20\n")
    )


def test_one_column_of_words_or_spaced_numbers_stays_one_column() -> None:
    """A review of the spaces reading: a bare count of words split these in two, and a stray
    quote past the lines sniffed joined rows."""
    for column in (
        "name\nAnn Lee\nBob Ray\nCy Dee\nDan Fox\n",
        "name\nPat O'Brien\nAnn O'Neil\nCy O'Hara\nDan O'Dea\n",
        "amount\n1 000\n2 500\n3 750\n12 000\n",
    ):
        lines = column.splitlines()
        assert (
            parse_bytes(column.encode(), "people.csv")
            .pages[0]
            .text.startswith("people\n" + "\n".join(lines[:3]))
        )
    # A comma file's rows ending in a delimiter keep their header where it was.
    assert (
        parse_bytes(b"a,b\n1,2,\n3,4,\n5,6,\n", "t.csv").pages[0].text.startswith("t\na | b\n1 | 2")
    )
    # A stray quote after the lines sniffed: the file is read as lines again, none lost.
    head = '"first" "last"\n' + "".join(f'"F{n}" "L{n}"\n' for n in range(60))
    text = head + 'Tom "Tiny\nAnn Lee\nBob Ray\n'
    lines = [x for p in parse_bytes(text.encode(), "names.csv").pages for x in p.text.splitlines()]
    assert "Bob Ray" in lines and 'Tom "Tiny' in lines


def test_a_macro_enabled_deck_is_read_without_its_macros(bench: Workbench) -> None:
    deck = (office_corpus("pptx") / "python_pptx__txt-fit-text.pptx").read_bytes()
    types = zipfile.ZipFile(io.BytesIO(deck)).read("[Content_Types].xml")
    assert slides.PLAIN_TYPE in types
    pptm = rezip(
        deck,
        {
            "[Content_Types].xml": types.replace(slides.PLAIN_TYPE, slides.MACRO_TYPE),
            "ppt/vbaProject.bin": b"\xd0\xcf\x11\xe0",
        },
    )
    ws = bench.create_workspace("macros", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, pptm, "deck.pptm")
    assert report.status == "ingested", report.error


def test_a_chart_is_read_as_its_table_and_an_unreadable_one_leaves_the_slide() -> None:
    """python-pptx's own chart decks: a clustered column chart becomes a header of series
    names and a row per category; a 3-D area chart python-pptx cannot read is skipped, the
    deck's other charts still read."""
    folder = office_corpus("pptx")
    charts = parse_bytes((folder / "python_pptx__cht-charts.pptx").read_bytes(), "c.pptx")
    first = charts.pages[0]
    assert first.place == "slide 1"
    assert first.text.startswith("| Series 1 | Series 2 | Series 3\nCategory 1 | 4.3 | 2.4 | 2")
    mixed = (folder / "python_pptx__cht-chart-type.pptx").read_bytes()
    assert parse_bytes(mixed, "t.pptx").pages


XXE_PAGE = (
    b'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
    b"<html><body><main><h1>Plant</h1><p>&secret; The pump is inspected weekly.</p>"
    b"<script>document.write('injected')</script></main></body></html>"
)


def test_a_web_page_never_resolves_an_entity_nor_keeps_a_script() -> None:
    parsed = parse_bytes(XXE_PAGE, "page.html")
    text = " ".join(p.text for p in parsed.pages)
    assert "pump is inspected weekly" in text
    assert "root:" not in text and "injected" not in text
    assert parsed.pages[0].place == "Plant, paragraph 1"


def test_an_epub_declaring_entities_is_refused_before_it_is_parsed(bench: Workbench) -> None:
    book = (office_corpus("epub") / "live-manual.en.epub").read_bytes()
    opf = zipfile.ZipFile(io.BytesIO(book)).read("OEBPS/content.opf")
    hostile = rezip(
        book,
        {
            "OEBPS/content.opf": opf.replace(
                b"?>", b'?><!DOCTYPE package [<!ENTITY s SYSTEM "file:///etc/passwd">]>', 1
            )
        },
    )
    ws = bench.create_workspace("xxe", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, hostile, "book.epub")
    assert report.status == "failed"
    assert report.error == (
        "unsafe: the EPUB book's part OEBPS/content.opf declares XML entities; they are "
        "never resolved, and the file is not read"
    )


@pytest.mark.parametrize(
    ("name", "member", "kind"),
    [("bomb.xlsx", "xl/workbook.xml", "Excel workbook"), ("bomb.epub", "mimetype", "EPUB book")],
)
def test_a_zip_bomb_is_refused_by_its_unpacked_size(
    bench: Workbench, name: str, member: str, kind: str
) -> None:
    ws = bench.create_workspace("bombs", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, zip_bomb(member, 600), name)
    assert report.status == "failed"
    assert report.error is not None
    assert report.error.startswith(f"refused: the {kind} would unpack to 600 MB"), report.error
    assert bench.registry.list_documents(ws.id, status=None) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "minimum", "ingested"),
    [
        ("pptx", 60, 40),
        ("xlsx", 25, 18),
        ("csv", 50, 40),
        ("html", 60, 60),
        ("epub", 10, 11),
        ("eml", 20, 15),
    ],
)
def test_every_real_file_of_a_kind_ends_ingested_or_failed_cleanly(
    tmp_path, kind: str, minimum: int, ingested: int
) -> None:
    files = ingest_all_cleanly(office_corpus(kind), tmp_path / "data", minimum)
    assert sum(f["status"] == "ingested" for f in files) >= ingested, [
        (f["file"], f["error"]) for f in files if f["status"] == "failed"
    ]


# (kind, file, question, the cited place's start, the Ollama draft's answer): a table's rows
# are no sentences for the offline engine to quote, so those answers come from an LLM (the
# fake server, its draft citing the first passage found); prose is answered offline.
REAL_QUESTIONS = [
    (
        "csv",
        "statsmodels__statecrime.csv",
        "What are the violent, murder and poverty values of Texas?",
        "rows ",
        "Texas had a violent figure of 491.4 and a murder figure of 5.4.",
    ),
    (
        "xlsx",
        "tablib__founders.xlsx",
        "What was the gpa of George Washington?",
        "Feuille1, rows 2–4",
        "George Washington had a gpa of 67.",
    ),
    (
        "pptx",
        "python_pptx__txt-fit-text.pptx",
        "What is the art and craft of designing typefaces called?",
        "slide 1",
        "",
    ),
    (
        "html",
        "debian-reference-en__ch10.en.html",
        "Why does copying files with rsync offer richer features than other tools?",
        "Chapter 10. Data management › 10.1. Sharing, copying, and archiving › 10.1.2. Copy",
        "",
    ),
    (
        "epub",
        "live-manual.en.epub",
        "Which command creates the config/ hierarchy in the current directory?",
        "chapter 12, 4. The basics",
        "",
    ),
    (
        "eml",
        "mail-parser__mail_test_13.eml",
        "When is the upcoming webinar So, You Have A Disaster... Now What?",
        "e-mail from Continuity Insights <info@continuityinsights.com>, Wed, 29 Aug 2018",
        "",
    ),
]


@pytest.mark.parametrize(("kind", "name", "question", "place", "answer"), REAL_QUESTIONS)
def test_a_real_file_is_cited_to_the_place_of_the_answer(
    bench: Workbench,
    fake_ollama: FakeOllama,
    kind: str,
    name: str,
    question: str,
    place: str,
    answer: str,
) -> None:
    bench.settings.ollama_host = fake_ollama.url
    ws = bench.create_workspace("real", "wordllama")
    report = Ingestor(bench).ingest_path(ws, office_corpus(kind) / name)
    assert report.status == "ingested", report.error
    research = RunService(bench)
    places = cited_places(research, ws.id, question, fake_ollama if answer else None, answer)
    assert any(f == name and p.startswith(place) for f, p in places), places


def memo_with_attachments() -> bytes:
    message = EmailMessage()
    message["From"] = "Ann Analyst <ann@example.org>"
    message["To"] = "team@example.org"
    message["Date"] = "Tue, 03 Mar 2026 10:00:00 +0000"
    message["Subject"] = "Q3 figures"
    message.set_content("The quarterly figures are attached.\n\nThe north region grew fastest.")
    message.add_attachment(
        revenue_xlsx(),
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        filename="figures.xlsx",
    )
    message.add_attachment(b"\x89PNG\r\n", maintype="image", subtype="png", filename="logo.png")
    return bytes(message)


def test_an_email_is_cited_by_sender_date_and_subject_and_its_attachments_are_documents(
    bench: Workbench,
) -> None:
    ws = bench.create_workspace("mail", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, memo_with_attachments(), "memo.eml")
    assert report.status == "ingested", report.error
    assert report.notes == ["attachment figures.xlsx: ingested"]
    names = sorted(d.filename for d in bench.registry.list_documents(ws.id))
    assert names == ["memo.eml", "memo.eml › figures.xlsx"]
    parsed = parse_bytes(memo_with_attachments(), "memo.eml")
    assert parsed.pages[0].place == (
        "e-mail from Ann Analyst <ann@example.org>, Tue, 03 Mar 2026 10:00:00 +0000, "
        "“Q3 figures”, paragraphs 1–2"
    )


def test_a_parse_past_its_memory_cap_fails_that_file_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The child's address space is capped at what it inherited plus PARSE_MEMORY_MB: a
    table that needs more fails with the reason, and the parent goes on."""
    monkeypatch.setattr(kinds, "PARSE_MEMORY_MB", 48)
    rows = "".join(f"{n},{'x' * 40},{n * 3}\n" for n in range(400_000))
    pending = PendingParse(("id,name,value\n" + rows).encode(), "big.csv", 120)
    with pytest.raises(DocumentError) as failure:
        pending.result()
    assert str(failure.value) == (
        "too large: reading the CSV file needed more than 48 MB of memory"
    )
    small = PendingParse(b"id,name\n1,pump\n", "small.csv", 120).result()
    assert small.pages[0].text == "small\nid | name\n1 | pump"


def test_a_new_kind_is_one_line_in_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind is a ``Kind`` in ``kinds.KINDS`` naming its parser module: registered, a suffix
    the Library refused is read through it, and its label names it in a reason."""
    shtml = b"<html><body><h1>Pumps</h1><p>Inspect the pump every 500 hours.</p></body></html>"
    with pytest.raises(DocumentError, match="unsupported"):
        parse_bytes(shtml, "pumps.shtml")
    extra = kinds.Kind("shtml", (".shtml",), "server-side web page", module="webpage")
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, extra))
    (page,) = parse_bytes(shtml, "pumps.shtml").pages
    assert page.place == "Pumps, paragraph 1" and "500 hours" in page.text
    zipped = kinds.Kind("zipped", (".zshtml",), "zipped page", "page.html", module="webpage")
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, zipped))
    with pytest.raises(DocumentError, match="not a zipped page"):
        parse_bytes(shtml, "pumps.zshtml")
