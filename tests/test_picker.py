"""The passage picker as the analyst meets it (``ui.picker``): each card's page is the page
of its first quoted sentence, as its citation's page view shows it; the picker works on a run
opened by its address; a pick shows the analyst's confirmation, never the paused figure."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from ingest.pipeline import Ingestor
from masis_core.services.runs import RunService
from masis_core.text.markup import percent
from tests.apptest import fresh_app, settle
from tests.pdfs import filler, make_pdf
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, BOILER_LOG_QUESTION

VALVE = "The relief valve opens at 8 bar and closes again when the pressure falls to 7 bar."


def _picker_script(card: dict) -> None:  # type: ignore[type-arg]
    from ui.picker import passage_picker

    passage_picker("run-1", [card])


def test_a_card_names_the_page_of_its_first_sentence_not_its_chunks_first(bench) -> None:
    """One chunk over pages 1 and 2, the quoted sentence on page 2: the card had said page 1,
    one page early."""
    ws = bench.create_workspace("plant", "wordllama")
    pages = [filler("boiler", 60), f"{VALVE} {filler('valve', 30)}"]
    report = Ingestor(bench).ingest_bytes(ws, make_pdf(pages), "plant.pdf")
    card = {
        "n": 0,
        "text": VALVE,
        "heading": "",
        "title": "plant.pdf",
        "filename": "plant.pdf",
        "doc_id": report.doc_id,
        "page": 1,
        "page_end": 2,
        "place": "",
        "clashes": [],
    }
    st.cache_resource.clear()  # the app's workbench: this test's data directory
    st.cache_data.clear()
    at = AppTest.from_function(_picker_script, args=(card,), default_timeout=60).run()
    assert not at.exception, at.exception
    (head,) = [m.value for m in at.markdown if m.value.startswith("**The lead**")]
    assert head.endswith("— page 2"), head


@pytest.mark.usefixtures("boiler_log")
def test_a_run_opened_by_its_address_is_picked_and_shows_the_analysts_confirmation(
    bench, boiler_log
) -> None:
    """A paused run opened by its ``?run=`` address (a link, a restarted server): its cards,
    one pick, and the completed answer's confidence is the analyst's confirmation, on the
    Research page and the Runs page, never the figure the run paused on."""
    paused = RunService(bench).ask(boiler_log.id, BOILER_LOG_QUESTION)
    assert paused.status == "needs_human"
    stale = percent(paused.confidence)
    at = fresh_app()
    at.query_params["ws"] = boiler_log.id
    at.query_params["run"] = paused.run_id
    at.switch_page("pages/research.py").run()
    assert not at.exception, at.exception
    picks = [b for b in at.button if (b.key or "").startswith(f"pick-{paused.run_id}-")]
    assert len(picks) == 2
    picks[1].click().run()
    settle(at)
    rec = RunService(bench).store.get(paused.run_id)
    assert rec.status == "completed" and rec.confirmed_by == "the analyst"
    assert rec.answer.startswith("Each entry of the boiler log records the pressure")
    # The answer's confidence (the trace below keeps each pass's figure, as it was).
    assert [m.value for m in at.metric if m.label == "Confidence"] == ["Confirmed"]
    (said,) = [c.value for c in at.caption if c.value.startswith("Confirmed by")]
    assert said == (
        f"Confirmed by the analyst at review. The model's own estimate for this passage was "
        f"{stale}; the confirmation stands in for it."
    )
    assert any(c.value.startswith("Confirmed by the analyst at review.") for c in at.caption)
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    row = table[table["run_id"] == paused.run_id].iloc[0]
    assert row["review"] == "confirmed by the analyst"
    assert row["confidence"] is None or row["confidence"] != row["confidence"]  # None / NaN
    assert [m.value for m in at.metric if m.label == "Confidence"] == ["Confirmed"]


def test_an_accounts_pick_is_confirmed_in_its_name(bench) -> None:
    """With accounts, the confirmation names who confirmed: the door adds the account's name
    to the response; the export says it too."""
    from masis_core.services.access import Door
    from masis_core.services.reports import run_markdown
    from masis_core.storage.accounts import Accounts
    from tests.test_access import FAST

    bench._accounts = Accounts(bench.db, hasher=FAST)
    ws = bench.registry.create_workspace("plant", "wordllama")
    Ingestor(bench).ingest_bytes(ws, BOILER_LOG_PLACE.encode(), "office.txt")
    Ingestor(bench).ingest_bytes(ws, BOILER_LOG_ENTRIES.encode(), "log.txt")
    bench.accounts.create("root", "root password")
    bench.accounts.create("ann", "ann password")
    bench.accounts.grant(ws.id, "ann", "editor", actor="root")
    who, _ = bench.accounts.sign_in("ann", "ann password")
    ann = Door(bench, who, RunService(bench))
    paused = ann.ask(ws.id, BOILER_LOG_QUESTION)
    done = ann.resume(paused.run_id, {"action": "accept", "lead": 1})
    assert done.status == "completed" and done.confirmed_by == "ann"
    assert "Confidence: confirmed by ann (the model's: " in run_markdown(done)
