"""MASIS Workbench entry point: ``streamlit run app.py``.

The router only; each page draws the shared sidebar itself (``masis_core.ui.sidebar``), which
keeps pages testable one by one with ``AppTest``.
"""

from __future__ import annotations

import logging

import streamlit as st

from masis_core.ui.sidebar import routed

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
navigation.run()
