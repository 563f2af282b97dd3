"""Offline answers from a table's rows (``masis_core.answers.rows``): the row that answers is
the lead, read with its header, cited at its place and highlighted in the source view."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from ingest.chunking import chunk_pages, flat
from ingest.kinds import file_title
from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.answers.compose import compose, windows
from masis_core.answers.rows import keyed, row_line
from masis_core.answers.support import sentence_support
from masis_core.graph.nodes.researcher import kept_by
from masis_core.retrieval.hybrid import Candidate
from masis_core.services.runs import RunService
from masis_core.state import Evidence
from masis_core.text.markup import highlighted_text
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app
from ui.views import kept_because

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


def table_chunk(place: str, text: str, source: str = "kb") -> list[Evidence]:
    """One retrieved chunk of a table block, as the researcher hands it to the composer."""
    return [Evidence(chunk_id="w/d/000001", doc_id="d", place=place, text=text, source=source)]  # type: ignore[typeddict-item]


def chunks_of(data: bytes, name: str, size: int = 200) -> list[str]:
    return [c.text for c in chunk_pages(parse_bytes(data, name).pages, size, size // 5)]


def test_a_table_is_chunked_by_whole_rows_under_its_head() -> None:
    csv = b"Part,Interval\n" + b"".join(b"seal %d,%d h\n" % (n, n * 100) for n in range(1, 21))
    (chunk,) = chunks_of(csv, "parts.csv")
    # The file's name heads a table that has no heading of its own.
    assert chunk.startswith("parts\nPart | Interval\n\nseal 1 | 100 h\nseal 2 | 200 h\n")
    # What is embedded is the words as before: a blank line and line breaks are spaces.
    assert flat(chunk) == " ".join(parse_bytes(csv, "parts.csv").pages[0].text.split())
    # A block cut into smaller chunks repeats its head in each, and never cuts a row.
    small = chunks_of(csv, "parts.csv", size=50)
    assert len(small) > 1
    assert all(c.startswith("parts\nPart | Interval\n\nseal ") and c.endswith(" h") for c in small)
    # A PDF's pages still run on into each other, one space between words.
    assert "\n" not in chunks_of(b"Line one\nline two.\n", "plain.txt")[0]


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
    text = "Pumps\nPart | Interval | Torque\n\nseal | 2000 h | 12 Nm\nfilter | 500 h | 8 Nm"
    evidence = table_chunk("Pumps, table 1, rows 2–3", text)
    parts = compose("What torque does the filter need?", evidence)
    assert parts[0] == {
        "text": "Part: filter; Interval: 500 h; Torque: 8 Nm",
        "citations": [1],
        "passage": 0,
    }
    # Rows of one table are one place: the other row is not "also relevant".
    assert len(parts) == 1


def test_only_a_documents_table_chunk_is_read_as_rows() -> None:
    text = "Part | Interval\n\nseal | 2000 h\nfilter | 500 h"
    question = "What is the interval of the seal?"
    assert (
        compose(question, table_chunk("rows 2–3", text))[0]["text"]
        == "Part: seal; Interval: 2000 h"
    )
    # Stored before table chunks had their shape: one line of words, read as before.
    assert compose(question, table_chunk("rows 2–3", flat(text))) == []
    # A web result or a block of paragraphs is no table, whatever its lines look like.
    assert compose(question, table_chunk("rows 2–3", text, source="web")) == []
    assert compose(question, table_chunk("Parts, paragraphs 1–2", text)) == []


def test_a_key_value_table_is_not_read_by_its_first_row() -> None:
    """Ingest takes "Weight | 12 kg" for a header; read by it, the next row would say
    "Weight: Supply voltage; 12 kg: 230 V"."""
    html = (
        b"<html><body><h1>Pump P-12</h1><table><tr><td>Weight</td><td>12 kg</td></tr>"
        b"<tr><td>Supply voltage</td><td>230 V</td></tr>"
        b"<tr><td>Maximum torque</td><td>30 Nm</td></tr></table></body></html>"
    )
    (text,) = chunks_of(html, "pump.html")
    parts = compose("What is the supply voltage of pump P-12?", table_chunk("rows 2–3", text))
    assert parts[0]["text"] == "Supply voltage | 230 V"
    parts = compose("How heavy is the pump, what is its weight?", table_chunk("rows 2–3", text))
    assert parts[0]["text"] == "Weight | 12 kg"


def test_a_title_row_a_figure_in_a_header_and_an_invisible_heading_keep_the_header() -> None:
    # A sheet's title over its header: the header is the row under it, in every block.
    csv = (
        b"Parts list,,\nPart,Interval,Torque\n"
        + b"".join(b"part %d,%d h,%d Nm\n" % (n, n * 10, n) for n in range(1, 60))
        + b"gasket,9000 h,99 Nm\n"
    )
    texts = chunks_of(csv, "parts.csv")
    assert len(texts) > 1
    assert all(t.startswith("parts\nParts list\nPart | Interval | Torque\n\npart ") for t in texts)
    (lead, *_) = compose("What is the torque of the gasket?", table_chunk("rows 3–61", texts[-1]))
    assert lead["text"] == "Part: gasket; Interval: 9000 h; Torque: 99 Nm"
    # A header naming a year is a header; only a figure opening it makes a key-value table.
    (text,) = chunks_of(b"Model,Price 2024\nP-100,120 EUR\nP-200,180 EUR\n", "prices.csv")
    (lead, *_) = compose("What is the price of the P-200?", table_chunk("rows 2–3", text))
    assert lead["text"] == "Model: P-200; Price 2024: 180 EUR"
    # A heading that cleaning empties does not pull the header into the head's place.
    html = (
        "<html><body><h1>\u200b</h1><table><tr><th>Part</th><th>Interval</th></tr>"
        "<tr><td>seal</td><td>2000 h</td></tr><tr><td>filter</td><td>500 h</td></tr>"
        "</table></body></html>"
    )
    (text,) = chunks_of(html.encode(), "parts.html")
    (lead, *_) = compose("What is the interval of the seal?", table_chunk("rows 2–3", text))
    assert lead["text"] == "Part: seal; Interval: 2000 h"


def test_a_csv_is_found_by_its_file_name_and_answered_by_the_row_of_the_asked_year(
    bench: Workbench,
) -> None:
    """ "nile.csv" says "year, volume" and no word of the Nile: its name heads its rows, so
    they are found and judged by it. A row without the asked year is not the answer, however
    many words it shares: the row of 1778 had answered "... in 1750?" at 78%."""
    csv = b"year,volume\n" + b"".join(
        b"%d,%d\n" % (y, 400 + (y * 37) % 900) for y in range(1871, 1971)
    )
    ws = bench.create_workspace("rivers", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, csv, "nile.csv").status == "ingested"
    rec = RunService(bench).ask(ws.id, "What was the Nile volume in 1913?")
    assert rec.answer.split("\n\n")[0] == f"year: 1913; volume: {400 + (1913 * 37) % 900} [1]"
    assert rec.citations[0]["place"].startswith("rows ")
    # A CSV without a header row is headed by its name too, and its rows quoted as lines.
    (text,) = chunks_of(b"1913,456\n1914,1102\n1915,990\n", "nile flow.csv")
    assert text == "nile flow\n\n1913 | 456\n1914 | 1102\n1915 | 990"
    (lead,) = compose("What was the Nile flow in 1914?", table_chunk("rows 1–3", text))
    assert lead["text"] == "1914 | 1102"
    # Rows that do not hold the asked figure give no lead: the run pauses rather than guess.
    text = "parts\nPart | Interval\n\nseal | 2000 h\nfilter | 500 h"
    assert compose("What is the interval of part 7?", table_chunk("rows 2–3", text)) == []
    # A sign or a unit does not keep the row out.
    text = "Region | Growth\n\nNorth | 50%\nSouth | 12%"
    (lead,) = compose("Which region grew by 50%?", table_chunk("rows 2–3", text))
    assert lead["text"] == "Region: North; Growth: 50%"
    # A figure inside a word is the figure: "version 3" is asked of "susv3".
    text = "Package | Description\n\nsusv3 | the Single UNIX Specification v3\nsusv4 | v4"
    (lead,) = compose(
        "Which package has the Single UNIX Specification version 3?", table_chunk("rows 2–3", text)
    )
    assert lead["text"].startswith("Package: susv3;")


def test_an_exports_notes_above_the_header_head_its_rows() -> None:
    """A statistics office's CSV opens with lines of notes over the header: read as rows,
    they hid the header and every row was quoted unlabelled."""
    notes = b"Series Id:   LNS14000000Q\n\nSeries title:   (Seas) Unemployment Rate\n\n\n"
    rows = b"".join(
        b"LNS14000000Q,%d,Q0%d,%d.%d\n" % (y, q, q + 3, y % 10)
        for y in range(1990, 2000)
        for q in (1, 2, 3, 4)
    )
    text, *_ = chunks_of(notes + b"Series id,Year,Period,Value,\n" + rows, "unemp.csv", size=400)
    assert text.startswith(
        "unemp\nSeries Id: LNS14000000Q\nSeries title: (Seas) Unemployment Rate\n"
        "Series id | Year | Period | Value\n\nLNS14000000Q | 1990 | Q01 | 4.0\n"
    )
    question = "What was the unemployment rate in period Q03 of 1991?"
    (lead, *_) = compose(question, table_chunk("rows 6–45", text))
    assert lead["text"] == "Series id: LNS14000000Q; Year: 1991; Period: Q03; Value: 6.1"
    # Long notes are a block of their own, cited as such, and do not head every block.
    long = b"Description:," + b"word " * 60 + b"\n"
    texts = [
        c
        for c in chunk_pages(
            parse_bytes(long + b"Series id,Year,Period,Value\n" + rows, "u.csv").pages, 200, 40
        )
    ]
    assert texts[0].place == "notes above the table" and texts[0].text.startswith(
        "Description: word"
    )
    assert all(c.text.startswith("u\nSeries id | Year | Period | Value\n\n") for c in texts[1:])


def test_a_row_that_does_not_fit_its_header_is_quoted_as_its_line() -> None:
    note = (
        b"# Shell tips\n\n| Command | Effect |\n|---|---|\n"
        b"| cat notes.txt \\| wc -l | count the lines of a file |\n"
        b"| Command | Effect |\n| ls -l | list the files with their sizes |\n"
    )
    (text,) = chunks_of(note, "tips.md")
    evidence = table_chunk("Shell tips, table 1, rows 2–4", text)
    parts = compose("How do I count the lines of a file?", evidence)
    # A "|" inside a cell makes three cells under two names: not "Effect: wc -l".
    assert parts[0]["text"] == "cat notes.txt | wc -l | count the lines of a file"
    parts = compose("Which command lists the files with their sizes?", evidence)
    assert parts[0]["text"] == "Command: ls -l; Effect: list the files with their sizes"
    # The header repeated inside the table is no row.
    candidates = {w.text for w in windows("Which command?", evidence)}
    assert "Command: ls -l; Effect: list the files with their sizes" in candidates
    assert not any(t.startswith("Command: Command") for t in candidates)


def test_a_one_column_box_is_prose_not_a_row() -> None:
    """A web page's admonition is a table of one column ("| Note" over its paragraph): its
    sentences are quoted as prose, not as one row holding both."""
    text = "Tips\n| Note\n\nGroups may be added at login. See pam_group(8) for how."
    found = windows("Can groups be added at login?", table_chunk("Tips, table 4, row 2", text))
    assert found and all(
        len(w.sentences[0].text) < len("Groups may be added at login. See") for w in found
    )


def test_a_cited_marker_in_a_cell_stays_text_and_its_row_is_found() -> None:
    text = "Ref | Finding\n\nR-7 | see [2] for the leak\nR-8 | no finding"
    parts = compose("What was found for R-7?", table_chunk("rows 2–3", text))
    assert parts[0]["text"] == "Ref: R-7; Finding: see ［2］ for the leak"
    # The row as stored, so that the source view finds and highlights it.
    line = row_line(parts[0]["text"], text)
    assert line == "R-7 | see [2] for the leak"
    assert highlighted_text(text, [line])[1] == 1


def test_an_empty_cell_keeps_the_columns_in_place() -> None:
    text = "package | size | tool | description\n\nrsync | 776 | | remote copy"
    (part,) = compose("Which package does a remote copy?", table_chunk("rows 2–2", text))
    assert part["text"] == "package: rsync; size: 776; description: remote copy"
    assert row_line(part["text"], text) == "rsync | 776 | | remote copy"


def test_a_wide_row_keeps_its_first_cell_and_the_cells_asked_for() -> None:
    months = ["January", "February", "March", "April", "May", "June", "July"]
    months += ["August", "September", "October", "November", "December"]
    header = ["Station", *(f"{m} {y}" for y in (2019, 2020, 2021, 2022) for m in months)]
    cells = ["Oslo", *(f"{n / 10:.1f} mm" for n in range(48))]
    text = " | ".join(header) + "\n\n" + " | ".join(cells)
    evidence = table_chunk("Rainfall, rows 2–2", text)
    (part,) = compose("How much rain fell in Oslo in March 2021?", evidence)
    assert part["text"] == ("Station: Oslo; … March 2021: 2.6 mm …")
    assert row_line(part["text"], text) == " | ".join(cells)
    # Two columns asked keep both, not a column that names less of the question.
    header = [
        "Part",
        "Price (EUR)",
        "Price (USD)",
        "Weight (kg)",
        *(f"Remark {chr(97 + n % 26)}{n // 26}" for n in range(40)),
    ]
    cells = ["Bolt M6", "0.40", "0.45", "0.01", *(f"n{n}" for n in range(40))]
    text = " | ".join(header) + "\n\n" + " | ".join(cells)
    question = "What are the price in EUR and the weight of the bolt M6?"
    (part,) = compose(question, table_chunk("Parts, rows 2–2", text))
    assert part["text"] == "Part: Bolt M6; Price (EUR): 0.40; … Weight (kg): 0.01 …"


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
    # The row that answers, by its number in the table, drawn as a table (issue 54, point 8).
    assert "**plant.md** — Pumps › Replacement intervals, table 1, row 2" in shown, shown
    table = at.table[0].value
    assert table.loc["row 2"].tolist() == ["seal", "2000 h", "12 Nm"]
    assert list(table.index) == ["row 2", "row 3", "row 4"]
    assert not any(i.value.startswith("The cited row is not") for i in at.caption)
    # The sentence's support quotes the row, not a run of the table cut at a word.
    assert "> seal | 2000 h | 12 Nm" in shown, shown


def test_a_real_web_pages_tables_are_quoted_as_rows_never_as_run_on_text(
    bench: Workbench,
) -> None:
    """The Debian reference's mail chapter: its tables' headers and cells, read as text, had
    run on into an "Also relevant" sentence ("… SASL command | function postfix(1) | Postfix
    control program postconf(1) | …"). Every quoted piece with a cell bar is now a row."""
    from tests.office import office_corpus

    page = office_corpus("html") / "debian-reference-en__ch06.en.html"
    ws = bench.create_workspace("debian", "wordllama")
    assert Ingestor(bench).ingest_path(ws, page).status == "ingested"
    rec = RunService(bench).ask(ws.id, "Which postfix command removes all messages from the queue?")
    cited = {c["n"]: c["text"] for c in rec.citations}
    said = [s for paragraph in sentence_support(rec.answer, rec.citations) for s in paragraph]
    rows = [s for s in said if row_line(s.text, cited[s.cited[0]])]
    assert rows and rows[0] is said[0], rec.answer  # the lead is a row
    assert not [s.text for s in said if " | " in s.text and s not in rows], rec.answer


def test_a_rows_markup_addresses_and_decomposed_words_stay_text(bench: Workbench) -> None:
    """A row quoted with its header is document text like any sentence: its HTML, Markdown link
    and bare address are shown as text, and a word typed with a combining accent is found by
    the same word typed whole."""
    cooling = unicodedata.normalize("NFD", "Kühlmittel")
    note = (
        "# Pumpen\n\n| Teil | Wartung |\n|---|---|\n"
        f"| {cooling} | <b>alle</b> 500 h, [Anleitung](https://evil.example) "
        "https://evil.example |\n"
        "| Dichtung | alle 2000 h |\n"
    ).encode()
    ws = bench.create_workspace("pumpen", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, note, "pumpen.md").status == "ingested"
    rec = RunService(bench).ask(ws.id, "Wartung Kühlmittel Teil?")
    assert rec.answer.startswith("Teil: Kühlmittel; Wartung: <b>alle</b> 500 h"), rec.answer
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception, at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert "\\<b>alle\\</b>" in shown and not re.search(r"(?<!\\)<b>", shown)
    assert "](https://evil" not in shown and "`https://evil.example`" in shown
    # The source view draws the rows as a table, whose cells are Markdown: escaped too.
    cell = str(at.table[0].value.loc["row 2", "Wartung"])
    assert "\\<b>alle\\</b>" in cell and not re.search(r"(?<!\\)<b>", cell), cell
    assert "](https://evil" not in cell and "`https://evil.example`" in cell, cell
    assert not any(i.value.startswith("The cited row is not") for i in at.caption)


def test_a_files_title_is_its_own_name_as_words() -> None:
    """An e-mail's attachment is stored as "memo.eml › figures.xlsx": its title is its own
    name; a "|" in a name would read as a cell bar."""
    assert file_title("statsmodels__nile.csv") == "statsmodels nile"
    assert file_title("memo.eml › q3-figures.xlsx") == "q3 figures"
    assert file_title("Region | Sales.csv") == "Region Sales"
    (text,) = chunks_of(b"North,10\nSouth,12\n", "Region | Sales.csv")
    assert text.startswith("Region Sales\n\nNorth | 10")


def test_a_header_of_names_then_years_is_the_header() -> None:
    """A statistics office's wide table: "Country | Code | 1960 | 1961 | …". Read as a row of
    data (it holds figures), its header was lost, and "… in 1970?" had no row to answer it."""
    years = range(1960, 2014)
    head = "Country,Code," + ",".join(map(str, years)) + "\n"
    rows = [("Iceland", "ISL", 4.2), ("Ireland", "IRL", 3.8), ("Italy", "ITA", 2.4)]
    body = "".join(
        f"{name},{code}," + ",".join(f"{start - (y - 1960) / 20:.3f}" for y in years) + "\n"
        for name, code, start in rows
    )
    text, *_ = chunks_of((head + body).encode(), "fertility.csv")
    assert text.startswith("fertility\nCountry | Code | 1960 | 1961 |")
    question = "What was Iceland's fertility rate in 1970?"
    (lead, *_) = compose(question, table_chunk("rows 2–2", text))
    assert lead["text"] == "Country: Iceland; … 1970: 3.700 …"
    # Two columns asked: the code named, and the year.
    (lead, *_) = compose(
        "What was the fertility rate in 1970 for country code ISL?", table_chunk("rows 2–2", text)
    )
    assert lead["text"] == "Country: Iceland; Code: ISL; … 1970: 3.700 …"
    # Two years in order head a table too; figures that are no years are a first row of data,
    # as before (a review: "Oslo | 12 | 15" had become the header and Oslo's row was lost).
    (text,) = chunks_of(b"Country,2019,2020\nNorway,5.35,5.38\nSweden,10.2,10.3\n", "pop.csv")
    (lead,) = compose("What was the population of Norway in 2020?", table_chunk("rows 2–3", text))
    assert lead["text"] == "Country: Norway; 2019: 5.35; 2020: 5.38"
    for first in (b"Oslo,12,15", b"1,Oslo,12", b"Oslo,1200,1350,1400"):
        (text,) = chunks_of(first + b"\nBergen,20,22\n", "rates.csv")
        assert text.startswith("rates\n\n" + first.decode().replace(",", " | ") + "\n")


def test_a_row_named_by_the_question_is_kept_though_the_rest_describes_the_data() -> None:
    """ "In the FBI's state-by-state crime statistics, what was the violent crime rate in
    Texas?": most of its words describe the data set and no row uses them, so the chunk whose
    row holds "Texas" fell under both bars and was dropped, though ranked first."""
    states = ["Alabama", "Alaska", "Arizona", "Ohio", "Oregon", "Texas", "Utah", "Vermont"]
    csv = b"state,violent,murder\n" + b"".join(
        b"%s,%d.%d,%d.%d\n" % (s.encode(), 200 + 37 * i, i, 2 + i, i) for i, s in enumerate(states)
    )
    (text,) = chunks_of(csv, "statecrime.csv")
    found = Candidate(
        "w/d/000001", text, {"place": "rows 2–9"}, dense=0.12, coverage=0.2, keyword_rank=0
    )
    question = (
        "In the FBI's state-by-state crime statistics, what was the violent crime rate in Texas?"
    )
    assert kept_by(found, "hybrid", 0.27, question) == "row"
    assert kept_by(found, "hybrid", 0.27, question.replace("Texas", "Nevada")) is None
    assert kept_by(found, "dense", 0.27, question) is None
    shown = kept_because({"kept_by": "row", "score": 0.12, "keyword_rank": 1, "coverage": 0.2})
    assert shown.startswith("kept for the table row the question names (keyword rank 1, 20%")
    (lead,) = compose(question, table_chunk("rows 2–9", text))
    assert lead["text"] == "state: Texas; violent: 385.5; murder: 7.5"
    # Prose is never kept by it, whatever it names.
    prose = replace(found, metadata={"place": "section 2, paragraphs 1–3"}, text="Texas " * 5)
    assert kept_by(prose, "hybrid", 0.27, question) is None
    # A name pasted with a combining accent names its row as well.
    zurich = "crime\nstate | violent\n\nZürich | 300\nBern | 200"
    decomposed = "What is the violent crime rate in Zu\u0308rich?"
    assert keyed(table_chunk("rows 2–3", zurich)[0], decomposed)
    # A possessive names the row as well.
    assert kept_by(found, "hybrid", 0.27, "What was Texas's violent crime rate?") == "row"
    # A version's "3.10" is no "3.1": no row holds it, and the run pauses rather than guess.
    text = "releases\nversion | released\n\n3.9 | 2020-10-05\n3.10 | 2021-10-04"
    assert compose("When was version 3.1 released?", table_chunk("rows 2–3", text)) == []
    # A fixed format's padding is no part of the figure: "aged 54.4" is the row of 54.400000.
    text = "heart\nsurvival | age\n\n339.000000 | 54.400000\n15.000000 | 42.300000"
    question = "What was the survival time of the patient aged 54.4?"
    (lead,) = compose(question, table_chunk("rows 2–3", text))
    assert lead["text"] == "survival: 339.000000; age: 54.400000"
