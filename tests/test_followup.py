"""Follow-up questions: the standalone rewrite (offline rule, Ollama through the fake server),
threads in the run store, the CLI's ``ask --thread``, the thread export and the UI flow."""

from __future__ import annotations

import json
import sqlite3

import pytest
from streamlit.testing.v1 import AppTest

from masis_core.__main__ import main
from masis_core.answers.followup import Turn, offline_rewrite
from masis_core.errors import InputError
from masis_core.services.reports import thread_markdown
from masis_core.services.runs import RunService
from masis_core.storage.db import SqliteDatabase
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.conftest import DEAD_HOST
from tests.fake_ollama import FakeOllama
from tests.ollama_helpers import ollama_plant, scripted

FIRST = "How often must the hydraulic pump be inspected?"
PREVIOUS = [Turn(FIRST, "Every 500 operating hours. [1]")]


# -- the offline rewrite ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("follow_up", "standalone"),
    [
        ("What pressure does it operate at?", "What pressure does hydraulic pump operate at?"),
        ("And what about its seals?", "And what about hydraulic pump's seals?"),
        ("Why?", "Why (hydraulic pump inspected)?"),
        ("Who logs this?", "Who logs this (hydraulic pump)?"),
    ],
)
def test_offline_rewrite_carries_the_previous_topic(follow_up: str, standalone: str) -> None:
    rewrite = offline_rewrite(follow_up, PREVIOUS)
    assert (rewrite.question, rewrite.method) == (standalone, "offline")


def test_a_follow_up_that_stands_alone_is_left_as_typed() -> None:
    rewrite = offline_rewrite("How often is the steam boiler descaled?", PREVIOUS)
    assert (rewrite.question, rewrite.method) == (
        "How often is the steam boiler descaled?",
        "unchanged",
    )
    assert offline_rewrite("What does it cost?", []).method == "unchanged"  # no thread yet


# -- threads in the run store -------------------------------------------------------------------
@pytest.mark.usefixtures("backend")
def test_a_follow_up_is_its_own_run_linked_to_the_thread(bench: Workbench, plant) -> None:
    research = RunService(bench)
    first = research.ask(plant.id, FIRST)
    rewrite = research.rewrite(first.run_id, "At what pressure does its relief valve open?")
    assert rewrite.question == "At what pressure does hydraulic pump's relief valve open?"
    second = research.ask(
        plant.id, rewrite.question, thread=first.run_id, follow_up="At what pressure …?"
    )
    assert second.status == "completed", second.error
    assert "230 bar" in second.answer
    # a follow-up of the follow-up joins the same thread, not a thread of its own
    third = research.ask(plant.id, "Where are inspections logged?", thread=second.run_id)
    stored = research.get(third.run_id)
    assert stored is not None and stored.thread == first.run_id
    assert research.get(first.run_id).thread is None  # type: ignore[union-attr]
    assert [t.run_id for t in research.thread(third.run_id)] == [
        first.run_id,
        second.run_id,
        third.run_id,
    ]
    assert research.get(second.run_id).follow_up == "At what pressure …?"  # type: ignore[union-attr]
    # the history the rewrite saw stops at the run it follows up
    assert research.rewrite(first.run_id, "Why?").question == "Why (hydraulic pump inspected)?"


def test_a_thread_from_another_workspace_is_refused(bench: Workbench, plant) -> None:
    research = RunService(bench)
    other = bench.create_workspace("other", "wordllama")
    first = research.ask(plant.id, FIRST)
    with pytest.raises(InputError, match=r"no run .* in workspace 'other'"):
        research.start(other.id, "What does it cost?", thread=first.run_id)
    with pytest.raises(InputError, match="no run 'nope'"):
        research.rewrite("nope", "What does it cost?")


def test_an_old_runs_table_gains_the_thread_columns(tmp_path) -> None:
    db = tmp_path / "masis.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, question "
            "TEXT NOT NULL, engine TEXT NOT NULL, status TEXT NOT NULL, answer TEXT, citations "
            "TEXT NOT NULL DEFAULT '[]', confidence REAL, hitl TEXT, metrics TEXT NOT NULL "
            "DEFAULT '{}', trace TEXT NOT NULL DEFAULT '[]', error TEXT, created_at TEXT NOT "
            "NULL, updated_at TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO runs (run_id, workspace_id, question, engine, status, created_at, "
            "updated_at) VALUES ('old', 'w', 'q?', 'offline', 'completed', 't', 't')"
        )
    SqliteDatabase(db)  # opening it migrates the file
    with sqlite3.connect(db) as conn:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
        assert {"thread", "follow_up"} <= columns
        assert conn.execute("SELECT question, thread FROM runs").fetchall() == [("q?", None)]


def test_the_thread_exports_as_one_report(bench: Workbench, plant) -> None:
    research = RunService(bench)
    first = research.ask(plant.id, FIRST)
    second = research.ask(
        plant.id,
        "At what pressure does hydraulic pump's relief valve open?",
        thread=first.run_id,
        follow_up="And its relief valve?",
    )
    text = thread_markdown(research.thread(second.run_id))
    assert text.startswith(f"# Thread: {FIRST}")
    assert text.index(f"## {FIRST}") < text.index("## At what pressure")
    assert "asked as “And its relief valve?”" in text
    assert text.count("### Answer") == 2 and "230 bar" in text


