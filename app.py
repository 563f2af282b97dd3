"""MASIS Workbench entry point: ``streamlit run app.py``.

The router only; each page draws the shared sidebar itself (``ui.sidebar``), which
keeps pages testable one by one with ``AppTest``.
"""

from __future__ import annotations

import logging

import streamlit as st

from ui.sidebar import routed

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

st.set_page_config(page_title="MASIS Workbench", page_icon="🔎", layout="wide")

navigation = st.navigation(
    [
        st.Page("pages/library.py", title="Library", icon="📚", default=True),
        st.Page("pages/research.py", title="Research", icon="🔎"),
        st.Page("pages/inspector.py", title="Inspector", icon="📊"),
        st.Page("pages/runs.py", title="Runs", icon="🗂️"),
    ]
)
routed()
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
