"""The research command line prints answers, not libraries' debug chatter."""

from __future__ import annotations

import pytest

from ingest.pipeline import Ingestor
from masis_core.__main__ import print_record
from masis_core.services.records import RunRecord
from tests.proc import run_module
from tests.texts import PUMP


@pytest.mark.parametrize("verbose", [[], ["--verbose"]])
def test_ask_prints_no_library_debug_lines(bench, settings, verbose) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    Ingestor(bench).ingest_bytes(ws, PUMP.encode(), "pump.txt")
    # The first use in a process builds the keyword index: bm25s logs that at DEBUG.
    proc = run_module(
        ["masis_core", *verbose, "ask", "-w", "plant", "How often is the pump inspected?"],
        settings.data_dir,
    )
    assert proc.returncode == 0, proc.stderr
    assert "500 operating hours" in proc.stdout
    lines = (proc.stdout + proc.stderr).splitlines()
    assert not [line for line in lines if line.startswith("DEBUG") or "bm25s" in line]


def test_a_citation_prints_its_place_as_the_report_does(capsys: pytest.CaptureFixture) -> None:
    """A Word passage is cited by heading and paragraph, not as "page 7" for its block 7;
    a web result by its title and address (``services.reports.citation_source``)."""
    word = {"n": 1, "filename": "report.docx", "page": 7, "place": "3 Methods, paragraph 2"}
    web = {"n": 2, "filename": "Pump care", "url": "https://example.org/pumps", "page": 0}
    rec = RunRecord("r1", "ws", "How?", "offline", "completed", "An answer [1][2]", [word, web])
    print_record(rec)
    out = capsys.readouterr().out
    assert "[1] report.docx, 3 Methods, paragraph 2" in out
    assert "page 7" not in out
    assert "[2] Pump care — https://example.org/pumps" in out
