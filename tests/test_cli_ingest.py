"""``python -m ingest`` as DESIGN §6 describes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.__main__ import main
from masis_core.config import Settings
from masis_core.errors import WorkspaceError
from masis_core.workspaces.workbench import Workbench
from tests.conftest import FIXTURES
from tests.pdfs import filler, make_pdf
from tests.proc import run_module


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.pdf").write_bytes(make_pdf([filler("alpha", 250), filler("beta", 250)]))
    (docs / "sub" / "b.pdf").write_bytes(make_pdf([filler("gamma", 250)]))
    (docs / "notes.md").write_text(filler("delta", 100))
    (docs / "ignored.png").write_bytes(b"not looked at")
    return docs


def test_folder_ingest_json_then_duplicates(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--workspace", "demo", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["totals"] == {
        "files": 3,
        "ingested": 3,
        "duplicate": 0,
        "failed": 0,
        "chunks": out["totals"]["chunks"],
    }
    record = next(r for r in out["files"] if r["file"] == "a.pdf")
    assert set(record) >= {"file", "doc_id", "status", "pages", "chunks", "error"}
    assert (record["status"], record["pages"]) == ("ingested", 2)

    assert main(["--workspace", "demo", str(folder), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in again["files"]] == ["duplicate"] * 3
    assert again["totals"]["chunks"] == 0
    bench = Workbench(settings)
    assert bench.store.count("wordllama", "demo") == out["totals"]["chunks"]


def test_a_failed_file_sets_exit_status_1_and_the_rest_is_ingested(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = FIXTURES / "corrupt.pdf"
    code = main(["--workspace", "demo", str(broken), str(folder / "a.pdf")])
    out = capsys.readouterr().out
    assert code == 1
    assert "failed     corrupt.pdf: corrupt:" in out
    assert "ingested   a.pdf: 2 pages" in out
    assert [d.filename for d in Workbench(settings).documents("demo")] == ["a.pdf"]


def test_embedder_mismatch_exits_2(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-w", "demo", "--embedder", "wordllama", str(folder / "a.pdf")]) == 0
    code = main(["-w", "demo", "--embedder", "ollama:nomic-embed-text", str(folder / "a.pdf")])
    assert code == 2
    assert "created with the embedder 'wordllama'" in capsys.readouterr().err


def test_a_name_that_is_no_id_or_an_absent_embedder_makes_no_workspace(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The id is not silently changed ('Bad Name!' made as 'bad-name', then "no workspace
    'Bad Name!'"), and a mistyped embedder ('wordlama' is read as an Ollama model, and Ollama
    is down here) does not leave a workspace fixed to it that nothing can write to."""
    assert main(["-w", "Bad Name!", str(folder / "a.pdf")]) == 2
    err = capsys.readouterr().err
    assert "'Bad Name!' is not a workspace id" in err and "(e.g. 'bad-name')" in err
    assert main(["-w", "typo", "--embedder", "wordlama", str(folder / "a.pdf")]) == 2
    err = capsys.readouterr().err
    assert "The workspace was not created: Ollama is not reachable" in err
    assert "ollama pull wordlama" in err and "'wordllama' embedder" in err
    assert Workbench(settings).workspaces() == []
    with pytest.raises(WorkspaceError, match="Give the workspace a name"):  # said before Ollama
        Workbench(settings).create_workspace("  ", "nomic-embed-text")
    assert main(["-w", "typo", "--embedder", "wordllama", str(folder / "a.pdf")]) == 0


def test_module_runs_as_a_real_process(tmp_path: Path, folder: Path) -> None:
    proc = run_module(
        ["ingest", "--workspace", "w1", str(folder / "sub"), "--json"], tmp_path / "proc-data"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"][0]["status"] == "ingested"
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    # The Library fits the confidence after an upload; the command line says how to.
    again = run_module(["ingest", "--workspace", "w1", str(folder)], tmp_path / "proc-data")
    assert again.returncode == 0, again.stderr
    hint = "the confidence is not yet fitted to these documents: run python -m masis_core"
    assert again.stdout.splitlines()[-1] == f"{hint} calibrate --workspace w1"
    repeat = run_module(["ingest", "--workspace", "w1", str(folder)], tmp_path / "proc-data")
    assert "calibrate" not in repeat.stdout  # nothing new: nothing to fit


def test_listing_a_workspace_that_is_not_there_makes_nothing(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--workspace", "plnat", "--list"]) == 2
    assert "no workspace 'plnat'" in capsys.readouterr().err.lower()
    assert Workbench(settings).registry.get_workspace("plnat") is None
    with pytest.raises(SystemExit) as exit_:
        main(["--workspace", "plant", "--list", str(folder)])  # PATHs would be ignored
    assert exit_.value.code == 2
