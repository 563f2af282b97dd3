"""The research command line prints answers, not libraries' debug chatter."""

from __future__ import annotations

import pytest

from ingest.pipeline import Ingestor
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
