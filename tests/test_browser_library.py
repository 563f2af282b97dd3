"""What the Library tells an analyst about a file just ingested, read in a real browser: one
count of the pages that gave no text, said the same way in the file's line and its table
(issue 54, point 9)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from tests.browser import seen_on_page, watch_page
from tests.pdfs import filler, make_pdf
from tests.test_browser import create_workspace, idle, ingest_files, page, show_the_page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402


def table_row(page: Page, name: str) -> dict[str, str]:  # noqa: F811
    """The "Last upload" table's row of ``name``, by column, as the table's own "Download as
    CSV" gives it (the grid draws its cells on a canvas)."""
    # Chromium would offer its save dialog (the File System Access API); without it the grid
    # downloads the file as any browser does.
    page.evaluate("delete window.showSaveFilePicker")
    grid = page.get_by_test_id("stDataFrame").first
    button = grid.get_by_role("button", name="Download as CSV")
    # The toolbar shows on hover and fades in. A forced click landed on the grid beneath it
    # before it had (no download, 2026-11-29); Playwright's own click waits until the button is
    # the element under the pointer, as a person's eye does. Under load the toolbar once faded
    # out again while the click waited (120 s); a person moves the pointer over the table again.
    for attempt in range(3):
        grid.hover()
        try:
            with page.expect_download() as download:
                button.click(timeout=15_000)
            break
        except PlaywrightTimeoutError:
            if attempt == 2:
                raise
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    return next(row for row in rows if row["file"] == name)


def test_the_library_counts_a_blank_page_once_under_pages_without_text(
    page: Page,  # noqa: F811
    tmp_path: Path,
) -> None:
    pdf = tmp_path / "separated.pdf"
    pdf.write_bytes(make_pdf([filler("pump", 120), "", filler("valve", 120)]))
    create_workspace(page, "counts")
    ingest_files(page, [str(pdf)])
    page.get_by_text("separated.pdf: ingested").click()  # the file's box opens
    line = page.get_by_text(re.compile(r"separated\.pdf: 3 pages"))
    expect(line).to_be_visible()
    # The line names the blank page under the same words the table counts it by.
    expect(line).to_contain_text("1 of 3 pages without text: blank, nothing on them (page 2)")
    row = table_row(page, "separated.pdf")
    assert row["pages without text"] == "1", row
    assert "1 of 3 pages without text" in row["notes"], row


# A state in which the batch's line counts fewer files done than the boxes below it show
# finished, or still runs beside the finished batch's table: the line had been read before the
# boxes, which went on reading the files as the worker finished them.
BATCH_LINE_BEHIND = r"""
  const text = this.textContent;
  const finished = [...this.querySelectorAll('[data-testid="stExpander"] summary')]
    .filter(s => /: (ingested|duplicate|failed)\s*$/.test(s.textContent)).length;
  for (const line of text.matchAll(/⏳ (\d+) of \d+ files done/g)) {
    if (Number(line[1]) < finished) return `"${line[0]}" above ${finished} files shown done`;
    if (text.includes("Last upload")) return `"${line[0]}" beside the finished batch`;
  }
  return null;
"""


def test_the_batch_line_keeps_up_with_its_files(page: Page, tmp_path: Path) -> None:  # noqa: F811
    """Issue 51's browser run: the Library's batch line lagged one rerun behind the files
    (three done while five showed ingested), until the page's next run."""
    pdfs = []
    for i in range(8):
        pdf = tmp_path / f"batch-{i}.pdf"
        pdf.write_bytes(make_pdf([filler(f"pump {i}", 200), filler(f"valve {i}", 200)]))
        pdfs.append(str(pdf))
    create_workspace(page, "batch")
    watch_page(page, BATCH_LINE_BEHIND)
    ingest_files(page, pdfs)
    for i in range(8):
        expect(page.get_by_text(f"batch-{i}.pdf: ingested")).to_be_visible()
    expect(page.get_by_text("Last upload")).to_be_visible()  # no click: the page moved on
    expect(page.get_by_text(re.compile("files done"))).to_have_count(0)
    assert seen_on_page(page) is None, seen_on_page(page)


def test_a_sheet_is_cited_and_shown_by_the_row_that_answers(
    page: Page,  # noqa: F811
    tmp_path: Path,
) -> None:
    from tests.test_browser import ask, go
    from tests.test_sheet_citations import QUESTION, medals_xlsx

    sheet = tmp_path / "medals.xlsx"
    sheet.write_bytes(medals_xlsx())
    create_workspace(page, "games")
    ingest_files(page, [str(sheet)])
    page.get_by_text("medals.xlsx: ingested").click()
    # Its size in sheets and rows, in the file's line and in the document list: not "pages".
    expect(
        page.get_by_text(re.compile(r"medals\.xlsx: 1 sheet, 15 rows, \d+ chunks"))
    ).to_be_visible()
    expect(page.get_by_text("1 sheet, 15 rows", exact=True)).to_be_visible()

    go(page, "Research")
    ask(page, QUESTION)
    source = page.get_by_text("medals.xlsx, Medals, row 18", exact=False).last
    expect(source).to_be_visible()
    source.click()
    show_the_page(page, "Show the place", last=True)
    table = page.get_by_test_id("stTable").filter(has_text="Kenya").first
    expect(table).to_be_visible()
    kenya = table.get_by_role("row").filter(has_text="Kenya")
    expect(kenya.get_by_role("cell")).to_have_text(["Kenya", "6", "6", "1"])
    spain = table.get_by_role("row").filter(has_text="Spain")
    shade = "el => getComputedStyle(el).backgroundColor"
    highlighted = kenya.get_by_role("cell").first.evaluate(shade)
    plain = spain.get_by_role("cell").first.evaluate(shade)
    assert highlighted != plain, (highlighted, plain)
    assert highlighted.startswith("rgba(255, 164, 33"), highlighted
