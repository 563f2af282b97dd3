"""``python -m ingest`` as DESIGN §6 describes it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from ingest.__main__ import main
from masis_core.config import Settings
from masis_core.errors import WorkspaceError
from masis_core.workspaces.workbench import Workbench
from tests.conftest import FIXTURES
from tests.pdfs import filler, make_outlined_pdf, make_pdf
from tests.proc import run_module, start_module


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
    # Asked not to fit the confidence, the command line says how to do it later.
    again = run_module(
        ["ingest", "--workspace", "w1", "--no-calibrate", str(folder)], tmp_path / "proc-data"
    )
    assert again.returncode == 0, again.stderr
    hint = "the confidence is not fitted to these documents: run python -m masis_core"
    assert again.stdout.splitlines()[-1] == f"{hint} calibrate --workspace w1"
    assert "calibration" not in again.stderr
    repeat = run_module(["ingest", "--workspace", "w1", str(folder)], tmp_path / "proc-data")
    assert "calibrate" not in repeat.stdout  # nothing new: nothing to fit


def test_the_confidence_is_fitted_after_a_batch_as_the_library_does(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Library queues the workspace's calibration after every batch that adds documents;
    the command line had only printed a hint, so a workspace made there kept the global model
    (on the unseen FAQ PDFs: 0.15 of answerable questions answered without review, 0.35
    fitted)."""
    from masis_core.workspaces.calibration import CalibrationStore
    from tests.test_calibration import TOPICS

    manual = tmp_path / "plant.pdf"
    manual.write_bytes(make_outlined_pdf(TOPICS))
    assert main(["--workspace", "plant", str(manual), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    calibration = out["calibration"]
    assert calibration["status"] == "too_few"  # five sections: fewer points than a map needs
    assert calibration["message"].startswith("5 labelled answers (at least 20 are needed)")
    stored = CalibrationStore(Workbench(settings).db).get("plant")
    assert stored is not None and stored["points"]["outline"] == 5

    other = tmp_path / "other.pdf"
    other.write_bytes(make_outlined_pdf([(f"{t} notes", f"{x} Notes.") for t, x in TOPICS]))
    assert main(["--workspace", "plant", str(other)]) == 0
    captured = capsys.readouterr()
    assert "fitting the confidence to these documents (Ctrl-C skips it" in captured.err
    assert "calibration: " in captured.err  # its progress
    lines = captured.out.splitlines()
    assert lines[-2].startswith("confidence: ") and "labelled answers" in lines[-2]
    assert lines[-1].endswith("calibrate --workspace plant once the workspace has more documents")


def test_listing_a_workspace_that_is_not_there_makes_nothing(
    settings: Settings, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--workspace", "plnat", "--list"]) == 2
    assert "no workspace 'plnat'" in capsys.readouterr().err.lower()
    assert Workbench(settings).registry.get_workspace("plnat") is None
    with pytest.raises(SystemExit) as exit_:
        main(["--workspace", "plant", "--list", str(folder)])  # PATHs would be ignored
    assert exit_.value.code == 2


def test_ctrl_c_during_the_calibration_keeps_the_documents_and_stores_no_fit(
    tmp_path: Path,
) -> None:
    """Interrupted at its first outline question, the command ends as a finished ingest
    (exit 0, the summary, the hint to calibrate later), and no fit is stored."""
    from masis_core.workspaces.calibration import CalibrationStore
    from tests.test_calibration import TOPICS

    sections = [
        (f"{title} ({n})", f"{text} Section {n}.") for n in range(8) for title, text in TOPICS
    ]
    manual = tmp_path / "plant.pdf"
    manual.write_bytes(make_outlined_pdf(sections))
    data_dir = tmp_path / "data"
    proc = start_module(["ingest", "--workspace", "plant", str(manual)], data_dir)
    assert proc.stderr is not None
    for line in proc.stderr:  # its progress, line by line, until the first question
        if line.startswith("calibration: asking the outline questions"):
            break
    else:
        pytest.fail("no calibration progress on stderr")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    lines = out.splitlines()
    assert "ingested   plant.pdf" in out
    assert lines[-2] == "confidence: calibration cancelled, nothing stored"
    assert lines[-1].startswith("the confidence is not fitted to these documents: run")
    assert lines[-1].endswith("calibrate --workspace plant")  # now, not "once … more documents"
    bench = Workbench(Settings.local(data_dir))
    assert [d.filename for d in bench.documents("plant")] == ["plant.pdf"]
    assert CalibrationStore(bench.db).get("plant") is None
