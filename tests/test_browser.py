"""The workbench in a real browser: ``streamlit run`` driven through Debian's Chromium.

What a new analyst does on a fresh machine in offline mode: create a workspace, upload a real
PDF, ask, read node panels and a cited answer, ask something the documents do not cover,
answer the review form, and see the same run finish. Then what an analyst does without
thinking about it: leave a page while its work runs, click through the pages in any order,
open a page by its address — and nothing is lost, nothing crashes, the navigation stays ours.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    chromium_missing_reason,
    expect_status,
    screenshot,
    server_problems,
    shown_run,
)
from tests.browser import streamlit_server as server
from tests.fake_tavily import FakeTavily, result
from tests.pdfs import filler, make_pdf

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORRUPT = Path(__file__).parent / "fixtures" / "corrupt.pdf"
FIXTURE = Path(__file__).parent / "fixtures" / "nut-solaris-usb.pdf"
WAIT_MS = 120_000  # upper bound for one step; the test moves on as soon as the page is ready
NAV = [re.compile(rf"^\W*{name}$") for name in ("Library", "Research", "Inspector", "Runs")]
PAGES = {"Library": "library", "Research": "research", "Inspector": "inspector", "Runs": "runs"}
HEADINGS = {"Library": "Library", "Research": "Research", "Inspector": "Retrieval inspector"}
HEADINGS["Runs"] = "Runs"

reason = chromium_missing_reason()
if reason and os.environ.get("CI") == "true":
    # CI installs Chromium itself (.ci/run); a skip there would hide a broken browser path.
    pytest.fail(f"CI must run the browser test, but {reason}", pytrace=False)
if reason:
    pytest.skip(f"browser test skipped: {reason}", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402


def open_browser(url: str, first_path: str = "") -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        page.goto(f"{url}/{first_path}")
        yield page
        browser.close()


@pytest.fixture
def page(tmp_path: Path):
    with server(tmp_path / "data", tmp_path / "streamlit.log") as url:
        yield from open_browser(url)
    assert not server_problems(tmp_path / "streamlit.log")


def idle(page: Page) -> None:
    """Streamlit shows a 'running' widget while the script runs; wait until it is gone."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=WAIT_MS)


def ask(page: Page, question: str) -> None:
    page.get_by_label("Question", exact=True).fill(question)  # not a review form's fields
    page.get_by_role("button", name="Ask").click()
    idle(page)


def nav_links(page: Page):
    """The app's own navigation at the top of the sidebar (``ui.sidebar.navigation_links``)."""
    return page.locator(".st-key-masis-nav").get_by_role("link")


def go(page: Page, name: str) -> None:
    """Click a page in the navigation, as a person does, and check where we landed."""
    nav_links(page).filter(has_text=name).click()
    landed(page, name)


