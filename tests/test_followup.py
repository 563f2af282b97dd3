"""Follow-up questions: the standalone rewrite (offline rule, Ollama through the fake server),
threads in the run store, the CLI's ``ask --thread``, the thread export and the UI flow."""

from __future__ import annotations

import json
import sqlite3

import pytest
from streamlit.testing.v1 import AppTest

from masis_core.__main__ import main
from masis_core.answers.followup import Turn, offline_rewrite, subject_queries, thread_subject
from masis_core.errors import InputError
from masis_core.graph.nodes import planner, researcher
from masis_core.retrieval.thresholds import threshold_for
from masis_core.services.reports import thread_markdown
from masis_core.services.runs import RunService
from masis_core.storage.db import SqliteDatabase
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.conftest import DEAD_HOST
from tests.fake_ollama import FakeOllama
from tests.graphs import researcher_state, runtime_for
from tests.ollama_helpers import ollama_plant, scripted

FIRST = "How often must the hydraulic pump be inspected?"
PREVIOUS = [Turn(FIRST, "Every 500 operating hours. [1]")]


# -- the offline rewrite ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("follow_up", "standalone"),
    [
        ("What pressure does it operate at?", "What pressure does the hydraulic pump operate at?"),
        ("And what about its seals?", "And what about the hydraulic pump's seals?"),
        ("It leaks. Why?", "The hydraulic pump leaks. Why?"),
    ],
)
def test_offline_rewrite_carries_the_previous_topic(follow_up: str, standalone: str) -> None:
    rewrite = offline_rewrite(follow_up, PREVIOUS)
    assert (rewrite.question, rewrite.method) == (standalone, "offline")


READS = "What function reads a data frame from a text file?"


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        (READS, "What does its header argument do?"),  # "its" is the answer's function
        (FIRST, "Why?"),  # no pronoun to replace
        (FIRST, "Who logs this?"),  # "this" may be the inspection, not the pump
        ("How does the pump work?", "Why does it fail?"),  # "the pump work" is no phrase
        ("How are the seals of the pump checked?", "Who replaces it?"),  # plural, not "it"
        ("Is the pump or the valve inspected?", "How often is it done?"),  # two phrases
    ],
)
def test_an_uncertain_topic_keeps_the_follow_up_and_adds_the_previous_question(
    previous: str, follow_up: str
) -> None:
    """Issue 29: "What does its header argument do?" became "What does function reads's
    header argument do?". Without a noun phrase it can be sure of, the rewrite keeps the
    follow-up as typed and adds the question it follows, for the search."""
    rewrite = offline_rewrite(follow_up, [Turn(previous)])
    assert rewrite.question == f"{follow_up} (Follow-up to: {previous})"
    assert rewrite.method == "context" and "added for the search" in rewrite.note()


@pytest.mark.parametrize(
    ("previous", "follow_up", "standalone"),
    [
        (
            "How are the seals of the pump checked?",
            "How often are they replaced?",
            "How often are the seals of the pump replaced?",
        ),
        (
            "How often is the relief valve inspected?",
            "Who inspects it?",
            "Who inspects the relief valve?",
        ),
        (
            "What is the maximum cable length?",
            "Does it depend on the speed?",
            "Does the maximum cable length depend on the speed?",
        ),
        (
            "How often must the Ventilprüfung be done?",
            "Who does it?",
            "Who does the Ventilprüfung?",
        ),
    ],
)
def test_a_pronoun_becomes_the_noun_phrase_it_stands_for(
    previous: str, follow_up: str, standalone: str
) -> None:
    rewrite = offline_rewrite(follow_up, [Turn(previous)])
    assert (rewrite.question, rewrite.method) == (standalone, "offline")


def test_a_follow_up_of_a_follow_up_adds_the_question_that_stood_alone() -> None:
    first = offline_rewrite("What does its header argument do?", [Turn(READS)])
    second = offline_rewrite("And its sep argument?", [Turn(READS), Turn(first.question)])
    assert second.question == f"And its sep argument? (Follow-up to: {READS})"
    long = offline_rewrite("Why?", [Turn("What is the pump? " + "Really " * 100 + "sure?")])
    assert len(long.question) <= 500 and long.question.endswith("…)")


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
    assert rewrite.question == "At what pressure does the hydraulic pump's relief valve open?"
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
    assert research.rewrite(first.run_id, "Why?").question == f"Why? (Follow-up to: {FIRST})"


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
    assert out["question"] == "Who logs the hydraulic pump?"
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
    assert rewrite.question == "Who inspects the hydraulic pump?"
    assert rewrite.method == "offline"
    assert rewrite.error is not None and why in rewrite.error
    assert why in rewrite.note()


def test_ollama_down_falls_back_to_the_offline_rewrite(ollama) -> None:
    research, _fake, first = ollama
    research.bench.settings.ollama_host = DEAD_HOST
    rewrite = research.rewrite(first.run_id, "Who inspects it?", engine="ollama")
    assert (rewrite.question, rewrite.method) == ("Who inspects the hydraulic pump?", "offline")
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
    assert shown.value == "At what pressure does the hydraulic pump's relief valve open?"
    assert any("replaced by what the previous question was about" in c.value for c in at.caption)
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
    assert list(at.dataframe[0].value["thread"]) == [""]
    assert [b.proto.label for b in at.get("download_button")] == [
        "Export as Markdown",
        "Export as PDF",
    ]  # no "Export the thread" for a lone run


