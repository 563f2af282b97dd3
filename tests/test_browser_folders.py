"""A followed folder in a real browser (issue 56): follow it, sync, change a file, sync again,
compare the two versions side by side and open each version's page — on a fresh
``streamlit run`` driven through Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import server_problems
from tests.browser import streamlit_server as server
from tests.test_browser import create_workspace, idle, show_the_page
from tests.test_browser_navigation import browser_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Locator, Page, expect  # noqa: E402

POLICY = (
    "# Travel policy\n\n## Expenses\n\nMeals are refunded up to {n} euros a day.\n"
    "Taxis are refunded at night.\n"
)


def open_version_page(page: Page, version: int, euros: str, not_there: str) -> Locator:
    """Switch on "Show vN's page 1" below the comparison as a person does; the page shown is
    that version's text, and none of the other's."""
    show_the_page(page, f"Show v{version}'s page 1")
    shown = page.locator(f"[class*='st-key-version-page-{version}-']")
    expect(page.get_by_text(f"travel.md, v{version}, p. 1: the page as it was")).to_be_visible()
    expect(shown).to_contain_text(f"Meals are refunded up to {euros} euros a day.")
    expect(shown).to_contain_text("Taxis are refunded at night.")
    expect(shown).not_to_contain_text(not_there)
    return shown


def test_follow_sync_change_sync_and_compare(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "travel.md").write_text(POLICY.format(n=40))
    log = tmp_path / "streamlit.log"
    with server(tmp_path / "data", log) as url:
        for page in browser_page(url, "library"):
            create_workspace(page, "policies")
            page.get_by_text("Followed folders").click()
            page.get_by_label("Folder on the server to follow").fill(str(folder))
            page.get_by_role("button", name="Follow").click()
            idle(page)
            expect(page.get_by_text(str(folder.resolve()))).to_be_visible()
            page.get_by_role("button", name="Sync now").click()
            expect(page.get_by_text("Sync done: 1 added")).to_be_visible()
            (folder / "travel.md").write_text(POLICY.format(n=55))
            page.get_by_role("button", name="Sync now").click()
            expect(page.get_by_text("Sync done: 1 updated")).to_be_visible()
            idle(page)
            page.get_by_text("2 versions of travel.md").click()
            page.get_by_role("button", name="Compare versions").click()
            idle(page)
            expect(page.get_by_text("travel.md, v1, p. 1").first).to_be_visible()
            expect(page.get_by_text("travel.md, v2, p. 1").first).to_be_visible()
            old = page.get_by_text("40", exact=True)
            new = page.get_by_text("55", exact=True)
            expect(old).to_be_visible()
            expect(new).to_be_visible()
            # Each version's page, opened from its side of the comparison, is its own text.
            v1 = open_version_page(page, 1, "40", not_there="55")
            open_version_page(page, 2, "55", not_there="40")
            expect(v1).to_contain_text("40 euros")  # the first stays open beside it
    assert not server_problems(log)
