"""Ranking and totals over a whole table (``masis_core.answers.aggregate``): computed over
every row of the sheet (pandas), rows of totals left out, the row named and cited, with a
confidence that is the computation's."""

from __future__ import annotations

import io

import openpyxl

from ingest.pipeline import Ingestor
from masis_core.answers.aggregate import Whole, compute
from masis_core.answers.offline import extract_answer
from masis_core.answers.rows import parse, row_line
from masis_core.answers.support import cited_sentences, sentence_support
from masis_core.graph.nodes.researcher import kept_by
from masis_core.retrieval.hybrid import Candidate
from masis_core.services.runs import RunService
from masis_core.state import Evidence
from masis_core.workspaces.workbench import Workbench

# The 2016 Summer Olympics medal table as an ONLYOFFICE sample sheet lays it out: a title
# row, the header, a row per country (as the sheet writes them: "USA"), and a totals row.
MEDALS_2016 = [
    ("USA", 46, 37, 38),
    ("Great Britain", 27, 23, 17),
    ("China", 26, 18, 26),
    ("Russia", 19, 18, 19),
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
    ("Jamaica", 6, 3, 2),
    ("Croatia", 5, 3, 2),
    ("Cuba", 5, 2, 4),
    ("New Zealand", 4, 9, 5),
    ("Canada", 4, 3, 15),
]
MEDALS_2012 = [
    ("USA", 46, 29, 29),
    ("China", 38, 27, 23),
    ("Great Britain", 29, 17, 19),
    ("Russia", 24, 26, 32),
    ("South Korea", 13, 8, 7),
    ("Germany", 11, 19, 14),
]
MOST_BRONZE = "Which country won the most bronze medals?"


def medal_sheet(year: int, rows: list[tuple[str, int, int, int]]) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Medals"
    sheet.append([f"{year} Summer Olympics medal table"])
    sheet.append(["Rank", "Country", "Gold", "Silver", "Bronze", "Total"])
    for rank, (country, *won) in enumerate(rows, start=1):
        sheet.append([rank, country, *won, sum(won)])
    sums = [sum(r[k] for r in rows) for k in (1, 2, 3)]
    sheet.append([None, "Total:", *sums, sum(sums)])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def medals(bench: Workbench, *years: int) -> str:
    ws = bench.create_workspace("olympics", "wordllama")
    tables = {2016: MEDALS_2016, 2012: MEDALS_2012}
    for year in years:
        data = medal_sheet(year, tables[year])
        assert Ingestor(bench).ingest_bytes(ws, data, f"medals{year}.xlsx").status == "ingested"
    return ws.id


def test_the_most_is_computed_over_every_row_and_the_row_is_cited(bench: Workbench) -> None:
    """Issue 51: "Which country won the most bronze medals?" led with the totals row
    ("Country: Total:; … Bronze: 251") at 68%."""
    rec = RunService(bench).ask(medals(bench, 2016), MOST_BRONZE)
    lead = rec.answer.split("\n\n")[0]
    assert lead.startswith("USA has the most Bronze: 38. [1] Rank: 1; Country: USA;"), rec.answer
    assert "Country: Total:" not in lead
    # Computed, one named column of one table: answered without review, and said so.
    assert rec.status == "completed" and rec.confidence is not None and rec.confidence >= 0.9
    critic = next(e for e in rec.trace if e.get("node") == "critic")
    assert critic["confidence_model"] == "computed"
    # Row-level citation: the source view highlights the row (and the header it is read by).
    cited = cited_sentences(sentence_support(rec.answer, rec.citations))[1]
    assert "1 | USA | 46 | 37 | 38 | 121" in cited
    assert not any("Total:" in piece for piece in cited)
    assert rec.citations[0]["filename"] == "medals2016.xlsx"


def test_a_total_leaves_the_totals_row_out(bench: Workbench) -> None:
    rec = RunService(bench).ask(medals(bench, 2016), "What is the total number of bronze medals?")
    assert rec.answer.startswith("Total Bronze over the table's 20 rows: 226;"), rec.answer
    assert rec.status == "completed"  # the computed figure is backed, not flagged


def test_two_tables_compete_and_the_answer_pauses(bench: Workbench) -> None:
    """Two medal tables both rank by Bronze: the computation is sure of neither question."""
    rec = RunService(bench).ask(medals(bench, 2016, 2012), MOST_BRONZE)
    assert rec.answer.split(" [")[0] in {
        "USA has the most Bronze: 38.",
        "Russia has the most Bronze: 32.",
    }
    assert rec.status == "needs_human" and rec.confidence is not None and rec.confidence < 0.65


