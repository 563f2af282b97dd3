"""DNS rebinding against the no-sign-in mode (``MASIS_AUTH=none``), through Chromium.

A foreign site's name resolved to 127.0.0.1 (``--host-resolver-rules``) made its own script
same-origin with the workbench: it had read a run's answer by its address. Now a page reached
by any name but ``localhost``, ``127.0.0.1``, ``[::1]`` or one the operator lists is refused
before a workspace is read; ``localhost`` still works.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.browser import server_problems
from tests.browser import streamlit_server as server
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from playwright.sync_api import expect, sync_playwright  # noqa: E402

REBIND = "rebind.attacker.example"


def test_a_rebound_name_is_refused_and_localhost_served(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "streamlit.log"
    bench = Workbench(Settings.local(data, provider="offline", ollama_host="http://127.0.0.1:9"))
    bench.create_workspace("secret-ws", "wordllama")
    run_id = RunService(bench).ask("secret-ws", "What is the secret?").run_id
    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REBIND} 127.0.0.1"]
    with server(data, log) as url, sync_playwright() as pw:
        port = url.rsplit(":", 1)[1]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        expect.set_options(timeout=WAIT_MS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        page.goto(f"http://{REBIND}:{port}/research?ws=secret-ws&run={run_id}")
        expect(page.get_by_text(f"does not answer pages addressed to '{REBIND}'")).to_be_visible()
        idle(page)
        body = page.locator("body").inner_text()
        assert "secret-ws" not in body and "What is the secret" not in body
        expect(page.get_by_test_id("stSidebar")).to_have_count(0)

        page.goto(f"http://localhost:{port}/research?ws=secret-ws&run={run_id}")
        expect(page.get_by_role("heading", name="What is the secret?")).to_be_visible()
        idle(page)
        browser.close()
    assert not [p for p in server_problems(log) if "does not answer pages" not in p]
