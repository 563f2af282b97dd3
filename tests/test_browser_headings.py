"""Headings that say whose a run is and what it waits for (issue 54, point 3), in Chromium on a
team server (MASIS_AUTH=local): Bob, a viewer, opens a draft Ann's run paused on; Ann, who
asked it, reviews and cancels it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ingest.pipeline import Ingestor
from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.browser import expect_status, server_problems
from tests.browser import streamlit_server as server
from tests.test_browser import idle
from tests.test_browser_access import open_as, separate_pages
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, BOILER_LOG_QUESTION

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import expect, sync_playwright  # noqa: E402

YOURS = "Draft answer — awaiting your review"


def paused_run(data: Path) -> str:
    """Accounts root (admin), ann (owner of "plant") and bob (a viewer of it); a run Ann
    asked, paused at review on a draft. Returns its id."""
    bench = Workbench(Settings.local(data, provider="offline", ollama_host="http://127.0.0.1:9"))
    accounts = bench.accounts
    for name in ("root", "ann", "bob"):
        accounts.create(name, f"{name} password")
    ws = bench.create_workspace("plant", "wordllama")
    accounts.grant(ws.id, "ann", "owner", actor="root")
    accounts.grant(ws.id, "bob", "viewer", actor="root")
    ingestor = Ingestor(bench)
    ingestor.ingest_bytes(ws, BOILER_LOG_PLACE.encode(), "office.txt")
    ingestor.ingest_bytes(ws, BOILER_LOG_ENTRIES.encode(), "log.txt")
    rec = RunService(bench).ask(ws.id, BOILER_LOG_QUESTION, asked_by="ann")
    assert rec.status == "needs_human" and rec.answer
    return rec.run_id


def test_a_draft_says_whose_review_it_awaits_and_a_cancelled_run_shows_none(
    tmp_path: Path,
) -> None:
    data, log = tmp_path / "data", tmp_path / "streamlit.log"
    run_id = paused_run(data)
    with server(data, log, {"MASIS_AUTH": "local"}) as url, sync_playwright() as pw:
        browser, (bob, ann) = separate_pages(pw, 2)

        # Bob, a viewer: the draft awaits Ann's review, not his; the run says who asked it.
        for where, path in (("Research", "research"), ("Runs", "runs")):
            open_as(bob, f"{url}/{path}?run={run_id}", "bob", where)
            expect_status(bob, "awaiting review", run_id)
            status = re.compile(rf"Run `?{run_id}`? · awaiting review · asked by ann")
            expect(bob.get_by_text(status)).to_be_visible()
            draft = bob.get_by_role("heading", name="Draft answer — awaiting review by ann")
            expect(draft).to_be_visible()
            expect(bob.get_by_text(YOURS)).to_have_count(0)
            expect(bob.get_by_role("button", name="Submit and resume")).to_have_count(0)

        # Ann, who asked it: the review is hers; cancelled, nothing awaits anyone's review.
        open_as(ann, f"{url}/research?run={run_id}", "ann", "Research")
        expect(ann.get_by_role("heading", name=YOURS)).to_be_visible()
        ann.get_by_text("Cancel this run", exact=True).click()
        ann.get_by_role("button", name="Submit and resume").click()
        idle(ann)
        expect_status(ann, "cancelled", run_id)
        cancelled = re.compile(rf"Run `?{run_id}`? · cancelled · asked by ann")
        expect(ann.get_by_text(cancelled)).to_be_visible()
        expect(ann.get_by_text(re.compile("awaiting"))).to_have_count(0)
        expect(ann.get_by_role("heading", name=re.compile("^Draft answer"))).to_have_count(0)
        browser.close()
    assert not server_problems(log)
