"""MASIS Workbench entry point: ``streamlit run app.py``.

The router only: it names the pages and their addresses and draws the navigation; each page
draws the shared sidebar itself (``ui.sidebar``), which keeps pages testable one by one with
``AppTest``.
"""

from __future__ import annotations

import logging

import streamlit as st

from masis_core.config import get_settings
from masis_core.errors import ConfigError
from masis_core.services.identity import check_host, check_listen
from ui.sidebar import navigation_links, routed

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
# fpdf2 subsets the export's font with fontTools, which logs each table it touches at INFO:
# 266 of 273 server log lines after a few PDF exports.
logging.getLogger("fontTools").setLevel(logging.WARNING)

st.set_page_config(page_title="MASIS Workbench", page_icon="🔎", layout="wide")

# No sign-in (MASIS_AUTH=none) beyond loopback, or a page reached by a foreign name (DNS
# rebinding): nothing is served, and the log says why.
try:
    check_listen(get_settings(), st.get_option("server.address"))
    check_host(get_settings(), st.context.headers.get("host"))
except ConfigError as exc:
    logging.getLogger("masis_core.app").error("%s", exc)
    st.error(str(exc), icon="🔒")
    st.stop()

# Every page has an address of its own (/library, /research, /inspector, /runs).
LIBRARY = st.Page("pages/library.py", title="Library", icon="📚", url_path="library")
PAGES = [
    LIBRARY,
    st.Page("pages/research.py", title="Research", icon="🔎", url_path="research"),
    st.Page("pages/inspector.py", title="Inspector", icon="📊", url_path="inspector"),
    st.Page("pages/runs.py", title="Runs", icon="🗂️", url_path="runs"),
]
if get_settings().auth != "none":  # passwords, tokens, and for admins the audit log
    PAGES.append(st.Page("pages/account.py", title="Account", icon="👤", url_path="account"))


def _root() -> None:
    """The root address opens the Library at its own address, with the same query."""
    st.switch_page(LIBRARY, query_params=st.query_params.to_dict())


# Streamlit's own menu stays hidden (here and, for the file names of pages/, in
# .streamlit/config.toml: client.showSidebarNavigation); the sidebar draws ours.
navigation = st.navigation(
    [st.Page(_root, title="Library", url_path="home", default=True), *PAGES], position="hidden"
)
routed()
navigation_links(PAGES)
try:
    navigation.run()
except Exception as exc:  # Streamlit's own stop/rerun signals are BaseExceptions and pass
    # The browser gets one line; the details (paths, values) stay in the server log.
    logging.getLogger("masis_core.app").exception("page %s failed", navigation.title)
    st.error(
        f"This page failed ({type(exc).__name__}); the details are in the server log. "
        "Reload the page to try again.",
        icon="⚠️",
    )
