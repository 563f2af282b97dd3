"""Account: your password and personal tokens; for admins, accounts and the audit log."""

from __future__ import annotations

import streamlit as st

from ui.account import admin_box, password_form, token_box
from ui.auth import mode, principal_or_stop
from ui.sidebar import ensure_router, render_sidebar

ensure_router()
render_sidebar()  # signs in first when needed
st.title("👤 Account")
who = principal_or_stop()
if mode() == "local":
    st.subheader("Password")
    password_form(who)
st.subheader("Personal tokens")
token_box(who)
if who.admin:
    st.subheader("Accounts")
    admin_box(who)
