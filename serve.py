"""The workbench with its sign-in cookie: ``streamlit run serve.py`` (Streamlit's ``st.App``).

``app.py`` stays the script (``streamlit run app.py`` still works, without the cookie: a
reload then asks to sign in again); this adds the two routes that set and clear the cookie
(``ui/session_cookie.py``).
"""

from __future__ import annotations

import streamlit as st

from ui.session_cookie import ROUTES

app = st.App("app.py", routes=ROUTES)
