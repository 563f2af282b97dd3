"""Every page of the Streamlit app through AppTest, on a real data dir (offline mode)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.pipeline import Ingestor
from masis_core.config import Settings
from masis_core.services.reports import run_markdown
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.apptest import APP, fresh_app, settle
from tests.pdfs import filler, make_pdf
from tests.texts import (
    BOILER_LOG_ENTRIES,
    BOILER_LOG_QUESTION,
    REVENUE_A,
    REVENUE_B,
)

ROOT = Path(__file__).resolve().parents[1]
OFF_TOPIC = "What is the capital city of Mongolia and its population?"
# Each step of a completed run, as its panel says it (``masis_core.services.steps``).
STEP_WORDS = (
    "Started: planning the search",
    "Planned",
    "Searched your documents",
    "Wrote the draft",
    "Judged the draft: confidence",
    "Checked the citations",
    "Finished: the answer is final",
)


@pytest.fixture
def app(bench: Workbench) -> AppTest:
    return fresh_app()


def sidebar_text(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.sidebar.markdown, *at.sidebar.caption, *at.info])


def labels(at: AppTest) -> list[str]:
    return [s.label for s in at.status]


def by_key_prefix(elements, prefix: str):
    (match,) = [e for e in elements if (e.key or "").startswith(prefix)]
    return match


def ask(at: AppTest, question: str) -> AppTest:
    at.switch_page("pages/research.py").run()
    at.text_area[0].input(question)
    at.button(key="FormSubmitter:ask-Ask").click().run()
    assert not at.exception, at.exception
    return settle(at)


# -- sidebar and library ----------------------------------------------------------------------
def test_fresh_start_shows_offline_mode_and_how_to_switch(app: AppTest) -> None:
    at = app.run()
    assert not at.exception
    assert "Offline extractive mode" in sidebar_text(at)
    assert "ollama pull llama3.1:8b" in at.sidebar.code[0].value
    assert "ollama pull nomic-embed-text" in at.sidebar.code[0].value
    assert any("No workspace yet" in w.value for w in at.sidebar.warning)


def test_create_a_workspace_from_the_sidebar(app: AppTest, bench: Workbench) -> None:
    at = app.run()
    at.sidebar.text_input[0].input("Field Notes")
    at.sidebar.button[0].click().run()
    assert not at.exception
    assert [w.id for w in bench.registry.list_workspaces()] == ["field-notes"]
    assert at.sidebar.selectbox[0].value == "field-notes"


def test_lists_workspaces_and_their_documents(app: AppTest, bench: Workbench) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    bench.create_workspace("other", "wordllama")
    Ingestor(bench).ingest_bytes(ws, make_pdf([filler("pump", 200)]), "pump-manual.pdf")
    at = app.run()
    assert not at.exception
    assert at.sidebar.selectbox[0].options == ["demo · wordllama", "other · wordllama"]
    assert any("pump-manual.pdf" in m.value for m in at.markdown)
    at.sidebar.selectbox[0].select_index(1).run()
    assert not any("pump-manual.pdf" in m.value for m in at.markdown)


@pytest.mark.usefixtures("backend")
def test_upload_several_files_reports_each_and_delete_removes(app: AppTest, bench) -> None:
    bench.create_workspace("demo", "wordllama")
    at = app.run()
    at.button(key="FormSubmitter:upload-Ingest").click().run()  # nothing chosen yet
    assert [w.value for w in at.warning] == ["Choose one or more files first, then press Ingest."]
    at.file_uploader[0].set_value(
        [
            ("pump.pdf", make_pdf([filler("pump", 300), filler("valve", 300)]), "application/pdf"),
            ("broken.pdf", b"%PDF-1.7 this is not really a pdf", "application/pdf"),
            ("notes.md", b"# Notes\n\n" + filler("boiler", 120).encode(), "text/markdown"),
        ]
    )
    at.button(key="FormSubmitter:upload-Ingest").click().run()
    settle(at)
    status = dict(zip(labels(at), [s.state for s in at.status], strict=True))
    assert status["pump.pdf: ingested"] == "complete"
    assert status["broken.pdf: failed"] == "error"
    table = at.dataframe[0].value.set_index("file")
    assert table.loc["pump.pdf", "size"] == "2 pages"
    assert table.loc["pump.pdf", "chunks"] >= 2
    assert table.loc["broken.pdf", "status"] == "failed"
    assert table.loc["broken.pdf", "error"].startswith("corrupt")
    assert table.loc["notes.md", "status"] == "ingested"
    docs = {d.filename: d for d in bench.documents("demo")}
    assert set(docs) == {"pump.pdf", "notes.md"}

    at.button(key=f"del-{docs['pump.pdf'].doc_id}").click().run()
    at.button(key=f"del-yes-{docs['pump.pdf'].doc_id}").click().run()  # asked once
    assert [d.filename for d in bench.documents("demo")] == ["notes.md"]
    assert bench.store.count("wordllama", "demo") == docs["notes.md"].chunks


# -- research ---------------------------------------------------------------------------------
def test_offline_run_renders_node_panels_and_a_cited_answer(app: AppTest, plant) -> None:
    at = ask(app.run(), "How often must the hydraulic pump be inspected?")
    panels = labels(at)
    for words in STEP_WORDS:
        assert any(words in p for p in panels), (words, panels)
    researcher_panel = next(p for p in panels if "Searched your documents" in p)
    assert re.search(r"\d+ passages? kept, \d+ below the bar", researcher_panel)
    assert next(m for m in at.metric if m.label == "the bar (similarity)").value == "0.27"
    answer = next(m.value for m in at.markdown if "500 operating hours" in m.value)
    assert "[1]" in answer
    source = next(e for e in at.main.expander if e.label.startswith("[1]"))
    assert source.label.startswith("[1] plant.pdf, page")
    assert any("hydraulic pump" in m.value for m in source.markdown)
    assert not at.get("image")  # the page image only on request
    at.toggle(key=f"page-{at.query_params['run']}-1").set_value(True).run()
    assert not at.exception
    assert at.get("image"), "the cited PDF page is rendered"
    confidence = next(m for m in at.metric if m.label == "Confidence")
    assert confidence.value.endswith("%")


def test_steps_are_in_words_on_research_and_as_recorded_in_the_inspector(app, plant) -> None:
    """The Research page said "HITL_triggered", "no_evidence", "KB / 0 web queries" and
    "web_searcher · skipped": its panels now say what the agent did, in words; the recorded
    fields stay in the Inspector (issue 54, point 10)."""
    at = ask(app.run(), OFF_TOPIC)
    panels = labels(at)
    assert any("Searched your documents: no passage cleared the bar" in p for p in panels)
    assert not any("web" in p.lower() for p in panels), panels  # no web search was asked for
    page = " ".join([*panels, *(str(e.value) for e in [*at.caption, *at.markdown, *at.metric])])
    for raw in ("no_qualifying_evidence", "HITL", "KB", "filtered_out", "web_searcher"):
        assert raw not in page, raw
    assert not at.get("json")
    at.switch_page("pages/inspector.py").run()
    (recorded,) = [e for e in at.main.expander if e.label.startswith("The trace as recorded")]
    raw = recorded.get("json")[0].proto.body
    assert '"warning": "no_qualifying_evidence"' in raw and '"node": "web_searcher"' in raw


def test_web_toggle_is_disabled_without_a_key(app: AppTest, plant) -> None:
    at = app.run().switch_page("pages/research.py").run()
    assert at.toggle[0].disabled
    assert any("TAVILY_API_KEY" in c.value for c in at.caption)


@pytest.mark.usefixtures("backend")
def test_review_form_resumes_the_paused_run(app: AppTest, plant, bench) -> None:
    at = ask(app.run(), OFF_TOPIC)
    run_id = at.query_params["run"]
    assert RunService(bench).store.get(run_id).status == "needs_human"
    assert any("No qualifying evidence" in m.value for m in at.markdown)
    action = by_key_prefix(at.radio, "review-action")
    assert action.options == [
        "Rephrase the question",
        "Retry with a lower similarity threshold",
        "Cancel this run",
    ]
    action.set_value("rephrase").run()
    by_key_prefix(at.text_input, "review-text").input(
        "At what pressure does the pump relief valve open?"
    )
    by_key_prefix(at.button, "review-submit").click().run()
    settle(at)
    rec = RunService(bench).store.get(run_id)
    assert rec.status == "completed"
    assert at.query_params["run"] == run_id  # the same run, continued
    panels = labels(at)
    review = next(i for i, p in enumerate(panels) if "Reviewed: rephrased the question" in p)
    assert any("Checked the citations" in p for p in panels[review:])  # the trace goes on
    assert any("230 bar" in m.value for m in at.markdown)
    assert not [r for r in at.radio if (r.key or "").startswith("review-action")]


def test_paused_run_survives_a_restart_and_is_resumable(bench, plant) -> None:
    paused = RunService(bench).ask(plant.id, OFF_TOPIC)
    assert paused.status == "needs_human"
    at = fresh_app().run().switch_page("pages/research.py").run()  # a new server process
    at.button(key=f"open-{paused.run_id}").click().run()
    assert at.query_params["run"] == paused.run_id
    by_key_prefix(at.radio, "review-action").set_value("cancel").run()
    by_key_prefix(at.button, "review-submit").click().run()
    settle(at)
    assert RunService(bench).store.get(paused.run_id).status == "cancelled"
    assert not [b for b in at.button if (b.key or "").startswith("open-")]


def test_conflict_review_shows_sources_side_by_side_and_choosing_one_resolves(app, bench):
    ws = bench.create_workspace("finance", "wordllama")
    ingestor = Ingestor(bench)
    a = ingestor.ingest_bytes(ws, REVENUE_A.encode(), "annual-report.txt")
    ingestor.ingest_bytes(ws, REVENUE_B.encode(), "press-summary.txt")
    at = ask(app.run(), "What total revenue did Northwind Traders report for 2023?")
    assert any("Your sources disagree" in m.value for m in at.markdown)
    by_key_prefix(at.radio, "review-action").set_value("choose_source").run()
    source = by_key_prefix(at.radio, "review-source")
    assert source.options == ["annual-report.txt (page 1)", "press-summary.txt (page 1)"]
    shown = " ".join(m.value for m in at.markdown)
    assert "42 million" in shown and "37 million" in shown
    source.set_value(a.doc_id).run()
    by_key_prefix(at.button, "review-submit").click().run()
    settle(at)
    rec = RunService(bench).store.get(at.query_params["run"])
    assert rec.status == "completed"
    assert {c["filename"] for c in rec.citations} == {"annual-report.txt"}
    assert any("42 million" in m.value for m in at.markdown)


@pytest.mark.usefixtures("boiler_log")
def test_a_weak_lead_can_be_swapped_for_the_passage_that_answers(app, bench) -> None:
    at = ask(app.run(), BOILER_LOG_QUESTION)
    assert any(m.value == "### 🙋 Low confidence" for m in at.markdown)
    lacks = [c.value for c in at.caption if c.value.startswith("Words of the question")]
    assert len(lacks) == 1, lacks  # one line, not a "Gap:" caption per word
    assert lacks[0].startswith("Words of the question the lead passage, as quoted, does not hold: ")
    # The passage picker: the lead and the other passage, each with "This answers it".
    assert any("Which passage answers the question?" in m.value for m in at.markdown)
    assert "accept" not in by_key_prefix(at.radio, "review-action").options
    picks = [b for b in at.button if (b.key or "").startswith("pick-")]
    assert [b.label for b in picks] == ["This answers it", "This answers it"]
    assert any(BOILER_LOG_ENTRIES in m.value for m in at.markdown)
    picks[1].click().run()
    settle(at)
    rec = RunService(bench).store.get(at.query_params["run"])
    assert rec.status == "completed" and rec.metrics["accepted_by_analyst"] is True
    assert rec.answer.startswith("Each entry of the boiler log records the pressure")
    shown = [m.value for m in at.markdown]
    first = next(n for n, b in enumerate(shown) if "Each entry of the boiler log" in b)
    assert shown[first + 1] == "**Also relevant**"
    assert "The boiler log is kept in the plant office" in shown[first + 2]


# -- inspector and runs -----------------------------------------------------------------------
def test_inspector_draws_scores_threshold_and_latency(app: AppTest, plant, bench) -> None:
    research = RunService(bench)
    research.ask(plant.id, "How often must the hydraulic pump be inspected?")
    research.ask(plant.id, OFF_TOPIC)
    at = app.run().switch_page("pages/inspector.py").run()
    assert not at.exception
    charts = at.get("plotly_chart")
    # one histogram for the latest run's pass, kept/filtered counts, latency, workspace-wide
    assert len(charts) == 4
    figures = [c.proto.spec for c in charts]
    assert any('"threshold 0.27"' in f for f in figures)
    table = at.dataframe[0].value
    assert list(table["filtered_out"]) == [1] and list(table["kept"]) == [0]
    assert any("2 runs" in c.value or "candidates" in c.value for c in at.caption)


def test_the_inspector_shows_the_confidence_stage_by_stage(app: AppTest, plant, bench) -> None:
    """The run's confidence through the stages that applied, "model 0.41 → … 0.58"; the last
    number is the run's confidence."""
    rec = RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    at = app.run().switch_page("pages/inspector.py").run()
    assert not at.exception
    (path,) = [c.value for c in at.caption if c.value.startswith("Pass 1: model ")]
    assert path.endswith(f"{rec.confidence:.2f}")


