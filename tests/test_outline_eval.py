"""Evaluate this workspace: questions from a real PDF's outline (or its numbered headings, or
an uploaded file), page-hit@k / MRR / keep rate per mode, stored; the CLI and the inspector."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.outline import (
    EvaluationStore,
    load_question_file,
    run_evaluation,
    workspace_questions,
)
from ingest.outline import detect_headings
from ingest.pipeline import Ingestor
from masis_core.__main__ import main
from masis_core.errors import InputError
from masis_core.services.runs import RunService
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.pdfs import filler, make_outlined_pdf, make_pdf
from tests.test_markup import PLAIN, rendered_text
from tests.texts import BOILER, PUMP, REVENUE_A

# Each section fills its page, so every page is a chunk of its own (no chunk spans two).
SECTIONS = [
    ("Steam boiler descaling", f"{BOILER} {filler('boiler', 300)}"),
    ("Hydraulic pump inspection", f"{PUMP} {filler('pump', 300)}"),
    ("Northwind Traders revenue", f"{REVENUE_A} {filler('revenue', 300)}"),
]


@pytest.fixture
def library(bench: Workbench) -> Workspace:
    ws = bench.create_workspace("library", "wordllama")
    ingestor = Ingestor(bench)
    assert ingestor.ingest_bytes(ws, make_outlined_pdf(SECTIONS), "manual.pdf").status == "ingested"
    plain = make_outlined_pdf([("Ledger keeping rules", filler("ledger", 300))], outline=False)
    assert ingestor.ingest_bytes(ws, plain, "ledger.pdf").status == "ingested"
    assert ingestor.ingest_bytes(ws, b"Notes without structure.", "notes.txt").status == "ingested"
    return ws


def test_questions_come_from_the_outline_or_the_headings(bench: Workbench, library) -> None:
    questions, notes = workspace_questions(bench, library.id)
    by_doc = {(q["doc"], q["question"]): (q["gold_page"], q["source"]) for q in questions}
    assert by_doc == {
        ("manual.pdf", "Steam boiler descaling"): (1, "outline"),
        ("manual.pdf", "Hydraulic pump inspection"): (2, "outline"),
        ("manual.pdf", "Northwind Traders revenue"): (3, "outline"),
        ("ledger.pdf", "Ledger keeping rules"): (1, "headings"),
    }
    assert notes == []


def test_a_contents_page_gives_no_headings(tmp_path: Path) -> None:
    topics = ["Boilers", "Pumps", "Valves", "Seals", "Ledgers", "Contractors", "Safety", "Rooms"]
    contents = "\n".join(f"{n} About {t}" for n, t in enumerate(topics, start=1))
    path = tmp_path / "toc.pdf"
    path.write_bytes(make_pdf([contents, "1 About Boilers\nBody text of the chapter."]))
    assert [(h.title, h.page) for h in detect_headings(path)] == [("About Boilers", 2)]


@pytest.mark.usefixtures("backend")
def test_evaluation_per_mode_is_measured_and_stored(bench: Workbench, library) -> None:
    report = run_evaluation(bench, library.id, k=1)
    assert report["questions"] == 4
    assert report["sources"] == {"outline": 3, "headings": 1}
    assert set(report["per_mode"]) == {"dense", "bm25", "hybrid"}
    # four pages on four topics: each heading's own page comes first
    assert report["per_mode"]["hybrid"] == {"page_hit@1": 1.0, "mrr": 1.0, "keep_rate": 1.0}
    assert report["per_mode"]["bm25"]["page_hit@1"] == 1.0
    for row in report["results"]:
        assert set(row["ranks"]) == {"dense", "bm25", "hybrid"}
    store = EvaluationStore(bench)
    (summary,) = store.list(library.id)
    assert summary["eval_id"] == report["eval_id"] and summary["source"] == "outline"
    assert store.get(report["eval_id"])["per_mode"] == report["per_mode"]  # type: ignore[index]
    RunService(bench).delete_workspace(library.id)
    assert store.list(library.id) == []


def test_a_question_file_replaces_the_outline(bench: Workbench, library) -> None:
    csv = (
        b"doc,question,gold_page\n"
        b"manual.pdf,At what pressure does the relief valve open?,2\n"
        b"manual.pdf,How often is the boiler descaled?,3\n"  # a wrong gold page: a miss
        b"elsewhere.pdf,Anything?,1\n"
    )
    questions = load_question_file("mine.csv", csv)
    report = run_evaluation(bench, library.id, k=1, questions=questions)
    assert report["source"] == "file" and report["questions"] == 2
    assert report["unknown_documents"] == ["elsewhere.pdf"]
    assert report["per_mode"]["hybrid"]["page_hit@1"] == 0.5


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("q.csv", b"doc,question\nm.pdf,What?\n", "missing: gold_page"),
        ("q.csv", b"doc,question,gold_page\nm.pdf,What?,two\n", "q.csv, line 2: 'gold_page'"),
        ("q.json", b'[{"doc": "m.pdf", "question": "What?"}]', "q.json, item 1: needs"),
        ("q.json", b"{not json", "not valid JSON"),
        ("q.json", b"[]", "holds no questions"),
        ("q.csv", b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_a_bad_question_file_says_what_and_where(name: str, data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_question_file(name, data)


def test_no_outline_anywhere_is_a_clear_error(bench: Workbench) -> None:
    ws = bench.create_workspace("flat", "wordllama")
    Ingestor(bench).ingest_bytes(ws, make_pdf([PUMP]), "flat.pdf")
    with pytest.raises(InputError, match="upload a JSON or CSV question file"):
        run_evaluation(bench, ws.id)


def test_cli_eval_outline_prints_questions_and_per_mode(bench, library, capsys) -> None:
    assert main(["eval", "outline", "--workspace", library.id, "--k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 4 and "results" not in out
    assert set(out["per_mode"]) == {"dense", "bm25", "hybrid"}
    assert set(out["per_mode"]["dense"]) == {"page_hit@3", "mrr", "keep_rate"}
    assert main(["eval", "outline", "--workspace", library.id]) == 0
    text = capsys.readouterr().out
    assert "4 questions (3 from outline, 1 from headings)" in text and "hybrid" in text
    assert main(["eval", "outline"]) == 2
    assert "needs --workspace" in capsys.readouterr().err


def test_inspector_evaluates_the_workspace_as_a_job(bench: Workbench, library) -> None:
    at = fresh_app().run().switch_page("pages/inspector.py").run()
    assert not at.exception, at.exception
    assert any("No evaluation of this workspace yet" in i.value for i in at.info)
    assert any("No runs in this workspace yet" in i.value for i in at.info)
    at.button(key="FormSubmitter:evaluate-Evaluate this workspace").click().run()
    at = settle(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["hybrid page-hit@5"] == "1.000"
    assert {"dense page-hit@5", "bm25 page-hit@5"} <= set(metrics)
    assert len(at.get("plotly_chart")) == 3  # one rank chart per mode
    assert any("4 questions (3 from outline, 1 from headings)" in c.value for c in at.caption)
    # a second evaluation, another day: both listed, with the change and the history chart
    at.button(key="FormSubmitter:evaluate-Evaluate this workspace").click().run()
    at = settle(at)
    history = at.dataframe[-1].value
    assert len(history) == 2 and list(history["questions"]) == [4, 4]
    assert len(at.get("plotly_chart")) == 4


def test_inspector_says_why_an_evaluation_could_not_run(bench: Workbench) -> None:
    ws = bench.create_workspace("flat", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"Plain notes about the pump and its seals.", "notes.txt")
    at = fresh_app().run().switch_page("pages/inspector.py").run()
    at.button(key="FormSubmitter:evaluate-Evaluate this workspace").click().run()
    at = settle(at)
    (error,) = at.error
    assert error.value.startswith("The evaluation failed: no questions could be made")
    assert "upload a JSON or CSV question file" in error.value
    assert any("No evaluation of this workspace yet" in i.value for i in at.info)


def test_inspector_evaluates_an_uploaded_question_file(bench: Workbench, library) -> None:
    submit = "FormSubmitter:evaluate-Evaluate this workspace"
    at = fresh_app().run().switch_page("pages/inspector.py").run()
    at.radio[0].set_value("file")
    at.file_uploader[0].set_value(("mine.csv", b"doc,question\nmanual.pdf,What?\n", "text/csv"))
    at.button(key=submit).click().run()
    assert not at.exception, at.exception
    (error,) = at.error
    shown = rendered_text(error.value)[1]
    assert "mine.csv: the CSV header needs the columns" in shown  # nothing started
    # The file's name is the analyst's, not ours: in the message it is text, not Markdown.
    hostile = "**[q](https://evil.example)**.csv"
    at.file_uploader[0].set_value((hostile, b"doc,question\nmanual.pdf,What?\n", "text/csv"))
    at.button(key=submit).click().run()
    (error,) = at.error
    types, text = rendered_text(error.value)
    assert types <= PLAIN, types
    assert text.startswith(hostile + ": the CSV header needs the columns")
    good = b"doc,question,gold_page\nmanual.pdf,At what pressure does the relief valve open?,2\n"
    at.file_uploader[0].set_value(("mine.csv", good, "text/csv"))
    at.button(key=submit).click().run()
    at = settle(at)
    assert not at.error
    assert any("1 questions (1 from file)" in c.value for c in at.caption)
    assert {m.label: m.value for m in at.metric}["hybrid page-hit@5"] == "1.000"


# Nine outline entries: two share a title (no single page to find), seven can be asked.
MANY = [
    ("Steam boiler descaling", f"{BOILER} {filler('boiler', 300)}"),
    ("Hydraulic pump inspection", f"{PUMP} {filler('pump', 300)}"),
    ("Northwind Traders revenue", f"{REVENUE_A} {filler('revenue', 300)}"),
    ("Cooling tower water treatment", filler("cooling tower", 300)),
    ("Safety notes", filler("safety", 300)),
    ("Compressor oil change", filler("compressor", 300)),
    ("Safety notes", filler("hazard", 300)),
    ("Ledger keeping rules", filler("ledger", 300)),
    ("Fire pump testing", filler("sprinkler", 300)),
]


@pytest.fixture
def many(bench: Workbench) -> Workspace:
    ws = bench.create_workspace("many", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, make_outlined_pdf(MANY), "plant.pdf").status == (
        "ingested"
    )
    return ws


@pytest.mark.usefixtures("backend")
def test_the_evaluation_says_which_entries_it_asked_and_adds_a_harder_variant(
    bench: Workbench, many: Workspace, capsys
) -> None:
    """It asked 20 of 57 entries without saying so, and only the headings verbatim, whose
    "page-hit@5 1.000" overstates what a typed question gets (issue 54, point 6)."""
    report = run_evaluation(bench, many.id, k=5, per_doc=5)
    assert report["questions"] == 5 and report["outline_entries"] == 9
    assert report["label"] == "on the document's own headings"
    assert report["notes"] == [
        "plant.pdf: 5 of its 9 outline entries asked (at most 5 per document, spread evenly "
        "over it; 2 repeat a title of the document or have no word of three letters, so have "
        "no single page to find)"
    ]
    harder = report["harder"]
    assert harder["label"] == "on the headings cut to their content words, shuffled"
    assert harder["questions"] == 5 and set(harder["per_mode"]) == {"dense", "bm25", "hybrid"}
    for row in harder["results"]:  # the same words, not the same question
        assert row["question"] != row["heading"]
        assert sorted(row["question"].lower().split()) == sorted(
            w for w in row["heading"].lower().split() if w not in {"of", "the"}
        )
    stored = EvaluationStore(bench).get(report["eval_id"])
    assert stored["harder"]["per_mode"] == harder["per_mode"]
    assert main(["eval", "outline", "--workspace", many.id]) == 0
    text = capsys.readouterr().out
    assert "7 of 9 outline entries asked" in text
    assert "on the document's own headings" in text
    assert "harder, 7 questions on the headings cut to their content words, shuffled" in text


def test_the_inspector_labels_each_figure_and_the_entries_left_out(
    bench: Workbench, many: Workspace
) -> None:
    at = fresh_app().run().switch_page("pages/inspector.py").run()
    at.button(key="FormSubmitter:evaluate-Evaluate this workspace").click().run()
    at = settle(at)
    assert not at.exception, at.exception
    shown = [m.value for m in at.markdown]
    assert any(
        m.startswith("**page-hit@5 on the document's own headings** (7 of 9 outline entries")
        for m in shown
    ), shown
    assert any(
        m.startswith("**Harder: page-hit@5 on the headings cut to their content words, shuffled")
        for m in shown
    )
    metrics = {m.label: m.value for m in at.metric}
    assert {"hybrid page-hit@5", "hybrid page-hit@5, harder"} <= set(metrics)
    assert any("7 of its 9 outline entries asked" in c.value for c in at.caption)
