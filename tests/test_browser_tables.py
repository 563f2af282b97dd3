"""A table ranking in a real browser: upload a medal sheet, ask which country won the most
bronze medals, and the answer is computed over every row, completed, and its cited row is
the one highlighted in the source view (issue 51)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import expect_status
from tests.test_browser import ask, create_workspace, go, ingest_files, page, show_the_page  # noqa: F401
from tests.test_table_aggregate import MEDALS_2016, MOST_BRONZE, medal_sheet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect  # noqa: E402

USA = "1 | USA | 46 | 37 | 38 | 121"


def test_a_ranking_answer_highlights_its_row(page: Page, tmp_path: Path) -> None:  # noqa: F811
    sheet = tmp_path / "medals2016.xlsx"
    sheet.write_bytes(medal_sheet(2016, MEDALS_2016))
    create_workspace(page, "olympics")
    ingest_files(page, [str(sheet)])
    expect(page.get_by_text("medals2016.xlsx: ingested")).to_be_visible()
    go(page, "Research")
    ask(page, MOST_BRONZE)
    expect(page.get_by_text(re.compile(r"USA has the most Bronze: 38\.")).first).to_be_visible()
    expect_status(page, "completed")
    expect(page.get_by_text("Country: Total:")).to_have_count(0)

    page.get_by_text(re.compile(r"^\[1\] medals2016\.xlsx")).click()
    show_the_page(page, "Show the place")
    # The source view draws the rows as a table: USA's row on the highlight colour, and that
    # row alone (the next row, plain).
    table = page.get_by_test_id("stTable").filter(has_text="USA").first
    expect(table).to_be_visible()
    usa = table.get_by_role("row").filter(has_text="USA")
    expect(usa.get_by_role("cell")).to_have_text(USA.split(" | "))
    shade = "el => getComputedStyle(el).backgroundColor"
    highlighted = usa.get_by_role("cell").first.evaluate(shade)
    other = table.get_by_role("row").filter(has_text="Great Britain").get_by_role("cell").first
    assert highlighted.startswith("rgba(255, 164, 33"), highlighted
    assert other.evaluate(shade) != highlighted
