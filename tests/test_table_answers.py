"""Offline answers from a table's rows (``masis_core.answers.rows``): the row that answers is
the lead, read with its header, cited at its place and highlighted in the source view."""

from __future__ import annotations

from ingest.chunking import chunk_pages, flat
from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.answers.compose import compose
from masis_core.answers.rows import read_row, row_line
from masis_core.services.runs import RunService
from masis_core.state import Evidence
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app

NOTE = b"""# Pumps

The hydraulic pump must be inspected every 500 operating hours by the shift lead.

## Replacement intervals

| Part | Interval | Torque |
|------|----------|--------|
| seal | 2000 h | 12 Nm |
| filter | 500 h | 8 Nm |
| bearing | 4000 h | 30 Nm |
"""
SEAL = "Part: seal; Interval: 2000 h; Torque: 12 Nm"


def table_chunk(place: str, text: str) -> list[Evidence]:
    """One retrieved chunk of a table block, as the researcher hands it to the composer."""
    return [Evidence(chunk_id="w/d/000001", doc_id="d", place=place, text=text)]


def test_a_table_chunk_keeps_its_rows_as_lines_and_embeds_the_same_words() -> None:
    parsed = parse_bytes(b"Part,Interval\nseal,2000 h\nfilter,500 h\n", "parts.csv")
    (chunk,) = chunk_pages(parsed.pages)
    assert chunk.text == "Part | Interval\nseal | 2000 h\nfilter | 500 h"
    assert flat(chunk.text) == " ".join(parsed.pages[0].text.split())
    # A PDF's pages still run on into each other, one space between words.
    pdf = parse_bytes(b"Line one\nline two.\n", "plain.txt")
    assert "\n" not in chunk_pages(pdf.pages)[0].text


def test_the_row_that_answers_leads_read_with_its_header(bench: Workbench) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, NOTE, "plant.md").status == "ingested"
    rec = RunService(bench).ask(ws.id, "What is the replacement interval of the seal?")
    lead = rec.answer.split("\n\n")[0]
    assert lead == f"{SEAL} [1]", rec.answer
    assert rec.citations[0]["place"] == "Pumps › Replacement intervals, table 1, rows 2–4"
    # Prose still answers what prose says, even beside a table.
    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    assert rec.answer.startswith("The hydraulic pump must be inspected every 500 operating")


def test_a_row_is_never_joined_to_another_place() -> None:
    text = "Pumps\nPart | Interval | Torque\nseal | 2000 h | 12 Nm\nfilter | 500 h | 8 Nm"
    evidence = table_chunk("Pumps, table 1, rows 2–3", text)
    parts = compose("What torque does the filter need?", evidence)
    assert parts[0] == {
        "text": "Part: filter; Interval: 500 h; Torque: 8 Nm",
        "citations": [1],
        "passage": 0,
    }
    # Rows of one table are one place: the other row is not "also relevant".
    assert all(p["passage"] == 0 for p in parts) and len(parts) == 1


def test_a_chunk_stored_before_rows_had_lines_is_read_as_before() -> None:
    evidence = table_chunk("rows 2–3", "Part | Interval seal | 2000 h filter | 500 h")
    assert compose("What is the interval of the seal?", evidence) == []


def test_a_table_stored_without_a_header_has_no_row_read_by_a_made_up_one() -> None:
    """A first row of figures is data (ingest stores no header): reading the next rows by it
    would say "1871: 1872"."""
    text = "1871 | 1120\n1872 | 1160\n1873 | 963"
    assert compose("What was the volume in 1872?", table_chunk("rows 1–3", text)) == []
    assert row_line("1871: 1160", text) is None


def test_a_wide_row_keeps_its_first_cell_and_the_cells_asked_for() -> None:
    header = ["Country", *(str(year) for year in range(1960, 2010))]
    cells = ["Aruba", *(f"{2 + n / 100:.2f}" for n in range(50))]
    said = read_row(header, cells, {"aruba", "1975", "fertility"})
    assert said == "Country: Aruba; … 1975: 2.15 …"
    assert read_row(["a", "b"], ["1", ""], set()) == "a: 1"  # an empty cell is left out


def test_an_empty_cell_keeps_the_columns_in_place() -> None:
    text = "package | size | tool | description\nrsync | 776 | | remote copy"
    line = row_line("package: rsync; size: 776; description: remote copy", text)
    assert line is not None and line.split() == ["rsync", "|", "776", "|", "|", "remote", "copy"]
    assert row_line("Not a row.", text) is None
    assert row_line("package: rsync", "package | size rsync | 776") is None  # one line: no rows


def test_the_source_view_highlights_the_cited_row(bench: Workbench) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, NOTE, "plant.md").status == "ingested"
    rec = RunService(bench).ask(ws.id, "What is the replacement interval of the seal?")
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception, at.exception
    shown = [m.value for m in at.markdown]
    assert "**plant.md** — Pumps › Replacement intervals, table 1, rows 2–4" in shown, shown
    assert any(":orange-background[seal \\| 2000 h \\| 12 Nm]" in m for m in shown), shown
    assert not any(i.value.startswith("The cited sentence is not") for i in at.caption)
    # The sentence's support quotes the row, not a run of the table cut at a word.
    assert "> seal \\| 2000 h \\| 12 Nm" in shown, shown
