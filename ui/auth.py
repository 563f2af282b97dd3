"""Who uses this browser session, by ``MASIS_AUTH``, and the door (``Door``) they act through.

``none``: the local user, nothing drawn. ``local``: a sign-in form; the session's secret is
kept in the server-side session state and, served by ``serve.py``, in an HttpOnly, signed
cookie (``ui/session_cookie.py``) so a reload or a second tab stays signed in; it is checked
against the database on every rerun: a sign-out, a password change or the session's expiry
ends its access at the next click. ``oidc``: Streamlit's ``st.login`` / ``st.user`` with
``[auth]`` in ``.streamlit/secrets.toml``; the identity is its issuer and ``sub``, its account
made on first sign-in (the first one is admin) unless the name is held (an admin links it).
Jobs started by a session run on in the server process after it signs out; the audit log
names the account that started them.
"""

from __future__ import annotations

import streamlit as st

from masis_core.errors import MasisError, SignInRefused
from masis_core.services.access import Door
from masis_core.services.identity import client_address, oidc_identity
from masis_core.storage.accounts import LOCAL, Principal
from masis_core.text.markup import untrusted
from ui import session_cookie
from ui.resources import run_service, workbench

SESSION_KEY = "masis_session"
# A sign-in's one-time ticket, traded by the browser for the cookie on the next run.
COOKIE_TICKET = "masis_cookie_ticket"
# Set at sign-out: the next run asks the browser to drop the cookie.
COOKIE_CLEAR = "masis_cookie_clear"
# The OIDC account whose sign-in this browser session has put in the audit log.
OIDC_SEEN = "masis_oidc_seen"


def mode() -> str:
    return workbench().settings.auth


def principal() -> Principal | None:
    """The signed-in principal, or None (then the page shows the sign-in and stops)."""
    if mode() == "none":
        return LOCAL
    if mode() == "oidc":
        return _oidc_principal()
    _cookie_calls()
    secret = st.session_state.get(SESSION_KEY)
    if not secret:  # a reload, a new tab: the cookie (its session may have ended since)
        secret = session_cookie.unsign(st.context.cookies.get(session_cookie.COOKIE))
    if not secret:
        return None
    try:
        who = workbench().accounts.session(secret)
    except SignInRefused:
        st.session_state.pop(SESSION_KEY, None)
        return None
    st.session_state[SESSION_KEY] = secret
    return who


def _cookie_calls() -> None:
    """What the browser must do with the sign-in cookie (``ui/session_cookie.py``): trade a
    fresh sign-in's ticket for it, or drop it after a sign-out. A script of the page posts
    to the server's route; only the server's answer sets the cookie (HttpOnly)."""
    ticket = st.session_state.pop(COOKIE_TICKET, None)
    clear = st.session_state.pop(COOKIE_CLEAR, False)
    if not (ticket or clear):
        return
    path, body = ("session", ticket) if ticket else ("signout", "")
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    url = f"/{base}/_masis/{path}" if base else f"/_masis/{path}"
    st.html(
        f"<script>fetch({url!r}, {{method: 'POST', body: {body!r}, "
        "credentials: 'same-origin'})</script>",
        unsafe_allow_javascript=True,
    )


def _oidc_principal() -> Principal | None:
    if not st.user.get("is_logged_in"):
        return None
    accounts = workbench().accounts
    try:  # one lookup per call (every door() asks), the account made on first sign-in
        acc = accounts.oidc_account(*oidc_identity(st.user.to_dict()))
    except MasisError as exc:  # no subject, a name held by another account, a name refused
        st.error(f"Your identity cannot be used as an account here: {untrusted(str(exc))}")
        st.button("Sign out", on_click=st.logout, key="oidc-refused-logout")
        st.stop()
    who = Principal(acc.name, admin=acc.admin)
    if st.session_state.get(OIDC_SEEN) != who.name:  # once per browser session
        st.session_state[OIDC_SEEN] = who.name
        accounts.audit(who.name, "signin", who.name, "oidc")
    return who


def door() -> Door:
    """The signed-in principal's door (call after ``principal_or_stop``)."""
    who = principal()
    if who is None:
        st.stop()
    return Door(workbench(), who, run_service())


def principal_or_stop() -> Principal:
    """The principal, or the sign-in drawn and the page stopped."""
    who = principal()
    if who is not None:
        return who
    st.title("MASIS Workbench")
    if mode() == "oidc":
        st.info("Sign in with your organisation's account to open the workbench.")
        st.button("Sign in", type="primary", on_click=st.login, key="oidc-login")
    else:
        _sign_in_form()
    st.stop()


def _sign_in_form() -> None:
    if workbench().accounts.count() == 0:
        st.warning(
            "No account exists yet. An operator creates the first (admin) account with "
            "`python -m masis_core users add NAME` on the server."
        )
    with st.form("sign-in"):
        name = st.text_input("Account name", key="signin-name")
        password = st.text_input("Password", type="password", key="signin-password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        return
    try:
        _, secret = workbench().accounts.sign_in(name, password, browser_address())
    except MasisError as exc:
        st.error(untrusted(str(exc)))
        return
    st.session_state[SESSION_KEY] = secret
    st.session_state[COOKIE_TICKET] = session_cookie.ticket(secret)
    st.rerun()


def browser_address() -> str:
    """The browser's address for the throttle and the audit log (``client_address``)."""
    peer = st.context.ip_address
    headers = {k.lower(): v for k, v in st.context.headers.items()}
    return client_address(workbench().settings, peer if isinstance(peer, str) else None, headers)


def sign_out() -> None:
    """End the session's access now: its database row goes, so no rerun passes again."""
    if mode() == "oidc":
        st.logout()
        return
    secret = st.session_state.pop(SESSION_KEY, None)
    st.session_state[COOKIE_CLEAR] = True  # the next run asks the browser to drop it
    if secret:
        workbench().accounts.end_session(secret)


def account_box(who: Principal) -> None:
    """In the sidebar: who is signed in, and the sign-out."""
    if who.local:
        return
    st.caption(f"Signed in as **{untrusted(who.name)}**{' (admin)' if who.admin else ''}")
    if st.button("Sign out", key="sign-out"):
        sign_out()
        st.rerun()


def role_notice(ws_id: str, doing: str, after: str = "") -> None:
    """Said where an action is not offered because of the account's role, instead of refusing
    it after the analyst has filled in the form ("adding documents", "running an evaluation")."""
    st.info(
        f"Your role in this workspace is {door().role(ws_id)}: {doing} needs editor or owner "
        f"(ask the workspace's owner to share it so).{after}",
        icon="🔒",
    )