def landed(page: Page, name: str) -> None:
    """On ``name``: our navigation (never Streamlit's own list, nor the bare file names), our
    sidebar, no exception."""
    expect(page.get_by_role("heading", name=re.compile(HEADINGS[name])).first).to_be_visible()
    expect(nav_links(page)).to_have_text(NAV)
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    expect(page.get_by_text("Offline extractive mode")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


def walk(page: Page, orders: list[list[str]]) -> None:
    for order in orders:
        for name in order:
            go(page, name)


def create_workspace(page: Page, name: str) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    picker = sidebar.get_by_role("combobox", name="Workspace", exact=True)
    expect(sidebar.get_by_text("No workspace yet").or_(picker)).to_be_visible()
    idle(page)
    if picker.count():  # "New workspace" is folded once a workspace exists
        sidebar.get_by_text("New workspace").click()
    name_box = page.get_by_label("Name")
    name_box.fill(name)
    # Enter submits the form, as a person typing a name does. A click on "Create" right after
    # the "New workspace" expander opened was lost about one time in three (the form kept the
    # name, nothing was created: a red CI run, 2026-11-26).
    name_box.press("Enter")
    idle(page)
    expect(picker).to_be_visible()
    expect(picker).to_have_value(re.compile(rf"^{re.escape(name)} · "))
    expect(sidebar.get_by_text("No workspace yet")).to_have_count(0)


def ingest_files(page: Page, files: list) -> None:
    """Choose ``files`` in the Library's uploader and press Ingest once every one has reached
    the server: a click while the 20-file batch was still being sent found the form empty
    ("Choose one or more files first", a red CI run, 2026-11-29). Streamlit shows a file's
    remove button once its upload has started and keeps Ingest disabled until all are done."""
    # Just after a page change the page before may still be fading out with its own uploader.
    expect(page.locator("input[type=file]")).to_have_count(1)
    page.locator("input[type=file]").set_input_files(files)
    for file in files:
        name = file["name"] if isinstance(file, dict) else Path(file).name
        expect(page.get_by_role("button", name=f"Remove {name}", exact=True)).to_be_visible()
    uploader = page.get_by_test_id("stFileUploader")
    expect(uploader.get_by_role("progressbar")).to_have_count(0)
    ingest = page.get_by_role("button", name="Ingest")
    expect(ingest).to_be_enabled()
    ingest.click()


def open_steps(page: Page) -> None:
    """Unfold the steps of the run shown (folded below its answer once it has ended)."""
    fold = page.get_by_text(re.compile(r"How the agent worked: \d+ steps")).first
    step = page.get_by_text(re.compile("Started: planning the search")).first
    expect(fold).to_be_visible()
    if not step.is_visible():
        fold.click()
    expect(step).to_be_visible()


def show_the_page(page: Page, name: str = "Show the page", last: bool = False) -> None:
    """Switch on "Show the page" (a sheet's "Show the place") in the citation just opened:
    the first such switch on the page, or the ``last``."""
    label = page.get_by_text(name)
    switch = page.get_by_role("switch", name=name)
    label, switch = (label.last, switch.last) if last else (label.first, switch.first)
    expect(label).to_be_visible()
    for _ in range(3):  # a click that lands during a rerun is lost; the state tells
        label.click()
        idle(page)
        if switch.is_checked():
            break
    expect(switch).to_be_checked()


def test_upload_ask_review_resume(page: Page, tmp_path: Path) -> None:
    expect(page.get_by_text("Offline extractive mode")).to_be_visible()
    create_workspace(page, "ups-docs")

    # Upload a real PDF on the Library page, with a broken one in the same batch.
    ingest_files(page, [str(CORRUPT), str(FIXTURE)])
    expect(page.get_by_text("corrupt.pdf: failed")).to_be_visible()
    expect(page.get_by_text("nut-solaris-usb.pdf: ingested")).to_be_visible()

    # The first path a new user takes: straight on to Research (this crashed once).
    go(page, "Research")
    ask(page, "Which driver should a USB UPS use on Solaris with NUT?")
    # Once the run has ended its steps fold below the answer, each in words.
    expect(page.get_by_text("Sources", exact=True)).to_be_visible()
    open_steps(page)
    for words in ("Planned", "Searched your documents", "Wrote the draft", "Judged the draft"):
        expect(page.get_by_text(re.compile(words)).first).to_be_visible()
    first_source = page.get_by_text(re.compile(r"^\[1\] nut-solaris-usb\.pdf, page"))
    expect(first_source).to_be_visible()
    expect(page.get_by_text(re.compile(r"UGEN.*\[\d\]")).first).to_be_visible()
    first_source.click()
    show_the_page(page)
    expect(page.get_by_role("img").first).to_be_visible()
    # open its telemetry (a retried run has one panel per pass)
    open_steps(page)  # the page reran for the image: the fold may have closed
    page.get_by_text(re.compile(r"Searched your documents: \d+ passages? kept")).first.click()
    expect(page.get_by_text("the bar (similarity)").first).to_be_visible()
    page.get_by_role("heading", name=re.compile("Which driver")).scroll_into_view_if_needed()
    screenshot(page, "research-page.png", tmp_path)

    # A paused run's answer is a draft: no follow-up until the analyst accepts it.
    if page.get_by_text(re.compile(r"Run `?\w+`? · awaiting review")).count():
        expect(page.get_by_role("textbox", name="Your follow-up")).to_have_count(0)
        # An offline draft is a passage picker: the lead's "This answers it" accepts it.
        page.get_by_role("button", name="This answers it").first.click()
        expect_status(page, "completed")

    # A follow-up: made standalone from the thread, shown and editable, run as its own turn.
    follow_up = page.get_by_role("textbox", name="Your follow-up")
    follow_up.fill("How is it bound to the device?")
    follow_up.press("Enter")
    idle(page)
    page.get_by_role("button", name="Rewrite as a standalone question").click()
    rewritten = page.get_by_role("textbox", name=re.compile("Standalone follow-up"))
    # The previous question names several things, so "it" is left as typed and the
    # question it follows goes with it (never "How is USB UPS use bound ...").
    expect(rewritten).to_have_value(
        "How is it bound to the device? (Follow-up to: Which driver should a USB UPS use on "
        "Solaris with NUT?)"
    )
    page.get_by_role("button", name="Ask this follow-up").click()
    expect(page.get_by_text(re.compile(r"Follow-up 1 in thread"))).to_be_visible()
    expect(page.get_by_role("heading", name="How is it bound to the device?")).to_be_visible()

    # After a run: every page, in several orders.
    walk(page, [["Inspector", "Runs", "Library", "Research"], ["Runs", "Research", "Inspector"]])
    go(page, "Research")  # the session's last run is still there
    # Completed, or paused at review where the judge doubts that its lead answers.
    follow_up_run = shown_run(page)
    expect_status(page, "completed|awaiting review", follow_up_run)

    # Something the manual does not cover: the run pauses with a form in place.
    ask(page, "What was the population of Mongolia's capital city in 1990?")
    expect(page.get_by_text("No qualifying evidence")).to_be_visible()
    expect_status(page, "awaiting review", shown_run(page, other_than=follow_up_run))
    screenshot(page, "review-form.png", tmp_path)
    page.get_by_text("Rephrase the question").click()
    field = page.get_by_label("New question")
    new_question = "How is the UGEN driver bound to a USB device on Solaris?"
    field.fill(new_question)
    field.press("Enter")
    idle(page)
    page.get_by_role("button", name="Submit and resume").click()
    open_steps(page)
    expect(page.get_by_text(re.compile(r"Reviewed: rephrased the question"))).to_be_visible()
    # The rephrased run answered: completed, or paused again on the judge's doubt (61%: its lead
    # names UGEN but not how it is bound).
    expect_status(page, "completed|awaiting review")
    expect(page.get_by_text("Sources", exact=True)).to_be_visible()
    # The heading follows the rephrase.
    expect(page.get_by_role("heading", name=new_question)).to_be_visible()
    run_url = page.url
    assert "run=" in run_url

    # After a review: every page again, in other orders, then each page by its address.
    walk(page, [["Library", "Inspector", "Research", "Runs"], ["Research", "Library"]])
    base = run_url.split("/research")[0]
    for name, path in PAGES.items():
        page.goto(f"{base}/{path}")
        landed(page, name)
    page.goto(run_url)  # a shared link to the run
    landed(page, "Research")
    expect(page.get_by_role("heading", name=new_question)).to_be_visible()


def test_work_goes_on_while_the_analyst_is_elsewhere(tmp_path: Path) -> None:
    """A run held at the web edge and a 20-file batch, each left for another page and found
    finished on return, and the Runs page left open on the running run shows it end; the
    first request opens a page by its address."""
    question = "At what pressure does the relief valve of the pump open?"
    with FakeTavily() as tavily:
        gate = threading.Event()
        tavily.state.hang[question] = gate  # the run waits here until the test lets it go
        tavily.state.results[question] = [
            result("Pump notes", "https://example.org/pump", "The relief valve opens at 230 bar.")
        ]
        env = {
            "TAVILY_API_KEY": "tvly-test",
            "MASIS_TAVILY_BASE_URL": tavily.url,
            "MASIS_TAVILY_TIMEOUT_S": "60",
        }
        log = tmp_path / "streamlit.log"
        with server(tmp_path / "data", log, env) as url:
            for page in open_browser(url, "inspector"):  # a bookmark, on a fresh server
                expect(page.get_by_text("Create a workspace in the sidebar")).to_be_visible()
                landed(page, "Inspector")
                create_workspace(page, "batch")
                go(page, "Library")

                pdfs = []
                for i in range(20):
                    path = tmp_path / f"manual-{i:02d}.pdf"
                    text = filler(f"component {i}", 250)
                    if i == 7:
                        text += " The relief valve of the pump opens at 230 bar."
                    path.write_bytes(make_pdf([text, filler(f"part {i}", 200)]))
                    pdfs.append(str(path))
                ingest_files(page, pdfs)
                started = re.compile(r"of 20 files done|manual-00\.pdf: ingested")
                expect(page.get_by_text(started).first).to_be_visible()
                go(page, "Inspector")  # leave while the batch runs
                go(page, "Library")
                for i in range(20):
                    expect(page.get_by_text(f"manual-{i:02d}.pdf: ingested")).to_be_visible()
                expect(page.get_by_text("Last upload")).to_be_visible()

                go(page, "Research")
                page.get_by_text("Search the web too").click()
                ask(page, question)
                expect(page.get_by_text(re.compile("Searched your documents"))).to_be_visible()
                go(page, "Inspector")  # the run is still waiting for the web
                go(page, "Runs")
                # The run's status line (the history table's cells are drawn on a canvas).
                expect(page.get_by_text(re.compile(r"Run `?\w+`? · running"))).to_be_visible()
                expect(page.get_by_text("1 run still running")).to_be_visible()
                gate.set()
                # The Runs page, untouched, follows the run to its end (it had shown a finished
                # run as running until the next click).
                expect(page.get_by_text(re.compile(r"Run `?\w+`? · completed"))).to_be_visible()
                expect(page.get_by_text("still running")).to_have_count(0)
                go(page, "Research")
                expect(page.get_by_text(re.compile(r"Run `?\w+`? · completed"))).to_be_visible()
                open_steps(page)
                for words in ("Searched the web", "Wrote the draft", "Checked the citations"):
                    expect(page.get_by_text(re.compile(words)).first).to_be_visible()
                expect(page.get_by_text("230 bar").first).to_be_visible()
    assert not server_problems(log)
