"""The Account page (MASIS_AUTH local or oidc): your password and personal tokens; for admins
the accounts, password resets and the audit log (read-only: it is never edited here)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from masis_core.errors import AccessError, MasisError
from masis_core.storage.accounts import PASSWORD_MIN, Principal
from masis_core.text.markup import untrusted
from ui import session_cookie
from ui.auth import COOKIE_TICKET, SESSION_KEY
from ui.resources import workbench


def _try(action: Callable[[], object], done: str) -> None:
    """Run ``action``; say ``done`` (``{}`` filled with what it returned) or why it was
    refused."""
    try:
        result = action()
    except MasisError as exc:
        st.error(untrusted(str(exc)))
    else:
        st.success(done.format(result))


def password_form(who: Principal) -> None:
    with st.form("change-password", clear_on_submit=True):
        old = st.text_input("Current password", type="password", key="pw-old")
        new = st.text_input(
            f"New password ({PASSWORD_MIN} characters or more)", type="password", key="pw-new"
        )
        keep = st.checkbox("Keep my personal tokens", key="pw-keep-tokens")
        if st.form_submit_button("Change password"):
            _try(
                lambda: _change(who, old, new, keep),
                "Password changed; your other sessions ended; {} personal tokens revoked.",
            )


def _change(who: Principal, old: str, new: str, keep_tokens: bool) -> int:
    """Every session of the account ends with the old password; this tab gets a new one.
    Its tokens are revoked unless kept. Returns how many were revoked."""
    accounts = workbench().accounts
    revoked = accounts.change_password(who.name, old, new, keep_tokens=keep_tokens)
    secret = accounts.open_session(who.name)
    st.session_state[SESSION_KEY] = secret
    st.session_state[COOKIE_TICKET] = session_cookie.ticket(secret)  # the cookie follows
    return revoked


def token_box(who: Principal) -> None:
    """Personal tokens for the CLI (``--token``): shown once, stored as a digest only."""
    accounts = workbench().accounts
    st.caption("For the command line: `python -m masis_core --token TOKEN status`.")
    with st.form("new-token", clear_on_submit=True):
        label = st.text_input("Label", placeholder="e.g. laptop", key="token-label")
        if st.form_submit_button("Create token"):
            token = accounts.create_token(who.name, label)
            st.code(token, language=None)
            st.caption("Copy it now: it is not shown again.")
    for row in accounts.tokens(who.name):
        left, right = st.columns([4, 1])
        left.caption(f"{untrusted(row['label'])} · {row['token_id']} · {row['created_at']}")
        if right.button("Revoke", key=f"revoke-{row['token_id']}"):
            accounts.revoke_token(who.name, row["token_id"])
            st.rerun()


def admin_box(who: Principal) -> None:
    """Accounts and the audit log, for admins."""
    if not who.admin:
        raise AccessError("Only admins see accounts and the audit log.")
    accounts = workbench().accounts
    st.dataframe(pd.DataFrame([vars(a) for a in accounts.all()]), hide_index=True, width="stretch")
    with st.form("add-account", clear_on_submit=True):
        name = st.text_input("New account name", key="acc-name")
        password = st.text_input("Its first password", type="password", key="acc-pw")
        admin = st.checkbox("Admin", key="acc-admin")
        if st.form_submit_button("Add account"):
            _try(lambda: accounts.create(name, password, actor=who.name, admin=admin), "Added.")
    with st.form("reset-account", clear_on_submit=True):
        name = st.text_input("Account to reset or remove", key="reset-name")
        password = st.text_input("New password", type="password", key="reset-pw")
        reset, unlock, remove = st.columns(3)
        if reset.form_submit_button("Reset password"):
            _try(
                lambda: accounts.set_password(name, password, actor=who.name),
                "Reset: its sessions ended and {} personal tokens were revoked.",
            )
        if unlock.form_submit_button("Unlock sign-in"):
            _try(
                lambda: accounts.unlock(name, actor=who.name),
                "Unlocked: {} failed sign-ins forgotten.",
            )
        if remove.form_submit_button("Remove account"):
            _try(lambda: accounts.remove(name, actor=who.name), "Removed.")
    st.subheader("Audit log")
    log = accounts.audit_log()
    st.dataframe(pd.DataFrame([vars(e) for e in log]), hide_index=True, width="stretch")
