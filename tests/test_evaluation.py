"""``eval governance``: per-case records, the calibration block and the reliability table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation import governance as evaluation
from masis_core.__main__ import main

CASES = [
    {
        "id": "ups-answer",
        "category": "grounding",
        "query": "How often must the hydraulic pump be inspected?",
        "contexts": [
            "The hydraulic pump must be inspected every 500 operating hours by a technician. "
            "The technician checks the seals and the relief valve during each inspection."
        ],
        "expected_mode": "answer",
    },
    {
        "id": "off-topic",
        "category": "abstention",
        "query": "What is the recipe for beef stroganoff?",
        "contexts": [
            "The mitochondria is the powerhouse of the cell, producing ATP.",
            "Photosynthesis occurs in the chloroplasts of plant cells.",
        ],
        "expected_mode": "abstain",
    },
    {
        "id": "two-camps",
        "category": "dispute",
        "query": "Does the sweetener cause weight gain?",
        "contexts": [
            "A 2023 systematic review of 56 studies found that long-term use of the sweetener "
            "increases body weight and recommended against its use for weight control.",
            "A 2024 randomised trial of 1,548 adults found that the sweetener reduces body "
            "weight and criticized the review for relying on observational data.",
        ],
        "expected_mode": "dispute",
    },
]


def records() -> list[dict]:
    return [
        {"id": "a", "category": "x", "expected": "answer", "got": "answer", "confidence": 0.9},
        {"id": "b", "category": "x", "expected": "answer", "got": "abstain", "confidence": 0.3},
        {"id": "c", "category": "y", "expected": "abstain", "got": "abstain", "confidence": None},
        {"id": "d", "category": "y", "expected": "dispute", "got": "answer", "confidence": 0.8},
    ]


def test_summary_has_records_modes_categories_and_calibration() -> None:
    report = evaluation.summarise(records(), "offline")
    assert report["cases"] == 4
    assert report["accuracy"] == 0.5
    assert report["per_mode"]["answer"] == {"cases": 2, "accuracy": 0.5}
    assert report["per_category"]["y"] == {"cases": 2, "accuracy": 0.5}
    assert report["records"][0] == records()[0]
    cal = report["calibration"]
    # c stopped before the critic (no confidence); d is a dispute, outside what the
    # confidence estimates (whether the evidence answers the question).
    assert cal["count"] == 2
    assert len(cal["bins"]) == 10
    assert set(cal["bins"][0]) == {"lo", "hi", "count", "mean_confidence", "accuracy"}
    # Answering was right for a (0.9) and b (0.3), each in its own bin: (0.1 + 0.7) / 2.
    assert cal["ece"] == pytest.approx(0.4, abs=1e-3)
    assert report["calibration_answered"]["count"] == 1  # a
    strict = report["calibration_answered_with_disputes"]
    assert strict["count"] == 2  # a and d were answered; d, a missed dispute, wrongly
    assert strict["ece"] == pytest.approx((0.1 + 0.8) / 2, abs=1e-3)


def test_the_headline_calibration_error_counts_every_answered_case() -> None:
    """The figure a report leads with is over every answered case: d, answered where the right
    call was a dispute, is a wrong answer at 0.8. The figure without disputes follows, named."""
    report = evaluation.summarise(records(), "offline")
    assert list(report)[:4] == ["cases", "engine", "accuracy", "calibration_error"]
    headline = report["calibration_error"]
    assert headline["count"] == 2
    assert headline["ece"] == pytest.approx((0.1 + 0.8) / 2, abs=1e-3)
    assert "dispute" in headline["over"]
    without = report["calibration_error_without_disputes"]
    assert (without["count"], without["ece"]) == (1, pytest.approx(0.1, abs=1e-3))
    text = evaluation.format_report(report).splitlines()
    assert text[1].startswith("calibration error (ECE) over every answered case, disputes")
    assert "0.450" in text[1] and "2 answered" in text[1]
    assert text[2].startswith("without the disputes")
    assert "0.100" in text[2]


def test_text_report_prints_a_reliability_table() -> None:
    text = evaluation.format_report(evaluation.summarise(records(), "offline"))
    assert "expected calibration error" in text
    assert "mean conf" in text and "accuracy" in text
    assert "0.8 – 0.9" in text
    assert "per category" in text


def test_limit_spreads_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    case = {"query": "q", "contexts": [], "expected_mode": "answer"}
    path.write_text("".join(json.dumps({**case, "id": i}) + "\n" for i in range(100)))
    picked = [c["id"] for c in evaluation.load_cases(path, 4)]
    assert picked == [0, 25, 50, 75]
    assert len(evaluation.load_cases(path)) == 100


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["eval", "governance", "--cases", "MISSING"], "cannot read the cases file"),
        (["eval", "governance", "--cases", "NOTES"], "line 2: not a JSON object"),
        (["eval", "governance", "--cases", "PARTIAL"], "line 1: needs 'query', 'contexts'"),
        (["eval", "governance", "--cases", "NOTES", "--limit", "0"], "give at least 1"),
        (["eval", "retrieval", "--dataset", "DIR"], "not a BEIR-layout folder: it has no"),
        (["eval", "pages", "--pdfs", "MISSING", "--questions", "NOTES"], "is not a folder"),
        (["eval", "pages", "--pdfs", "DIR", "--questions", "NOTES"], "cannot read the question"),
        (["eval", "outline", "-w", "x", "--k", "-1"], "give at least 1"),
        (["ask", "-w", "x", "q", "--max-retries", "9"], "give 0 to 5"),
        (["calibrate", "-w", "x", "--questions", "NOTES", "--keep", "2"], "up to 1"),
    ],
)
def test_bad_arguments_and_files_are_one_line_errors_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"query": "q", "contexts": [], "expected_mode": "answer"}\nplain text\n')
    (tmp_path / "partial.jsonl").write_text('{"query": "q"}\n')
    names = {
        "MISSING": str(tmp_path / "missing"),
        "NOTES": str(notes),
        "PARTIAL": str(tmp_path / "partial.jsonl"),
        "DIR": str(tmp_path),
    }
    try:
        code = main([names.get(a, a) for a in args])
    except SystemExit as exit_:  # argparse's own refusal
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err and "Traceback" not in err


def test_failed_cases_are_counted_with_their_reasons_not_as_low_accuracy() -> None:
    records = [
        {
            "id": n,
            "category": "c",
            "expected": "answer",
            "got": "error",
            "confidence": None,
            "error": "Ollama is not reachable at http://127.0.0.1:9",
        }
        for n in range(3)
    ]
    report = evaluation.summarise(records, "ollama")
    assert report["errors"] == {
        "count": 3,
        "reasons": {"Ollama is not reachable at http://127.0.0.1:9": 3},
    }
    text = evaluation.format_report(report)
    assert "3 of 3 cases failed to run; the reasons:" in text
    assert "3 × Ollama is not reachable at http://127.0.0.1:9" in text


@pytest.mark.slow
def test_eval_governance_json_end_to_end(tmp_path: Path, capsys) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    assert main(["eval", "governance", "--cases", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] == 3
    got = {r["id"]: r for r in report["records"]}
    assert set(got) == {"ups-answer", "off-topic", "two-camps"}
    for r in report["records"]:
        assert set(r) == {"id", "category", "expected", "got", "confidence"}  # no "error"
        assert r["got"] in {"answer", "abstain", "dispute"}
    assert got["ups-answer"]["got"] == "answer"
    assert got["ups-answer"]["confidence"] >= 0.65
    assert got["off-topic"]["got"] == "abstain"
    assert got["two-camps"]["got"] == "dispute"
    assert {"ece", "bins", "count"} <= set(report["calibration"])


def test_evaluation_runs_in_its_own_scratch_store_on_a_team_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a host pointed at the team's servers, an evaluation's throwaway workspaces must not
    land in the shared registry or Chroma: its workbench ignores both settings."""
    monkeypatch.setenv("MASIS_POSTGRES_URL", "postgresql://nobody@127.0.0.1:9/shared")
    monkeypatch.setenv("MASIS_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("MASIS_CHROMA_PORT", "9")
    ((case, rec),) = list(evaluation.governance_runs(CASES[:1]))
    assert case["id"] == "ups-answer"
    assert evaluation.classify(rec) == "answer"