def test_every_pass_has_its_histogram_and_the_one_after_review_says_so(app, plant, bench):
    """Three passes, a rephrase at review, a fourth: the inspector had drawn three columns and
    dropped the fourth, the pass the analyst's own question started."""
    research = RunService(bench)
    paused = research.ask(plant.id, "Who manufactures the hydrolic pump's flange gaskets?")
    assert paused.status == "needs_human"
    response = {"action": "rephrase", "text": "At what pressure does the relief valve open?"}
    done = research.resume(paused.run_id, response)
    searches = [e for e in done.trace if e.get("node") == "researcher"]
    assert len(searches) >= 4 and searches[-1]["retry_count"] == 0  # its count starts again
    at = app.run().switch_page("pages/inspector.py").run()
    assert not at.exception
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    for n in range(1, len(searches)):
        assert any(f'"Pass {n} (retry ' in t for t in titles), n
    assert any(f'"Pass {len(searches)} (after you rephrased)' in t for t in titles)
    # Fixed bins, 1/30 of the axis each: a pass with one candidate had drawn one bar across it.
    histogram = next(json.loads(t) for t in titles if '"Pass 1 (retry 0)' in t)
    assert {d["xbins"]["size"] for d in histogram["data"]} == {1 / 30}
    assert list(at.dataframe[0].value["after_review"])[-1] == "rephrase"


