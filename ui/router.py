"""The workbench's script, run once per browser session and rerun on every interaction: the
checks that refuse to serve, the pages and their addresses, the navigation (``app.py``
calls ``main``; the file itself is also the ``st.App`` that serves it).

The router only: each page draws the shared sidebar itself (``ui.sidebar``), which keeps
pages testable one by one with ``AppTest``.
"""

from __future__ import annotations

import logging

import streamlit as st

from masis_core.config import get_settings
from masis_core.errors import ConfigError
from masis_core.services.identity import check_host, check_listen
from ui.sidebar import navigation_links, routed

log = logging.getLogger("masis_core.app")


def served_or_stop() -> None:
    """No sign-in (MASIS_AUTH=none) beyond loopback, or a page reached by a foreign name (DNS
    rebinding): nothing is served, and the log says why."""
    try:
        check_listen(get_settings(), st.get_option("server.address"))
        check_host(get_settings(), st.context.headers.get("host"))
    except ConfigError as exc:
        log.error("%s", exc)
        st.error(str(exc), icon="🔒")
        st.stop()


def pages() -> tuple[st.Page, list[st.Page]]:
    """The Library and every page, each with an address of its own (/library, /research,
    /inspector, /runs, and /account when there are accounts)."""
    library = st.Page("pages/library.py", title="Library", icon="📚", url_path="library")
    listed = [
        library,
        st.Page("pages/research.py", title="Research", icon="🔎", url_path="research"),
        st.Page("pages/inspector.py", title="Inspector", icon="📊", url_path="inspector"),
        st.Page("pages/runs.py", title="Runs", icon="🗂️", url_path="runs"),
    ]
    if get_settings().auth != "none":  # passwords, tokens, and for admins the audit log
        listed.append(st.Page("pages/account.py", title="Account", icon="👤", url_path="account"))
    return library, listed


def main() -> None:
    """One run of the script: checked, routed, the page drawn (a page's failure is one line
    in the browser; its details stay in the server log)."""
    st.set_page_config(page_title="MASIS Workbench", page_icon="🔎", layout="wide")
    served_or_stop()
    library, listed = pages()

    def root() -> None:
        """The root address opens the Library at its own address, with the same query."""
        st.switch_page(library, query_params=st.query_params.to_dict())

    # Streamlit's own menu stays hidden (here and, for the file names of pages/, in
    # .streamlit/config.toml: client.showSidebarNavigation); the sidebar draws ours.
    navigation = st.navigation(
        [st.Page(root, title="Library", url_path="home", default=True), *listed],
        position="hidden",
    )
    routed()
    navigation_links(listed)
    try:
        navigation.run()
    except Exception as exc:  # Streamlit's own stop/rerun signals are BaseExceptions and pass
        log.exception("page %s failed", navigation.title)
        st.error(
            f"This page failed ({type(exc).__name__}); the details are in the server log. "
            "Reload the page to try again.",
            icon="⚠️",
        )