def test_the_rewrite_shown_in_the_app_is_never_ungrammatical(bench: Workbench) -> None:
    """Issue 29's case through the Research page: ask about a function, follow up with "its"."""
    from ingest.pipeline import Ingestor

    ws = bench.create_workspace("r-docs", "wordllama")
    note = (
        "Reading data files. The function read.table reads a data frame from a text file. "
        "Its header argument says whether the first line of the file holds the variable names."
    )
    Ingestor(bench).ingest_bytes(ws, note.encode(), "r-data.txt")
    at = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input(READS)
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    run_id = at.query_params["run"]
    key = f"follow-{run_id[0] if isinstance(run_id, list) else run_id}"
    at.text_input(key=f"{key}-typed").input("What does its header argument do?")
    at.button(key=f"{key}-rewrite").click().run()
    assert not at.exception, at.exception
    shown = at.text_area(key=f"{key}-question").value
    assert shown == f"What does its header argument do? (Follow-up to: {READS})"
    assert "'s" not in shown.replace("does its", "")
    assert any("added for the search" in c.value for c in at.caption)


def test_the_missing_words_of_a_follow_up_are_the_analysts_own() -> None:
    """A context rewrite ends "(Follow-up to: …)": the review's list of question words the
    lead lacks had named "follow-up" among them."""
    from masis_core.answers import offline
    from masis_core.answers.followup import CONTEXT

    question = "Which separator does it use?" + CONTEXT.format("How do I read a CSV file in R?")
    evidence = [{"text": "The separator is a comma.", "doc_id": "a", "chunk_id": "w/a/000001"}]
    gaps = offline.critique(question, "The separator is a comma. [1]", evidence)["logical_gaps"]
    assert "follow-up" not in gaps and "csv" not in gaps
    alone = offline.critique("Which separator does R use for CSV?", "The separator. [1]", evidence)
    assert "csv" in alone["logical_gaps"]  # the analyst's own words still count


# -- a follow-up's search carries the thread's subject ------------------------------------------
PAIRS = [
    # Issue 51: found no qualifying evidence; only a lowered threshold found the passage.
    ("What's this about data stale?", "How do I make it go away?", "raise the value of MAXAGE"),
    (
        "Why do the client programs say Driver not connected?",
        "How do I fix that?",
        "You have to run upsdrvctl start",
    ),
    ("Why are there two copies of upsmon running?", "How can I make it one process?", "with -p"),
]


def searched(bench: Workbench, ws_id: str, question: str, **state: object) -> list[str]:
    """The evidence the planner's searches keep for ``question``, at the usual bar."""
    start = researcher_state(ws_id, question, **state)
    plan = planner.node(start, runtime_for(bench))["plan"]  # type: ignore[arg-type]
    out = researcher.node({**start, "plan": plan}, runtime_for(bench))  # type: ignore[arg-type]
    (entry,) = out["trace"]
    assert entry["threshold_used"] == threshold_for("wordllama", 0, None)  # not lowered
    return [" ".join(ev["text"].split()) for ev in out["evidence"]]


@pytest.mark.parametrize(("previous", "follow_up", "answer"), PAIRS)
def test_a_vague_follow_up_finds_the_threads_subject(
    nut_faq: tuple[Workbench, str], previous: str, follow_up: str, answer: str
) -> None:
    """Rewritten with the question it follows, or asked in the thread as typed: either way the
    search carries the thread's subject, and the passage that answers is ranked first."""
    bench, ws_id = nut_faq
    rewrite = offline_rewrite(follow_up, [Turn(previous)])
    assert rewrite.method == "context"
    assert any(answer in text for text in searched(bench, ws_id, rewrite.question))
    subject = thread_subject(follow_up, [Turn(previous)])
    # Among the first two: since contents pages are chunked apart (issue 54), the data-stale
    # entry's question ends one chunk and its answer opens the next; both are kept, 1st and
    # 2nd, and the composer joins neighbouring chunks into one passage.
    assert any(answer in text for text in searched(bench, ws_id, follow_up, subject=subject)[:2])


def test_a_thread_run_asked_as_typed_carries_the_subject(nut_faq: tuple[Workbench, str]) -> None:
    bench, ws_id = nut_faq
    research = RunService(bench)
    first = research.ask(ws_id, PAIRS[1][0])
    _, state = research.start(ws_id, "How do I fix that?", thread=first.run_id)
    # "fix" says nothing of what: the subject is the previous question's.
    assert state["subject"] == ["client programs say Driver connected"]
    # A question that stands alone, or a rewrite that carries its context, adds nothing.
    _, state = research.start(ws_id, "How do I start upsdrvctl?", thread=first.run_id)
    assert "subject" not in state


def test_the_subject_is_what_the_previous_question_names() -> None:
    assert subject_queries(
        "How do I make it go away? (Follow-up to: What's this about data stale?)"
    ) == ["data stale"]
    assert subject_queries("How do I make it go away?") == []
    # "instead" leaves out what it is about: the follow-up leans on the thread.
    rewrite = offline_rewrite(
        "What should I use instead?", [Turn("Why does upsmon not send SIGPWR?")]
    )
    assert rewrite.method == "context"
    assert subject_queries(rewrite.question) == ["upsmon send SIGPWR"]
    # The analyst sees what the search carries, under the editable question.
    assert rewrite.note().endswith("The search also carries its subject: “upsmon send SIGPWR”.")
