"""Who is asking: the principal of a command line or a server, by ``MASIS_AUTH``.

``none``: the single local user (``LOCAL``), which is safe only on loopback: ``check_listen``
refuses any other address unless ``MASIS_ALLOW_OPEN=1``. ``local``: an account of the
workbench's database, by password or personal token. ``oidc``: the identity provider signs
browsers in (Streamlit's ``st.login``); the command line uses a personal token made in the UI.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
from collections.abc import Callable, Mapping
from typing import Any

from masis_core.config import Settings
from masis_core.errors import ConfigError, SignInRefused
from masis_core.storage.accounts import LOCAL, Principal
from masis_core.workspaces.workbench import Workbench

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(address: str | None) -> bool:
    """Whether a listening address is reachable from this machine only. Empty (Streamlit's
    default when unset: every interface) is not."""
    host = (address or "").strip().strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(settings: Settings, address: str | None) -> None:
    """Refuse to serve beyond loopback without sign-in; the message says why and what to set."""
    if settings.auth != "none" or settings.allow_open or is_loopback(address):
        return
    shown = address or "every interface (server.address unset)"
    raise ConfigError(
        f"The workbench listens on {shown} with MASIS_AUTH=none: anyone who reaches the port "
        "could read, ask about and delete every workspace. Set MASIS_AUTH=local (accounts, "
        "create the first with `python -m masis_core users add NAME`) or MASIS_AUTH=oidc "
        "(your identity provider, docs/team.md), or listen on 127.0.0.1 "
        "(--server.address 127.0.0.1). To serve it open anyway, set MASIS_ALLOW_OPEN=1."
    )


def cli_principal(
    bench: Workbench,
    user: str | None,
    token: str | None,
    ask_password: Callable[[str], str],
) -> Principal:
    """The account a command acts as: ``--token`` (or ``MASIS_TOKEN``) first, else ``--user``
    with ``MASIS_PASSWORD`` or a prompt. With ``MASIS_AUTH=none`` the local user."""
    if bench.settings.auth == "none":
        return LOCAL
    token = token or os.environ.get("MASIS_TOKEN")
    if token:
        return bench.accounts.token_principal(token)
    if not user:
        raise SignInRefused(
            f"MASIS_AUTH={bench.settings.auth}: say who you are with --user NAME (a password "
            "prompt, or MASIS_PASSWORD) or --token TOKEN (or MASIS_TOKEN; made on the "
            "workbench's Account page)."
        )
    password = os.environ.get("MASIS_PASSWORD")
    if password is None:
        password = ask_password(f"Password for {user}: ")
    return bench.accounts.verify_password(user, password, address=cli_address())


def oidc_account_name(claims: Mapping[str, Any]) -> str:
    """The account an identity provider's sign-in names: its e-mail, else
    ``preferred_username``, else ``sub``. An e-mail the provider marks unverified is refused
    rather than mapped to another claim: it would name whichever account holds it, an admin's
    included."""
    if claims.get("email") and claims.get("email_verified") is False:
        raise SignInRefused(
            "Your identity provider says your email address is not verified, so it cannot "
            "name your account here. Verify it with the provider, then sign in again."
        )
    return str(claims.get("email") or claims.get("preferred_username") or claims.get("sub"))


def cli_address() -> str:
    """The command line's "client address" for the sign-in throttle: the operating-system
    user running it, so that one user's failures on a shared server do not lock every other
    user's command line out (a browser's is its IP)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name in the environment nor the password database
        return "cli"
