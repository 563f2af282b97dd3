"""A low-confidence review in a real browser: the analyst picks the "Also relevant" passage
that answers, and the same run completes leading with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import expect_status
from tests.test_browser import ask, create_workspace, go, page  # noqa: F401
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, BOILER_LOG_QUESTION

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect  # noqa: E402


def test_lead_with_the_passage_that_answers(page: Page, tmp_path: Path) -> None:  # noqa: F811
    notes = {"office.txt": BOILER_LOG_PLACE, "log.txt": BOILER_LOG_ENTRIES}
    for name, text in notes.items():
        (tmp_path / name).write_text(text)
    create_workspace(page, "plant")
    page.locator("input[type=file]").set_input_files([str(tmp_path / n) for n in notes])
    page.get_by_role("button", name="Ingest").click()
    for name in notes:
        expect(page.get_by_text(f"{name}: ingested")).to_be_visible()
    go(page, "Research")
    ask(page, BOILER_LOG_QUESTION)
    expect_status(page, "awaiting review")
    expect(page.get_by_role("heading", name="Low confidence")).to_be_visible()
    # The passage picker: each candidate with its place, one click from the answer.
    expect(page.get_by_text("Which passage answers the question?")).to_be_visible()
    expect(page.get_by_text("Option 1", exact=True)).to_be_visible()
    picks = page.get_by_role("button", name="This answers it")
    expect(picks).to_have_count(2)
    picks.nth(1).click()
    expect_status(page, "completed")
    expect(
        page.get_by_text("human_review · low_confidence → accept, leading with Also relevant 1")
    ).to_be_visible()
    # The answer comes first; its sentences show again in the support and sources below.
    lead = page.get_by_text(re.compile(r"^Each entry of the boiler log records the pressure")).first
    expect(lead).to_be_visible()
    also = page.get_by_text("Also relevant", exact=True).first
    expect(also).to_be_visible()
    # The chosen passage is above "Also relevant"; the passed-over lead below it.
    placed = page.get_by_text(re.compile(r"^The boiler log is kept in the plant office")).first
    assert lead.bounding_box()["y"] < also.bounding_box()["y"] < placed.bounding_box()["y"]