def chunk(text: str, place: str = "Medals, rows 3–5") -> Evidence:
    return Evidence(chunk_id="w/d/000001", doc_id="d", place=place, text=text, source="kb")


HEAD = "medals: Medals\nRank | Country | Gold | Silver | Bronze | Total\n\n"


def test_a_ranking_question_is_never_answered_by_the_row_that_matched() -> None:
    """No column named ("medals"): nothing is computed, and the one retrieved row that
    matched the question's words is not its answer."""
    ev = [chunk(HEAD + "| Total: | 99 | 78 | 81 | 258")]
    assert extract_answer("Which country won the most medals?", ev) == []
    # A question that names its row is a lookup, answered by that row as before.
    ev = [chunk(HEAD + "15 | Kenya | 6 | 6 | 1 | 13\n16 | Jamaica | 6 | 3 | 2 | 11")]
    parts = extract_answer("How many bronze medals did Kenya win?", ev)
    assert parts[0]["text"].startswith("Rank: 15; Country: Kenya;")


def test_ties_an_unlabelled_total_and_a_guess() -> None:
    text = (
        HEAD
        + "1 | USA | 46 | 37 | 38 | 121\n2 | China | 26 | 18 | 38 | 82\n3 | | 72 | 55 | 76 | 203"
    )
    whole = Whole("d", parse(text), ["c"] * 3, {"c": (text, {})})  # type: ignore[arg-type]
    done = compute(MOST_BRONZE, whole)
    assert done is not None and done["statement"] == "USA and China have the most Bronze: 38."
    assert done["left_out"] == 1 and done["certain"]
    assert row_line(done["row"], text) == "1 | USA | 46 | 37 | 38 | 121"
    assert compute("Which country has the lowest gold or silver count?", whole)["certain"] is False  # type: ignore[index]


def test_a_figure_in_the_question_names_a_row_not_an_aggregate() -> None:
    """Held-out table questions: "the grade point average of student 1" had been answered
    "Average GRADE over the table's 18 rows" at 95%; a figure the question gives names the
    row it asks about."""
    text = "spector\nOBS | GPA | GRADE\n\n1 | 2.66 | 0\n2 | 2.89 | 0\n3 | 3.28 | 1"
    whole = Whole("d", parse(text), ["c"] * 3, {"c": (text, {})})  # type: ignore[arg-type]
    question = "What was the grade point average of student 1?"
    assert compute(question, whole) is None
    assert compute("What was the average grade?", whole) is not None
    parts = extract_answer(question, [chunk(text, "rows 2–4")])
    assert parts[0]["text"] == "OBS: 1; GPA: 2.66; GRADE: 0"


def test_how_many_of_a_row_is_that_rows_figure() -> None:
    """Held-out table questions: "In Shanghai, how many smokers had cancer?" had been
    answered "The table lists 301 rows." (another file's count) at 95%."""
    text = "china smoking\nLocation | smoking_yes_cancer_yes\n\nBeijing | 126\nShanghai | 908"
    parts = extract_answer("In Shanghai, how many smokers had cancer?", [chunk(text, "rows 2–3")])
    assert parts[0]["text"] == "Location: Shanghai; smoking_yes_cancer_yes: 908"
    whole = Whole("d", parse(text), ["c"] * 2, {"c": (text, {})})  # type: ignore[arg-type]
    assert compute("How many smokers had cancer?", whole) is None  # counts nothing it names
    assert compute("How many locations are listed?", whole)["statement"] == (  # type: ignore[index]
        "The table lists 2 rows."
    )


def test_a_table_the_question_ranks_over_is_kept_under_the_bar() -> None:
    """The ranking bench: "Which House committee had the largest staff?" paused with no
    evidence; the committee table was in the keyword list, its words too few of the
    question's to pass the bar."""
    text = (
        "statsmodels committee\nCOMMITTEE | BILLS104 | SIZE | SUBS | STAFF\n\n"
        "Appropriations | 6 | 58 | 13 | 109\nBudget | 23 | 42 | 0 | 39\nRules | 44 | 13 | 2 | 25"
    )
    found = Candidate(
        "w/d/000001", text, {"place": "rows 2–4"}, dense=0.12, coverage=0.3, keyword_rank=3
    )
    assert kept_by(found, "hybrid", 0.27, "Which House committee had the largest staff?") == "row"
    # Neither a column it names nor the rows' kind: dropped as before.
    assert kept_by(found, "hybrid", 0.27, "Which agency had the largest staff?") is None
    assert kept_by(found, "hybrid", 0.27, "Which House committee was the oldest?") is None
