"""MASIS Workbench entry point: ``streamlit run app.py``.

Streamlit first reads this file for an ``st.App``: imported (not as ``__main__``), it is that
app, serving the script (this same file) together with the two routes of the sign-in cookie
(``ui/session_cookie.py``), so a reload, a bookmark or a second tab stays signed in with
``MASIS_AUTH=local``. Run as the script (``__main__``, once per browser session and on every
interaction, and under ``AppTest``), it draws the workbench (``ui.router``). ``serve.py``,
which had been the only way to the cookie, is kept and starts the same thing.
"""

from __future__ import annotations

import logging

import streamlit as st

from ui.session_cookie import ROUTES

if __name__ == "__main__":
    from ui.router import main

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    # fpdf2 subsets the export's font with fontTools, which logs each table it touches at
    # INFO: 266 of 273 server log lines after a few PDF exports.
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    main()
else:
    app = st.App(__file__, routes=ROUTES)
