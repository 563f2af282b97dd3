"""Addresses and reloads in a real browser: every page by its own address, never Streamlit's
file-name page list, a run's link (``?run=ID``) that survives a reload in its own workspace,
a batch whose boxes and document list follow each file, and a quiet server log.

What a person does without thinking about it: bookmark a page, reload, paste a link to a run,
watch a batch go by — each on a fresh ``streamlit run`` server driven through Chromium.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import expect_status, run_in, server_problems, shown_run
from tests.browser import streamlit_server as server
from tests.fake_ollama import FakeOllama
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    HEADINGS,
    WAIT_MS,
    create_workspace,
    go,
    idle,
    ingest_files,
    landed,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

# Every page's own address; the root opens the Library too.
ADDRESSES = {"library": "Library", "research": "Research", "inspector": "Inspector", "runs": "Runs"}
# Streamlit's page list for a ``pages/`` folder names the files: "app", "inspector", …
FILE_NAMES = re.compile(r"^\s*(app|inspector|library|research|runs)\s*$", re.MULTILINE)
# Records, from before the first byte of the app is drawn, every text any of Streamlit's own
# navigation menus ever showed: a list that flashes for a moment is caught too.
WATCH_NAV = """
window.__navTexts = [];
new MutationObserver(() => {
  const menus = document.querySelectorAll(
    '[data-testid="stSidebarNav"], [data-testid="stSidebarNavItems"], [data-testid="stTopNav"]'
  );
  for (const menu of menus) {
    const text = menu.innerText || "";
    if (!window.__navTexts.includes(text)) window.__navTexts.push(text);
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""
OFF_TOPIC = "What was the population of Mongolia's capital city in {year}?"


def browser_page(url: str, first_path: str) -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        page.add_init_script(WATCH_NAV)
        page.goto(f"{url}/{first_path}")
        yield page
        browser.close()


def file_lists_seen(page: Page) -> list[str]:
    return [t for t in page.evaluate("window.__navTexts") if FILE_NAMES.search(t)]


def not_found(page: Page) -> None:
    expect(page.get_by_text("Page not found")).to_have_count(0)


def workspace_shown(page: Page, name: str) -> None:
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Workspace", exact=True)
    expect(picker).to_have_value(re.compile(rf"^{re.escape(name)} · "))


def ask(page: Page, question: str) -> None:
    """Ask a question the documents do not cover: a new run, paused for review."""
    before = run_in(page.url)
    page.get_by_label("Question", exact=True).fill(question)
    page.get_by_role("button", name="Ask").click()
    expect_status(page, "awaiting review", shown_run(page, other_than=before))
    idle(page)


def test_every_page_opens_by_its_address_and_the_file_list_never_shows(tmp_path: Path) -> None:
    """The first request of a fresh server is a bookmark (``/research``); then every page by
    its address, the Library's included, and the root. Streamlit's file-name list must not
    show even for a moment, and no page says "Page not found"."""
    log = tmp_path / "streamlit.log"
    with server(tmp_path / "data", log) as url:
        for page in browser_page(url, "research"):
            landed(page, "Research")
            not_found(page)
            for path, name in [*ADDRESSES.items(), ("", "Library")]:
                page.goto(f"{url}/{path}")
                landed(page, name)
                not_found(page)
                idle(page)
            assert file_lists_seen(page) == []
            # A second browser's first request, on a server that has served pages already.
            for path, name in ADDRESSES.items():
                fresh = page.context.browser.new_page()
                fresh.add_init_script(WATCH_NAV)
                fresh.goto(f"{url}/{path}")
                landed(fresh, name)
                not_found(fresh)
                idle(fresh)
                assert file_lists_seen(fresh) == []
                fresh.close()
    assert not server_problems(log)


def test_a_run_link_reloads_in_its_own_workspace(tmp_path: Path) -> None:
    """Two workspaces; in the second, two paused runs. Open the older one from the Research
    page, reload: the second workspace and that run are shown. ``/runs?run=ID`` opens that
    run, not the newest; an id that names no run says so. The first workspace chosen, a
    reload and a new tab keep it."""
    log = tmp_path / "streamlit.log"
    with server(tmp_path / "data", log) as url:
        for page in browser_page(url, ""):
            create_workspace(page, "alpha")
            create_workspace(page, "beta")
            workspace_shown(page, "beta")
            go(page, "Research")
            older, newer = OFF_TOPIC.format(year=1990), OFF_TOPIC.format(year=2000)
            ask(page, older)
            older_url = page.url
            assert "run=" in older_url
            ask(page, newer)
            expect(page.get_by_role("heading", name=newer)).to_be_visible()
            # Both runs paused, as the list shows them (the newer's job done with its page).
            expect(page.get_by_text("2 paused run(s) wait for your review")).to_be_visible()

            # The paused run's button opens it; then the browser reloads the page.
            run_id = run_in(older_url)
            page.get_by_text(re.compile(r"paused run\(s\) wait for your review")).click()
            page.get_by_role("button", name=re.compile(rf"^{run_id} ·")).click()
            expect(page.get_by_role("heading", name=older)).to_be_visible()
            idle(page)
            assert f"run={run_id}" in page.url
            page.reload()
            landed(page, "Research")
            workspace_shown(page, "beta")
            expect(page.get_by_role("heading", name=older)).to_be_visible()
            expect_status(page, "awaiting review", run_id)

            # The same link, pasted into a fresh tab: no session to fall back on.
            page.goto(f"{url}/research?run={run_id}")
            landed(page, "Research")
            workspace_shown(page, "beta")
            expect(page.get_by_role("heading", name=older)).to_be_visible()

            # The Runs page opens the run its address names, in that run's workspace.
            page.goto(f"{url}/runs?run={run_id}")
            landed(page, "Runs")
            workspace_shown(page, "beta")
            expect(page.get_by_role("heading", name=older)).to_be_visible()
            expect(page.get_by_role("heading", name=newer)).to_have_count(0)
            page.reload()
            landed(page, "Runs")
            expect(page.get_by_role("heading", name=older)).to_be_visible()

            # An id that names no run says so, on both pages.
            for path, name in (("research", "Research"), ("runs", "Runs")):
                page.goto(f"{url}/{path}?run=0123456789abcdef")
                landed(page, name)
                expect(page.get_by_text(re.compile("No run .*0123456789abcdef"))).to_be_visible()

            # The workspace is in the address: a page reloaded without a run kept the first
            # workspace ("No documents yet"); a bare address in a new tab opens the last choice.
            sidebar = page.get_by_test_id("stSidebar")
            sidebar.get_by_role("combobox", name="Workspace", exact=True).click()
            page.get_by_role("option", name=re.compile(r"^alpha · ")).click()
            workspace_shown(page, "alpha")
            idle(page)
            go(page, "Library")
            expect(page).to_have_url(re.compile(r"/library\?(.*&)?ws=alpha"))
            page.reload()
            landed(page, "Library")
            workspace_shown(page, "alpha")
            tab = page.context.browser.new_page()  # no session of its own to fall back on
            tab.goto(f"{url}/inspector")
            landed(tab, "Inspector")
            workspace_shown(tab, "alpha")
            tab.close()
    assert not server_problems(log)


def status_box(page: Page, name: str):
    return page.get_by_test_id("stExpander").filter(has_text=name)


def listed_document(page: Page, name: str):
    """The document list's bold file name; a batch box's table may show the same name."""
    return page.locator("strong").filter(has_text=re.compile(rf"^{re.escape(name)}$"))


def test_batch_boxes_and_documents_follow_each_file(tmp_path: Path) -> None:
    """Three files; the second waits at embedding (a fake Ollama holds it). While it waits,
    the first is in the document list, and the two unfinished files show no ✓."""
    gate = threading.Event()
    with FakeOllama() as ollama:
        ollama.state.embed_gates["zanzibar"] = gate
        log = tmp_path / "streamlit.log"
        # Not MASIS_PROVIDER=offline: under it a new workspace never embeds through Ollama.
        env = {"OLLAMA_HOST": ollama.url, "MASIS_PROVIDER": "auto"}
        try:
            with server(tmp_path / "data", log, env) as url:
                for page in browser_page(url, "library"):
                    page.get_by_label("Name").fill("held")
                    # Ollama answers, so its embedder is preselected: the batch embeds there.
                    embedder = page.get_by_role("combobox", name=re.compile("Embedding model"))
                    expect(embedder).to_have_value("ollama:nomic-embed-text")
                    page.get_by_role("button", name="Create").click()
                    workspace_shown(page, "held")
                    idle(page)
                    files = []
                    for name, body in (
                        ("a-first.md", "The boiler is serviced every spring by the crew."),
                        ("b-second.md", "The zanzibar valve is checked every week."),
                        ("c-third.md", "The pump runs at four bar on the night shift."),
                    ):
                        path = tmp_path / name
                        path.write_text(f"# {name}\n\n{body}\n")
                        files.append(str(path))
                    ingest_files(page, files)
                    expect(page.get_by_text("a-first.md: ingested")).to_be_visible()
                    expect(page.get_by_text(re.compile(r"1 of 3 files done"))).to_be_visible()
                    for name in ("b-second.md", "c-third.md"):
                        box = status_box(page, name)
                        expect(box).to_have_count(1)
                        expect(box.get_by_test_id("stExpanderIconSpinner")).to_have_count(1)
                        expect(box.get_by_test_id("stExpanderIconCheck")).to_have_count(0)
                    # The finished file is listed while the batch goes on.
                    expect(page.get_by_text("No documents yet.")).to_have_count(0)
                    expect(listed_document(page, "a-first.md")).to_be_visible()
                    expect(page.get_by_text(re.compile(r"1 of 3 files done"))).to_be_visible()
                    assert not gate.is_set()
                    gate.set()
                    for name in ("b-second.md", "c-third.md"):
                        expect(page.get_by_text(f"{name}: ingested")).to_be_visible()
                        box = status_box(page, name)
                        expect(box.get_by_test_id("stExpanderIconCheck")).to_have_count(1)
                    expect(listed_document(page, "c-third.md")).to_be_visible()
        finally:
            gate.set()
    assert not server_problems(log)


def test_pdf_exports_leave_the_server_log_readable(tmp_path: Path) -> None:
    """Exporting a run as PDF three times: the log keeps our lines, not fontTools' INFO."""
    from tests.pdfs import make_pdf
    from tests.texts import BOILER, PUMP

    log = tmp_path / "streamlit.log"
    manual = tmp_path / "plant.pdf"
    manual.write_bytes(make_pdf([BOILER, PUMP]))
    with server(tmp_path / "data", log) as url:
        for page in browser_page(url, "library"):
            create_workspace(page, "plant")
            ingest_files(page, [str(manual)])
            expect(page.get_by_text("plant.pdf: ingested")).to_be_visible()
            go(page, "Research")
            page.get_by_label("Question").fill("How often must the hydraulic pump be inspected?")
            page.get_by_role("button", name="Ask").click()
            expect(page.get_by_text(re.compile(r"Run `?\w+`? · completed"))).to_be_visible()
            go(page, "Runs")
            for _ in range(3):
                with page.expect_download() as download:
                    page.get_by_role("button", name="Export as PDF").click()
                assert download.value.path().read_bytes().startswith(b"%PDF")
                idle(page)
    lines = log.read_text(errors="replace").splitlines()
    noisy = [line for line in lines if "fontTools" in line]
    assert noisy == [], f"{len(noisy)} of {len(lines)} log lines are fontTools': {noisy[:3]}"
    assert not server_problems(log)


assert set(HEADINGS) == set(ADDRESSES.values())
