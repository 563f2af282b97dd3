"""Untrusted text in a real browser: a document and a question with an image in Markdown, bare
web and e-mail addresses and bidi override characters. Streamlit's Markdown links a bare
address after parsing, whatever the backslashes: only Chromium's HTML tells what a person
gets. The rule (``masis_core.text.markup``): no ``<a>``, ``<img>`` or ``<script>`` from
untrusted text anywhere — answer, support per sentence, sources, heading, node panels, Runs,
Inspector — the addresses shown in full as code, the bidi controls gone.
"""

from __future__ import annotations

import re

import pytest

from tests.test_browser import ask, create_workspace, go, idle, ingest_files, page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect  # noqa: E402

NOTE = (
    "Pump bulletin for the plant floor.\n\n"
    "The hydraulic pump must be inspected every 500 operating hours as shown in "
    "![x](https://evil.example/t.png) and at https://evil.example/manual by the technician. "
    "Questions about the hydraulic pump inspection go to pumps@evil.example or www.evil.example "
    "before the \u202eevil\u202c visit. Visitors sign the register at the front desk."
)
QUESTION = "How often must the hydraulic pump be inspected, see https://evil.example/q \u202eok?"
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def open_every_panel(tab: Page) -> None:
    """Expand every collapsed expander and status panel, so their contents are drawn; again
    for those an opened one holds (a run's steps fold into one expander once it ends)."""
    for _ in range(3):
        # Handles, not nth() locators: an opened one leaves the ":not([open])" list, and the
        # indices would then point at the hidden panels inside the fold.
        closed = tab.locator("[data-testid=stMain] details:not([open]) > summary")
        shown = [summary for summary in closed.element_handles() if summary.is_visible()]
        for summary in shown:
            summary.click()
        idle(tab)
        if not shown:
            break


def untrusted_links(tab: Page) -> dict[str, list[str]]:
    """Links, images and scripts in the main area that come from the tab's text: every link
    but Streamlit's heading anchors ("#…") and the app's own pages."""
    main = tab.get_by_test_id("stMain")
    origin = tab.url.split("/", 3)[:3]
    ours = ("#", "/", "/".join(origin))
    return {
        "a": [
            a.evaluate("e => e.outerHTML")
            for a in main.locator("a").all()
            if not (a.get_attribute("href") or "").startswith(ours)
        ],
        "img": [i.evaluate("e => e.outerHTML") for i in main.locator("img[src*=evil]").all()],
        "script": [s.inner_html() for s in main.locator("script").all()],
    }


def assert_inert(tab: Page) -> str:
    links = untrusted_links(tab)
    assert links == {"a": [], "img": [], "script": []}, links
    html = tab.get_by_test_id("stMain").inner_html()
    # What the analyst is typing stays as typed; everything shown from it and from documents
    # has the bidi controls removed.
    shown = re.sub(r"<textarea[^>]*>.*?</textarea>", "", html, flags=re.S)
    assert not BIDI.search(shown), BIDI.findall(shown)
    return html


def test_addresses_in_documents_and_questions_are_text_in_the_browser(page: Page) -> None:  # noqa: F811
    create_workspace(page, "plant")
    ingest_files(
        page, [{"name": "bulletin.txt", "mimeType": "text/plain", "buffer": NOTE.encode()}]
    )
    expect(page.get_by_text("bulletin.txt: ingested")).to_be_visible()

    go(page, "Research")
    ask(page, QUESTION)
    expect(page.get_by_text("Support per sentence")).to_be_visible()
    open_every_panel(page)
    html = assert_inert(page)
    # The addresses are there, in full, as code text: in the heading, the answer, the quotes.
    shown = page.get_by_test_id("stMain").locator("code")
    expect(shown.filter(has_text="https://evil.example/manual").first).to_be_visible()
    expect(shown.filter(has_text="https://evil.example/q").first).to_be_visible()
    assert "https://evil.example/t.png" in html and "pumps@evil.example" in html
    heading = page.get_by_role("heading", name=re.compile("hydraulic pump be inspected"))
    expect(heading.locator("code")).to_have_text("https://evil.example/q")
    expect(page.get_by_text(re.compile(r"evil visit"))).not_to_have_count(0)  # bidi dropped

    for name in ("Runs", "Inspector"):
        go(page, name)
        open_every_panel(page)
        assert_inert(page)
