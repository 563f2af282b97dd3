"""The workbench with its sign-in cookie: ``streamlit run serve.py``, the same as
``streamlit run app.py`` (which is an ``st.App`` with the cookie's routes itself since the
README's command lost the sign-in on every reload); kept for the commands that name it."""

from __future__ import annotations

import streamlit as st

from ui.session_cookie import ROUTES

app = st.App("app.py", routes=ROUTES)