def test_runs_page_lists_history_and_exports_markdown(app: AppTest, plant, bench) -> None:
    rec = RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    at = app.run().switch_page("pages/runs.py").run()
    assert not at.exception
    history = at.dataframe[0].value
    assert list(history["run_id"]) == [rec.run_id]
    assert list(history["status"]) == ["completed"]
    assert list(history["thread"]) == [""] and list(history["review"]) == [""]  # no "None"
    config = json.loads(at.dataframe[0].proto.columns)  # the confidence shown with its "%"
    assert config["confidence"]["type_config"]["format"] == "%d%%"
    export = at.get("download_button")
    assert [e.proto.label for e in export] == ["Export as Markdown", "Export as PDF"]
    assert any("500 operating hours" in m.value for m in at.markdown)


# -- configuration ----------------------------------------------------------------------------
def test_streamlit_config_matches_settings_and_sends_nothing_out() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == Settings.model_fields["max_upload_mb"].default
    assert config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False


def test_a_failing_page_shows_one_line_not_a_traceback(app: AppTest, bench, monkeypatch) -> None:
    bench.create_workspace("demo", "wordllama")

    def broken(self, ws_id: str):
        raise RuntimeError("/secret/path/registry.db is unreadable")

    monkeypatch.setattr(Workbench, "documents", broken)
    at = app.run()
    assert not at.exception  # nothing escapes to Streamlit's own (detailed) error box
    (error,) = at.error
    assert "This page failed (RuntimeError)" in error.value
    assert "/secret/path" not in error.value


