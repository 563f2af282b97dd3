"""A spreadsheet's citation names the row that answers, its size is sheets and rows, and its
place is drawn as a table with that row highlighted (issue 54, point 8: an Olympic medal table
was cited "rows 3–13", shown as one pipe-joined line, and listed as "pages 3")."""

from __future__ import annotations

import io

import openpyxl

from ingest.batch import FileReport
from ingest.pipeline import Ingestor
from masis_core.__main__ import print_record, run_json
from masis_core.answers.support import cited_sentences, sentence_support
from masis_core.services.records import RunRecord
from masis_core.services.report_pdf import run_pdf
from masis_core.services.reports import citation_source, run_markdown, table_frame
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.graphs import accepted
from tests.test_evidence import pdf_text

COUNTRIES = [
    ("United States", 46, 37, 38),
    ("Great Britain", 27, 23, 17),
    ("China", 26, 18, 26),
    ("Russia", 19, 17, 20),
    ("Germany", 17, 10, 15),
    ("Japan", 12, 8, 21),
    ("France", 10, 18, 14),
    ("South Korea", 9, 3, 9),
    ("Italy", 8, 12, 8),
    ("Australia", 8, 11, 10),
    ("Netherlands", 8, 7, 4),
    ("Hungary", 8, 3, 4),
    ("Brazil", 7, 6, 6),
    ("Spain", 7, 4, 6),
    ("Kenya", 6, 6, 1),
]
QUESTION = "How many gold medals did Kenya win?"


def medals_xlsx() -> bytes:
    """The 2016 medal table as ONLYOFFICE's sample has it: a title row, a blank row, then the
    header on row 3 (Kenya's row is row 18)."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Medals"
    sheet.append(["Olympic Games 2016: medal table"])
    sheet.append([])
    sheet.append(["Country", "Gold", "Silver", "Bronze"])
    for row in COUNTRIES:
        sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def medals_run(bench: Workbench) -> tuple[FileReport, RunRecord]:
    """The medal table ingested into a workspace, and the Kenya question's accepted run."""
    ws = bench.create_workspace("games", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, medals_xlsx(), "medals.xlsx")
    assert report.status == "ingested", report.error
    service = RunService(bench)
    return report, accepted(service, service.ask(ws.id, QUESTION))


def test_a_sheet_is_cited_to_the_row_that_answers_and_sized_in_sheets_and_rows(
    bench: Workbench,
) -> None:
    report, rec = medals_run(bench)
    assert report.line().startswith("ingested   medals.xlsx: 1 sheet, 15 rows, ")
    (doc,) = bench.registry.list_documents("games")
    assert doc.extent == "1 sheet, 15 rows"
    cited = cited_sentences(sentence_support(rec.answer or "", rec.citations))
    (kenya,) = [c for c in rec.citations if "Kenya" in str(c.get("text"))]
    assert citation_source(kenya, cited[kenya["n"]]) == "medals.xlsx, Medals, row 18"
    frame, quoted = table_frame(kenya, cited[kenya["n"]]) or (None, None)
    assert frame is not None and quoted == {"row 18"}
    assert list(frame.columns) == ["Country", "Gold", "Silver", "Bronze"]
    assert frame.loc["row 18"].tolist() == ["Kenya", "6", "6", "1"]


def test_the_exports_cite_the_row_that_answers_as_the_page_does(bench: Workbench, capsys) -> None:
    """The Markdown and PDF exports, the command line's answer and its JSON name Kenya's row
    as the page's Sources do; they had said the chunk's "rows 4–18"."""
    _, rec = medals_run(bench)
    (kenya,) = [c for c in rec.citations if "Kenya" in str(c.get("text"))]
    assert kenya.get("place") == "Medals, rows 4–18"  # the chunk's place: narrowed when cited
    cited = f"[{kenya['n']}] medals.xlsx, Medals, row 18"
    markdown = run_markdown(rec)
    assert f"{kenya['n']}. medals.xlsx, Medals, row 18" in markdown
    assert f"### {cited}" in markdown
    pdf = " ".join(pdf_text(run_pdf(rec)).split())
    assert pdf.count(cited) == 2  # the Citations list and the appendix's caption
    (said,) = [c for c in run_json(rec)["citations"] if c["n"] == kenya["n"]]
    assert said["source"] == "medals.xlsx, Medals, row 18"
    print_record(rec)
    assert f"  {cited}" in capsys.readouterr().out
    for text in (markdown, pdf):
        assert "rows 4–18" not in text
