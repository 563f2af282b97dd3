"""A sign-in that survives a reload and a second tab (``MASIS_AUTH=local``), through Chromium
and the README's own command (``streamlit run app.py``: the cookie had worked only through
``serve.py``, a command the README did not give).

The sign-in had lived only in Streamlit's session state: a reload, a bookmark or an edited
address (each a new Streamlit session) asked for the password again. Now an HttpOnly,
SameSite=Strict cookie holds the signed server-side session id: a reload and a second tab stay
signed in; a sign-out, an admin's reset and a removal still end it at the next click.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from masis_core.config import Settings
from masis_core.workspaces.workbench import Workbench
from tests.browser import free_port, server_problems
from tests.browser import streamlit_server as server
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, idle
from tests.test_browser_access import landed, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402


def readme_script() -> str:
    """The script the README's set-up starts (``streamlit run X``)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    found = re.search(r"^streamlit run (\S+)$", readme, re.MULTILINE)
    assert found, "the README gives no `streamlit run` command"
    return found.group(1)


def signed_in(page: Page, name: str) -> None:
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in")).to_have_count(0)
    idle(page)


def signed_out(page: Page) -> None:
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    idle(page)


def test_a_sign_in_survives_a_reload_and_a_second_tab_until_it_ends(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "streamlit.log"
    bench = Workbench(Settings.local(data, provider="offline", ollama_host="http://127.0.0.1:9"))
    bench.accounts.create("root", "root password")
    for name in ("ann", "bob"):
        bench.accounts.create(name, f"{name} password")
    env = {"MASIS_AUTH": "local"}
    script = readme_script()
    with server(data, log, env, script=script) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=WAIT_MS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(WAIT_MS)
        first = context.new_page()
        first.goto(f"{url}/library")
        signed_out(first)
        sign_in(first, "ann")
        landed(first, "Library")
        cookie = next(c for c in context.cookies() if c["name"] == "masis_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "masis_session" not in first.evaluate("document.cookie")  # no script reads it

        first.reload()  # a new Streamlit session: the cookie signs it in
        signed_in(first, "ann")
        second = context.new_page()
        second.goto(f"{url}/runs")  # a bookmark, in a second tab
        signed_in(second, "ann")
        landed(second, "Runs")

        first.get_by_role("button", name="Sign out").click()
        signed_out(first)
        second.locator(".st-key-masis-nav").get_by_role("link", name="Library").click()
        signed_out(second)  # the next click in the other tab
        second.reload()
        signed_out(second)  # the cookie no longer signs anyone in

        sign_in(second, "bob")
        bench.accounts.set_password("bob", "bob's new password", actor="root")  # a reset
        second.reload()
        signed_out(second)
        browser.close()
    assert not server_problems(log)


def test_a_tab_whose_server_session_is_gone_stays_signed_in_without_a_reload(
    tmp_path: Path,
) -> None:
    """The one-minute drop: a tab left alone went back to the sign-in form. Streamlit forgets
    a session whose websocket stayed cut (keepalive: 30 s ping, 30 s to answer; then
    ``server.disconnectedSessionTTL``, 120 s), and the tab reconnects as a new session, which
    had no sign-in. Here the server forgets it by restarting on the same port; the tab,
    never reloaded, reconnects and is still signed in (the cookie rides the new websocket)."""
    data = tmp_path / "data"
    bench = Workbench(Settings.local(data, provider="offline", ollama_host="http://127.0.0.1:9"))
    bench.accounts.create("ann", "ann password")
    env, script, port = {"MASIS_AUTH": "local"}, readme_script(), free_port()
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=WAIT_MS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        with server(data, logs[0], env, script=script, port=port) as url:
            page.goto(f"{url}/runs")
            signed_out(page)
            sign_in(page, "ann")
            landed(page, "Runs")
        with server(data, logs[1], env, script=script, port=port):
            idle(page)  # "Connecting" until the tab has reconnected by itself: a new session
            page.locator(".st-key-masis-nav").get_by_role("link", name="Library").click()
            landed(page, "Library")  # drawn by the new session, in the same tab
            signed_in(page, "ann")
        browser.close()
    assert not any(server_problems(log) for log in logs)