def test_a_verdict_is_stored_and_the_inspector_draws_it(app: AppTest, plant, bench) -> None:
    at = ask(app.run(), "How often must the hydraulic pump be inspected?")
    run_id = at.query_params["run"]
    (thumbs,) = at.feedback
    assert not any("You marked this answer" in c.value for c in at.caption)
    thumbs.set_value(1).run()  # 👍: the answer is right
    assert not at.exception
    assert any("You marked this answer **right**" in c.value for c in at.caption)
    assert RunService(bench).get(run_id).feedback is True
    at.switch_page("pages/inspector.py").run()
    assert not at.exception
    figures = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Confidence vs 1 answer you marked (expected" in f for f in figures)
    # One verdict is not a measurement: the page says so, and why the calibration tab differs.
    assert any(
        "fewer than 20 marked answers this error is mostly chance" in c.value for c in at.caption
    )
    assert "- Analyst's verdict: right" in run_markdown(RunService(bench).get(run_id))


def test_the_inspector_and_the_calibration_tab_count_the_same_marked_answers(
    app: AppTest, boiler_log, bench
) -> None:
    """One answer, marked 👍 by choosing its lead at review: the Inspector said "vs 1 verdict"
    and the calibration tab "your verdicts 2" (its fit's points: the lead passed over too).
    Both now count answers marked, say so, and the tab says what its fit's points are."""
    research = RunService(bench)
    paused = research.ask(boiler_log.id, BOILER_LOG_QUESTION)
    assert research.resume(paused.run_id, {"action": "accept", "lead": 1}).feedback is True
    at = app.run().switch_page("pages/inspector.py").run()
    assert not at.exception
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any(t.startswith("Confidence vs 1 answer you marked") for t in titles), titles
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["answers you marked"] == "1"
    assert "your verdicts" not in metrics
    assert any(
        "The fit holds 2 points from your answers: a lead you chose at review adds the lead "
        "passed over" in c.value
        for c in at.caption
    )


# -- issue 29: delete, drafts, long questions, colours -----------------------------------------
def test_delete_asks_once_says_what_went_and_its_pages_are_gone(app: AppTest, plant, bench):
    """Delete asks first; confirmed, it names what it removed; a past run that cited the
    document no longer draws its page (the page was drawn, and cached, before)."""
    at = ask(app.run(), "How often must the hydraulic pump be inspected?")
    run_id = at.query_params["run"]
    at.toggle(key=f"page-{run_id}-1").set_value(True).run()
    assert at.get("image"), "the cited page is drawn before the delete"
    (doc,) = bench.documents(plant.id)

    at.switch_page("pages/library.py").run()
    at.button(key=f"del-{doc.doc_id}").click().run()
    assert not at.exception
    assert [d.doc_id for d in bench.documents(plant.id)] == [doc.doc_id], "one click deletes"
    assert any("plant.pdf" in w.value for w in at.warning), "the question names the file"
    at.button(key=f"del-no-{doc.doc_id}").click().run()  # changed my mind
    assert [d.doc_id for d in bench.documents(plant.id)] == [doc.doc_id]
    assert not [b for b in at.button if (b.key or "").startswith("del-yes-")]

    at.button(key=f"del-{doc.doc_id}").click().run()
    at.button(key=f"del-yes-{doc.doc_id}").click().run()
    assert not at.exception
    assert bench.documents(plant.id) == []
    (said,) = at.success
    assert "plant.pdf" in said.value and plant.id in said.value

    for page in ("pages/runs.py", "pages/research.py"):
        at.switch_page(page).run()
        if page.endswith("research.py"):
            at.query_params["run"] = run_id
            at.run()
        at.toggle(key=f"page-{run_id}-1").set_value(True).run()
        assert not at.exception
        assert not at.get("image"), f"{page} drew a deleted document's page"
        assert any("deleted" in i.value for i in at.info), [i.value for i in at.info]


def test_creating_a_workspace_names_its_id_and_refuses_an_empty_name(app: AppTest, bench) -> None:
    at = app.run()
    form = at.sidebar.text_input[0]
    assert form.label == "Name"
    at.sidebar.button(key="FormSubmitter:create_workspace-Create").click().run()
    assert any(e.value == "Give the workspace a name." for e in at.sidebar.error)
    at.sidebar.text_input[0].input("My Docs / Q3!")
    at.sidebar.button(key="FormSubmitter:create_workspace-Create").click().run()
    assert not at.exception
    assert [w.id for w in bench.workspaces()] == ["my-docs-q3"]
    said = " ".join(e.value for e in at.success)
    assert "Created workspace **My Docs / Q3!** (its id: `my-docs-q3`)." in said, said
    assert at.sidebar.selectbox(key="workspace_id").value == "my-docs-q3"


def test_an_address_naming_no_workspace_is_said_once_under_the_title(bench) -> None:
    """A stale bookmark with no workspace yet: said under the page's title, once, and not
    again beside the notice of the workspace created next."""
    at = fresh_app()
    at.query_params["ws"] = "gone"
    at.run()
    assert not at.exception
    shown = [(e.type, getattr(e, "value", "")) for e in at.main]
    said = shown.index(("warning", "No workspace “gone” that you can open."))
    assert [t for t, _ in shown].index("title") < said
    assert "ws" not in at.query_params  # out of the address: a rerun does not say it again
    at.sidebar.text_input[0].input("Field Notes")
    at.sidebar.button(key="FormSubmitter:create_workspace-Create").click().run()
    assert [w.id for w in bench.workspaces()] == ["field-notes"]
    assert not [w for w in at.warning if "that you can open" in w.value]
    assert at.query_params["ws"] == "field-notes"


def test_offline_by_setting_says_to_start_again_without_it(bench) -> None:
    """With MASIS_PROVIDER=offline (the test settings' own), pulling the models switches
    nothing: the sidebar says so and gives the restart."""
    assert bench.settings.provider == "offline"
    at = fresh_app().run()
    assert not at.exception
    said = sidebar_text(at)
    assert "MASIS_PROVIDER=offline was set, so Ollama is not used even when it runs" in said
    assert "start the workbench again without MASIS_PROVIDER=offline" in said
    assert at.sidebar.code[0].value.splitlines() == [
        "ollama pull llama3.1:8b",
        "ollama pull nomic-embed-text",
        "MASIS_PROVIDER=auto streamlit run app.py",
    ]


def test_the_address_names_the_workspace_so_a_reload_or_a_new_tab_keeps_it(bench) -> None:
    """A reload, a bookmark or a page typed into a new tab showed the first workspace ("No
    documents yet") instead of the one the analyst had chosen."""
    bench.create_workspace("alpha", "wordllama")
    bench.create_workspace("beta", "wordllama")
    at = fresh_app().run()
    picker = at.sidebar.selectbox(key="workspace_id")
    assert picker.value == "alpha" and at.query_params["ws"] == "alpha"
    picker.set_value("beta").run()
    assert at.query_params["ws"] == "beta"
    new_tab = AppTest.from_file(APP, default_timeout=120).run()  # same server, bare address
    assert new_tab.sidebar.selectbox(key="workspace_id").value == "beta"  # the last choice
    reloaded = AppTest.from_file(APP, default_timeout=120)
    reloaded.query_params["ws"] = "alpha"
    reloaded.run()
    assert reloaded.sidebar.selectbox(key="workspace_id").value == "alpha"  # the address wins
    assert not [w for w in reloaded.warning if "that you can open" in w.value]
    unknown = fresh_app()
    unknown.query_params["ws"] = "no-such-workspace"
    unknown.run()
    assert not unknown.exception
    assert unknown.sidebar.selectbox(key="workspace_id").value == "alpha"
    assert unknown.query_params["ws"] == "alpha"
    # A stale bookmark is said, not silently replaced by another workspace's documents.
    said = [w.value for w in unknown.main.warning]
    assert "No workspace “no-such-workspace” that you can open; showing **alpha**." in said


def test_deleting_a_workspace_asks_first_and_says_what_went(app: AppTest, plant, bench):
    RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    bench.create_workspace("other", "wordllama")
    at = app.run()
    at.sidebar.selectbox(key="workspace_id").set_value("plant").run()
    at.sidebar.button(key="ws-delete").click().run()
    assert {w.id for w in bench.workspaces()} == {"other", "plant"}, "one click deletes"
    at.sidebar.button(key="ws-delete-yes").click().run()
    assert not at.exception
    assert [w.id for w in bench.workspaces()] == ["other"]
    said = " ".join(s.value for s in at.success)
    assert "plant" in said and "1 document" in said and "1 run" in said
    assert at.sidebar.selectbox[0].value == "other"


def test_a_paused_runs_draft_is_a_draft_without_verdict_or_follow_up(app: AppTest, bench):
    ws = bench.create_workspace("finance", "wordllama")
    ingestor = Ingestor(bench)
    ingestor.ingest_bytes(ws, REVENUE_A.encode(), "annual-report.txt")
    ingestor.ingest_bytes(ws, REVENUE_B.encode(), "press-summary.txt")
    at = ask(app.run(), "What total revenue did Northwind Traders report for 2023?")
    run_id = at.query_params["run"]
    assert RunService(bench).get(run_id).answer, "the paused run has a draft"
    for page in ("research", "runs"):
        if page == "runs":
            at.switch_page("pages/runs.py").run()
        headings = [h.value for h in at.subheader]
        assert "Answer" not in headings, (page, headings)
        assert any("Draft answer" in h and "awaiting your review" in h for h in headings)
        assert not at.feedback, f"{page}: thumbs under a draft"
        assert not [t for t in at.text_input if t.label == "Your follow-up"], page
        assert any("42 million" in m.value for m in at.markdown)  # the draft is still shown


def test_a_long_question_is_shown_capped(app: AppTest, plant) -> None:
    question = ("How often must the hydraulic pump be inspected? " * 300)[:10_000].strip()
    at = ask(app.run(), question)
    for page in ("research", "runs"):
        if page == "runs":
            at.switch_page("pages/runs.py").run()
        (heading,) = [m.value for m in at.markdown if m.value.startswith("#### ")]
        assert len(heading) <= 400, f"{page}: a {len(heading):,}-character heading"
        assert "How often must the hydraulic pump be inspected?" in heading
        assert any("10,000 characters" in e.label for e in at.expander), page


def _trace_colours(spec: str) -> list[tuple[str, str]]:
    import json

    figure = json.loads(spec)
    return [
        (str(t.get("name") or ""), t["marker"]["color"])
        for t in figure["data"]
        if isinstance(t.get("marker", {}).get("color"), str)
    ]


def test_inspector_colours_mean_one_state_each(app: AppTest, plant, bench) -> None:
    research = RunService(bench)
    research.ask(plant.id, "How often must the hydraulic pump be inspected?")
    research.ask(plant.id, OFF_TOPIC)
    research.ask(plant.id, "How often must the hydraulic pump be inspected?")
    at = app.run().switch_page("pages/inspector.py").run()
    assert not at.exception
    meanings: dict[str, set[str]] = {}
    colours: dict[str, set[str]] = {}
    for chart in at.get("plotly_chart"):
        for name, colour in _trace_colours(chart.proto.spec):
            meanings.setdefault(colour.lower(), set()).add(name)
            colours.setdefault(name, set()).add(colour.lower())
    assert "kept" in colours, colours
    assert {c: m for c, m in meanings.items() if len(m) > 1} == {}, "a colour, two meanings"
    assert {n: c for n, c in colours.items() if len(c) > 1} == {}, "a state, two colours"
