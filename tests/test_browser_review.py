"""A low-confidence review in a real browser: the review and the draft come first, the run's
steps fold below them in the analyst's words; the analyst picks the "Also relevant" passage
that answers, and the same run completes leading with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import expect_status, seen_on_page, watch_page
from tests.test_browser import ask, create_workspace, go, ingest_files, page  # noqa: F401
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, BOILER_LOG_QUESTION

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The trace's own names, for the Inspector and the JSON, never on the Research page.
RAW = re.compile(r"HITL_triggered|quality_issue_detected|web_searcher|human_review|KB /")

from playwright.sync_api import Page, expect  # noqa: E402


def paused_on_the_boiler_log(page: Page, tmp_path: Path) -> None:  # noqa: F811
    """Two notes ingested and the boiler-log question asked: the run pauses at the picker."""
    notes = {"office.txt": BOILER_LOG_PLACE, "log.txt": BOILER_LOG_ENTRIES}
    for name, text in notes.items():
        (tmp_path / name).write_text(text)
    create_workspace(page, "plant")
    ingest_files(page, [str(tmp_path / n) for n in notes])
    for name in notes:
        expect(page.get_by_text(f"{name}: ingested")).to_be_visible()
    go(page, "Research")
    ask(page, BOILER_LOG_QUESTION)
    expect_status(page, "awaiting review")


def test_lead_with_the_passage_that_answers(page: Page, tmp_path: Path) -> None:  # noqa: F811
    paused_on_the_boiler_log(page, tmp_path)
    review = page.get_by_role("heading", name="Low confidence")
    expect(review).to_be_visible()
    # The review and the draft come first; the steps that led there fold below, in words.
    draft = page.get_by_role("heading", name="Draft answer — awaiting your review")
    fold = page.get_by_text(re.compile(r"How the agent worked: \d+ steps"))
    expect(draft).to_be_visible()
    expect(fold).to_be_visible()
    assert review.bounding_box()["y"] < draft.bounding_box()["y"] < fold.bounding_box()["y"]
    searched = page.get_by_text(
        re.compile(r"Searched your documents: \d+ passages? kept, \d+ below")
    )
    expect(searched.first).to_be_hidden()  # folded
    expect(page.get_by_text(RAW)).to_have_count(0)  # not even folded away
    fold.click()
    expect(searched.first).to_be_visible()
    paused = re.compile(r"Paused for your review: the best passage may not answer \(\d+%\)")
    expect(page.get_by_text(paused)).to_be_visible()
    # The passage picker: each candidate with its place, one click from the answer.
    expect(page.get_by_text("Which passage answers the question?")).to_be_visible()
    expect(page.get_by_text("Option 1", exact=True)).to_be_visible()
    # Each card is titled by its section's heading, else by its document (these notes have none).
    expect(page.get_by_text(re.compile(r"^Option 1 · log\.txt"))).to_be_visible()
    picks = page.get_by_role("button", name="This answers it")
    expect(picks).to_have_count(2)
    picks.nth(1).click()
    expect_status(page, "completed")
    reviewed = page.get_by_text(
        "Reviewed: accepted the draft, leading with “Also relevant” passage 1"
    )
    expect(reviewed).to_have_count(1)
    if not reviewed.is_visible():  # the finished run's steps fold again
        page.get_by_text(re.compile(r"How the agent worked: \d+ steps")).click()
    expect(reviewed).to_be_visible()
    expect(page.get_by_text(RAW)).to_have_count(0)
    # The answer's confidence is the analyst's confirmation, not the figure it paused on.
    confidence = page.get_by_test_id("stMetric").filter(has_text=re.compile("^Confidence"))
    expect(confidence).to_contain_text("Confirmed")
    expect(confidence).not_to_contain_text("%")
    expect(page.get_by_text(re.compile(r"^Confirmed by the analyst at review\."))).to_be_visible()
    # The answer comes first; its sentences show again in the support and sources below.
    lead = page.get_by_text(re.compile(r"^Each entry of the boiler log records the pressure")).first
    expect(lead).to_be_visible()
    also = page.get_by_text("Also relevant", exact=True).first
    expect(also).to_be_visible()
    # The chosen passage is above "Also relevant"; the passed-over lead below it.
    placed = page.get_by_text(re.compile(r"^The boiler log is kept in the plant office")).first
    expect(placed).to_be_visible()
    # Read in one go: the page may redraw between three separate reads of its boxes.
    text = page.get_by_test_id("stMain").inner_text()
    first = text.index("Each entry of the boiler log records the pressure")
    assert (
        first
        < text.index("Also relevant", first)
        < text.index("The boiler log is kept in the plant office", first)
    )


# A state in which the run's status line says completed while any part of the picker is on the
# page, faded or not: the analyst would read the finished answer beside a stale picker.
PICKER_BESIDE_ANSWER = r"""
  const text = this.textContent;
  if (!/Run \w+ · completed/.test(text)) return null;
  const left = text.match(/This answers it|Which passage answers the question\?/);
  return left && `completed, with "${left[0]}" still on the page`;
"""


def test_a_pick_shows_the_answer_and_no_picker(page: Page, tmp_path: Path) -> None:  # noqa: F811
    """Issue 51, point 2, in the browser: after "This answers it" a faded copy of the picker
    had stayed beside the completed answer until the page's next run ended."""
    paused_on_the_boiler_log(page, tmp_path)
    picks = page.get_by_role("button", name="This answers it")
    expect(picks).to_have_count(2)
    watch_page(page, PICKER_BESIDE_ANSWER)
    picks.nth(1).click()
    expect_status(page, "completed")
    lead = page.get_by_text(re.compile(r"^Each entry of the boiler log records the pressure"))
    expect(lead.first).to_be_visible()
    # Every state the page passed through on its way here, faded elements included.
    assert seen_on_page(page) is None, seen_on_page(page)
    expect(page.get_by_text(re.compile("This answers it|Which passage answers"))).to_have_count(0)


def test_a_run_cancelled_in_another_tab_is_no_longer_a_draft_awaiting_review(
    page: Page,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Issue 54, point 3: a run paused at review and then cancelled (here in a second tab)
    had kept its heading "Draft answer — awaiting your review" in the tab that showed it,
    with nothing to say it had ended; that tab now follows the paused run and redraws."""
    notes = {"office.txt": BOILER_LOG_PLACE, "log.txt": BOILER_LOG_ENTRIES}
    for name, text in notes.items():
        (tmp_path / name).write_text(text)
    create_workspace(page, "plant")
    ingest_files(page, [str(tmp_path / n) for n in notes])
    go(page, "Research")
    ask(page, BOILER_LOG_QUESTION)
    expect_status(page, "awaiting review")
    draft = page.get_by_role("heading", name="Draft answer — awaiting your review")
    expect(draft).to_be_visible()
    run_id = re.search(r"run=(\w+)", page.url)
    assert run_id is not None

    browser = page.context.browser
    assert browser is not None
    other = browser.new_page()  # a second tab (a context of its own: no sign-in here)
    other.goto(page.url)
    expect(other.get_by_role("heading", name="Draft answer — awaiting your review")).to_be_visible()
    other.get_by_text("Cancel this run").click()
    other.get_by_role("button", name="Submit and resume").click()
    expect_status(other, "cancelled", run_id.group(1))
    expect(other.get_by_role("heading", name=re.compile("awaiting"))).to_have_count(0)

    expect_status(page, "cancelled", run_id.group(1))  # no click in this tab
    expect(draft).to_have_count(0)
    expect(page.get_by_role("heading", name="Low confidence")).to_have_count(0)
