"""Helpers for the browser test: a real ``streamlit run`` server and Debian's Chromium.

``MASIS_UPDATE_SCREENSHOTS=1 python -m pytest -m browser`` also refreshes the screenshots the
README shows (``docs/``); otherwise they go to the test's temporary directory.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = "/usr/bin/chromium"
# What the machine's closed network needs: no background fetches, no first-run pings.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
START_TIMEOUT_S = 90


def chromium_missing_reason() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@contextmanager
def streamlit_server(
    data_dir: Path,
    log_path: Path,
    extra_env: dict[str, str] | None = None,
    script: str = "app.py",
    port: int | None = None,
) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port (or ``port``: a server started again
    where a tab still points), offline, on its own data dir; ``extra_env`` adds settings
    (e.g. a fake Tavily on loopback); ``script`` another entry point."""
    port = port or free_port()
    env = {
        **os.environ,
        "MASIS_DATA_DIR": str(data_dir),
        "MASIS_PROVIDER": "offline",
        "OLLAMA_HOST": "http://127.0.0.1:9",
    }
    env.pop("TAVILY_API_KEY", None)
    env.update(extra_env or {})
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
    ]
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(url):  # readiness poll, bounded; not a timing assertion
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def server_problems(log_path: Path) -> list[str]:
    """Lines of the server log that show an exception (an uncaught one, or one we logged),
    and a library's DEBUG chatter (bm25s logged every index build)."""
    text = log_path.read_text(errors="replace")
    return [
        line
        for line in text.splitlines()
        if "Traceback" in line or "Uncaught" in line or line.startswith("DEBUG")
    ]


def screenshot(
    page: Any, name: str, tmp_dir: Path, height: int = 2000, element: Any = None
) -> Path:
    """Save a PNG of the app, or of one ``element`` (a locator) scrolled into view; into
    ``docs/`` when MASIS_UPDATE_SCREENSHOTS=1.

    Streamlit scrolls inside its main block, so a full-page capture shows only the viewport:
    the window is made tall for the shot instead, then put back.
    """
    out = tmp_dir / name
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": height})
    if element is None:
        page.screenshot(path=str(out))
    else:
        element.scroll_into_view_if_needed()
        element.screenshot(path=str(out))
    page.set_viewport_size(size)
    if os.environ.get("MASIS_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(out, DOCS / name)
    return out


def run_in(url: str) -> str:
    """The run id an address names (``?run=ID``), or "" when it names none."""
    found = re.search(r"[?&]run=(\w+)", url)
    return found.group(1) if found else ""


def shown_run(page: Any, other_than: str = "") -> str:
    """The run the page's address names, once it names one (and not ``other_than``)."""
    from playwright.sync_api import expect

    other = rf"(?!{re.escape(other_than)}\b)" if other_than else ""
    expect(page).to_have_url(re.compile(rf"[?&]run={other}\w+"))
    return run_in(page.url)


def expect_status(page: Any, statuses: str, run_id: str = "") -> None:
    """The status line of the run shown, found by its id: a line of an earlier run that
    Streamlit's redraw left on the page (seen once in CI, right after a new question) must
    neither pass for it nor make the check ambiguous: Playwright fails a check that two
    elements match at once, without waiting."""
    from playwright.sync_api import expect

    run_id = run_id or shown_run(page)
    expect(page.get_by_text(re.compile(rf"Run `?{run_id}`? · (?:{statuses})"))).to_be_visible()


# Streamlit keeps the elements of the run before on the page, faded, until the run in flight
# replaces them or ends; the page passes through states a check made at one moment can miss.
_WATCH = """(src) => {
  const holds = new Function(src);
  window.__masisSeen = null;
  const check = () => {
    if (window.__masisSeen !== null) return;
    const main = document.querySelector('[data-testid="stMain"]');
    const found = main ? holds.call(main) : null;
    if (found) window.__masisSeen = String(found);
  };
  new MutationObserver(check).observe(document.body,
    {subtree: true, childList: true, attributes: true, characterData: true});
  check();
}"""


def watch_page(page: Any, contradiction: str) -> None:
    """From now on, check every state the page's main area passes through, faded elements
    of an earlier run included: ``contradiction`` is the body of a JavaScript function (``this``
    is the main area) that returns what is wrong in a state, or nothing. ``seen_on_page``
    reads the first such state."""
    page.evaluate(_WATCH, contradiction)


def seen_on_page(page: Any) -> str | None:
    """The first contradiction ``watch_page`` saw, or None."""
    return page.evaluate("window.__masisSeen")
