"""Two analysts in one team server (MASIS_AUTH=local), each in a browser context of their own.

Ann has a workspace with a document and a cited run; Bob has his own. In Chromium, Bob signs
in and sees only his workspace; Ann's run by its ``?run=`` address, on the Research page (with
its page previews) and the Runs page (with its exports), answers exactly as a run that does
not exist. Ann, signed in beside him, sees all of it. A sign-out asks for the password again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ingest.pipeline import Ingestor
from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.browser import server_problems
from tests.browser import streamlit_server as server
from tests.pdfs import make_pdf
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, HEADINGS, WAIT_MS, idle
from tests.texts import BOILER, PUMP

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

QUESTION = "How often is the pump inspected?"
MISSING = "0123456789ab"


def team_data(data: Path) -> str:
    """Accounts root (admin), ann and bob; ann's workspace with a PDF and a cited run. Returns
    the run's id."""
    bench = Workbench(Settings.local(data, provider="offline", ollama_host="http://127.0.0.1:9"))
    accounts = bench.accounts
    accounts.create("root", "root password")
    for name in ("ann", "bob"):
        accounts.create(name, f"{name} password")
        ws = bench.create_workspace(f"{name}-ws", "wordllama")
        accounts.grant(ws.id, name, "owner", actor="root")
    ann = bench.registry.require_workspace("ann-ws")
    assert Ingestor(bench).ingest_bytes(ann, make_pdf([BOILER, PUMP]), "plant.pdf").status == (
        "ingested"
    )
    rec = RunService(bench).ask("ann-ws", QUESTION)
    assert rec.status == "completed" and rec.citations
    return rec.run_id


def separate_pages(pw: Any, n: int) -> tuple[Any, list[Page]]:
    """Chromium with ``n`` pages, each in a browser context of its own (no shared session)."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    expect.set_options(timeout=WAIT_MS)
    pages = [
        browser.new_context(viewport={"width": 1400, "height": 1000}).new_page() for _ in range(n)
    ]
    for page in pages:
        page.set_default_timeout(WAIT_MS)
    return browser, pages


def sign_in(page: Page, name: str) -> None:
    page.get_by_label("Account name").fill(name)
    page.get_by_label("Password", exact=True).fill(f"{name} password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    idle(page)


def landed(page: Page, name: str) -> None:
    """On ``name``, the Account page in the navigation too (accounts are on)."""
    expect(page.get_by_role("heading", name=re.compile(HEADINGS[name])).first).to_be_visible()
    expect(page.locator(".st-key-masis-nav").get_by_role("link")).to_have_count(5)
    idle(page)


def open_as(page: Page, url: str, name: str, where: str) -> None:
    """A tab on an address: the sign-in first unless this browser is signed in already (its
    cookie keeps the sign-in across addresses), then the page the address names."""
    page.goto(url)
    form, signed = page.get_by_role("button", name="Sign in"), page.get_by_text("Signed in as")
    expect(form.or_(signed).first).to_be_visible()
    if form.count():
        sign_in(page, name)
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    landed(page, where)


def workspaces(page: Page) -> list[str]:
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Workspace")
    picker.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return [o.split(" · ")[0] for o in options]


def not_found_text(page: Page, run_id: str) -> str:
    warning = page.get_by_text(re.compile(f"No run .{run_id}. was found"))
    expect(warning).to_be_visible()
    return warning.inner_text().replace(run_id, "ID")


def test_bob_cannot_see_or_open_anns_workspace_runs_previews_or_exports(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "streamlit.log"
    run_id = team_data(data)
    with server(data, log, {"MASIS_AUTH": "local"}) as url, sync_playwright() as pw:
        browser, (ann, bob) = separate_pages(pw, 2)

        open_as(bob, f"{url}/research?run={run_id}", "bob", "Research")
        assert workspaces(bob) == ["bob-ws"]
        hidden = not_found_text(bob, run_id)
        expect(bob.get_by_role("heading", name=QUESTION)).to_have_count(0)
        expect(bob.get_by_test_id("stImage")).to_have_count(0)  # no page preview
        bob.goto(f"{url}/research?run={MISSING}")  # an edited address: still signed in
        expect(bob.get_by_text("Signed in as bob")).to_be_visible()
        assert not_found_text(bob, MISSING) == hidden  # the same words: no existence oracle

        open_as(bob, f"{url}/runs?run={run_id}", "bob", "Runs")
        assert not_found_text(bob, run_id) == hidden
        expect(bob.get_by_text("No runs in this workspace yet")).to_be_visible()
        expect(bob.get_by_role("button", name="Export as Markdown")).to_have_count(0)
        expect(bob.get_by_text(QUESTION)).to_have_count(0)

        open_as(ann, f"{url}/runs?run={run_id}", "ann", "Runs")
        assert workspaces(ann) == ["ann-ws"]
        expect(ann.get_by_role("heading", name=QUESTION)).to_be_visible()
        with ann.expect_download() as download:
            ann.get_by_role("button", name="Export as Markdown").click()
        assert QUESTION in Path(download.value.path()).read_text()
        idle(ann)

        bob.get_by_role("button", name="Sign out").click()
        expect(bob.get_by_role("button", name="Sign in")).to_be_visible()
        expect(bob.get_by_test_id("stSidebar").get_by_role("combobox")).to_have_count(0)
        browser.close()
    assert not server_problems(log)
    audit = Workbench(Settings.local(data)).accounts.audit_log()
    seen = {(e.actor, e.action) for e in audit}
    assert {("ann", "run.export"), ("bob", "signin"), ("bob", "signout")} <= seen
    assert ("bob", "run.export") not in seen