# -- the command line ---------------------------------------------------------------------------
def test_cli_ask_thread_rewrites_and_links(bench: Workbench, plant, capsys) -> None:
    assert main(["ask", "-w", plant.id, FIRST, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    code = main(["ask", "-w", plant.id, "--thread", first["run_id"], "Who logs it?", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["question"] == "Who logs hydraulic pump?"
    assert (out["thread"], out["follow_up"]) == (first["run_id"], "Who logs it?")
    assert out["rewrite"] == {"method": "offline", "error": None}
    assert main(["ask", "-w", plant.id, "--thread", "missing", "Why?"]) == 2
    assert "no run 'missing'" in capsys.readouterr().err


# -- Ollama: the chat model condenses, the offline rule is the fallback -------------------------
@pytest.fixture
def ollama(bench: Workbench, fake_ollama: FakeOllama):
    research, fake = ollama_plant(bench, fake_ollama)
    first = research.ask("plant", "How often is the hydraulic pump inspected?", engine="offline")
    return research, fake, first


def test_ollama_condenses_the_follow_up(ollama) -> None:
    research, fake, first = ollama
    fake.state.default_reply = scripted(
        {
            "Standalone": [
                json.dumps({"question": "Which seals does the technician check on the pump?"})
            ]
        }
    )
    rewrite = research.rewrite(first.run_id, "Which seals are checked?", engine="ollama")
    assert (rewrite.question, rewrite.method, rewrite.error) == (
        "Which seals does the technician check on the pump?",
        "model",
        None,
    )
    (request,) = [
        b for b in fake.requests_to("/api/chat") if b["format"].get("title") == "Standalone"
    ]
    prompt = " ".join(m["content"] for m in request["messages"])
    assert "Q1: How often is the hydraulic pump inspected?" in prompt
    assert "Follow-up: Which seals are checked?" in prompt


@pytest.mark.parametrize(
    ("replies", "why"),
    [
        (["Sure! {question: oops", "still not json"], "malformed Standalone twice"),
        ([json.dumps({"question": "What is the capital of Mongolia?"})], "shares no term"),
        ([json.dumps({"question": '{"question": "it"}'})], "markup"),
    ],
)
def test_ollama_junk_falls_back_to_the_offline_rewrite(ollama, replies, why) -> None:
    research, fake, first = ollama
    fake.state.default_reply = scripted({"Standalone": replies})
    rewrite = research.rewrite(first.run_id, "Who inspects it?", engine="ollama")
    assert rewrite.question == "Who inspects hydraulic pump?"
    assert rewrite.method == "offline"
    assert rewrite.error is not None and why in rewrite.error
    assert why in rewrite.note()


def test_ollama_down_falls_back_to_the_offline_rewrite(ollama) -> None:
    research, _fake, first = ollama
    research.bench.settings.ollama_host = DEAD_HOST
    rewrite = research.rewrite(first.run_id, "Who inspects it?", engine="ollama")
    assert (rewrite.question, rewrite.method) == ("Who inspects hydraulic pump?", "offline")
    assert rewrite.error is not None


# -- the UI -------------------------------------------------------------------------------------
def test_follow_up_flow_shows_the_rewrite_and_links_the_run(bench: Workbench, plant) -> None:
    at = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input(FIRST)
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    first_id = at.query_params["run"]
    first_id = first_id[0] if isinstance(first_id, list) else first_id
    key = f"follow-{first_id}"
    at.text_input(key=f"{key}-typed").input("At what pressure does its relief valve open?")
    at.button(key=f"{key}-rewrite").click().run()
    assert not at.exception, at.exception
    shown = at.text_area(key=f"{key}-question")
    assert shown.value == "At what pressure does hydraulic pump's relief valve open?"
    assert any("previous question's key terms" in c.value for c in at.caption)
    shown.input("At what pressure does the pump's relief valve open?")  # the analyst edits
    at.button(key=f"{key}-ask").click().run()
    at = settle(at)
    second_id = at.query_params["run"]
    second_id = second_id[0] if isinstance(second_id, list) else second_id
    assert second_id != first_id
    second = RunService(bench).get(second_id)
    assert second is not None
    assert second.question == "At what pressure does the pump's relief valve open?"
    assert (second.thread, second.follow_up) == (
        first_id,
        "At what pressure does its relief valve open?",
    )
    assert any(f"thread `{first_id}`" in c.value for c in at.caption)
    assert any("230 bar" in m.value for m in at.markdown)

    at.switch_page("pages/runs.py").run()
    assert not at.exception
    history = at.dataframe[0].value
    assert list(history["run_id"]) == [first_id, second_id]  # together, in the order asked
    assert list(history["thread"]) == [first_id, first_id]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Export the thread (2 turns)" in labels


def test_ui_run_list_keeps_a_lone_run_unthreaded(bench: Workbench, plant) -> None:
    RunService(bench).ask(plant.id, FIRST)
    at: AppTest = fresh_app().run().switch_page("pages/runs.py").run()
    assert not at.exception
    assert list(at.dataframe[0].value["thread"]) == [None]
    assert [b.proto.label for b in at.get("download_button")] == [
        "Export as Markdown",
        "Export as PDF",
    ]  # no "Export the thread" for a lone run
