"""Who is asking: the principal of a command line or a server, by ``MASIS_AUTH``.

``none``: the single local user (``LOCAL``), which is safe only on loopback: ``check_listen``
refuses any other address unless ``MASIS_ALLOW_OPEN=1``. ``local``: an account of the
workbench's database, by password or personal token. ``oidc``: the identity provider signs
browsers in (Streamlit's ``st.login``); the command line uses a personal token made in the UI.
"""

from __future__ import annotations

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


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def names(listed: str) -> set[str]:
    """A comma-separated setting as a set of lower-case names (``MASIS_ALLOWED_HOSTS``)."""
    return {n.strip().lower().strip("[]").rstrip(".") for n in listed.split(",") if n.strip()}


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8501`` → ``::1``)."""
    host = header.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def check_host(settings: Settings, header: str | None) -> None:
    """With ``MASIS_AUTH=none`` answer only a page reached as ``localhost``, ``127.0.0.1`` or
    ``[::1]`` or by a name in ``MASIS_ALLOWED_HOSTS``: a page on any other name is DNS
    rebinding (a foreign site's name resolved to this machine, its script reading the answers
    as same-origin). ``None``: no request behind the session (an in-process test)."""
    if settings.auth != "none" or header is None:
        return
    name = host_name(header)
    if name in LOOPBACK_HOSTS or name in names(settings.allowed_hosts):
        return
    raise ConfigError(
        f"This workbench does not answer pages addressed to '{name[:80]}': without sign-in "
        "(MASIS_AUTH=none) it answers localhost, 127.0.0.1 and [::1] only. Open it as "
        "http://localhost:PORT, or list the name in MASIS_ALLOWED_HOSTS."
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
        return _token_sign_in(bench, token)
    if not user:
        raise SignInRefused(
            f"MASIS_AUTH={bench.settings.auth}: say who you are with --user NAME (a password "
            "prompt, or MASIS_PASSWORD) or --token TOKEN (or MASIS_TOKEN; made on the "
            "workbench's Account page)."
        )
    password = os.environ.get("MASIS_PASSWORD")
    if password is None:
        password = ask_password(f"Password for {user}: ")
    who = bench.accounts.verify_password(user, password, address=cli_address())
    bench.accounts.audit(who.name, "signin", who.name, f"{cli_address()} password")
    return who


def _token_sign_in(bench: Workbench, token: str) -> Principal:
    """A personal token's account; a sign-in with it, refused or not, is audited."""
    try:
        who = bench.accounts.token_principal(token)
    except SignInRefused:
        token_id = token.strip().removeprefix("masis_").partition("_")[0][:20]
        bench.accounts.audit(f"anonymous@{cli_address()}", "signin.fail", "?", f"token {token_id}")
        raise
    bench.accounts.audit(who.name, "signin", who.name, f"{cli_address()} token")
    return who


def oidc_identity(claims: Mapping[str, Any]) -> tuple[str, str, str]:
    """An identity provider's sign-in as (issuer, subject, the name for a new account). The
    identity is the issuer and ``sub``: names and e-mails change hands and any user may set
    ``preferred_username``, so neither picks an account (``{"preferred_username": "ADA"}`` had
    signed in as the admin ada). The name only labels an account made on the first sign-in:
    the e-mail when the provider says ``email_verified`` is true, else
    ``preferred_username``, else ``sub``."""
    subject = str(claims.get("sub") or "").strip()
    if not subject:
        raise SignInRefused(
            "Your identity provider sent no subject ('sub') for you, so no account can be "
            "tied to your sign-in. Ask its administrator."
        )
    issuer = str(claims.get("iss") or "").strip()
    email = claims.get("email") if claims.get("email_verified") is True else None
    return issuer, subject, str(email or claims.get("preferred_username") or subject)


def cli_address() -> str:
    """The command line's "client address" for the sign-in throttle: the operating system's
    user id of the process, which the caller cannot set (``$USER`` was: ``USER=victim`` had
    locked the real user out), so one user's failures on a shared server leave every other
    user's command line alone (a browser's is its IP)."""
    getuid = getattr(os, "getuid", None)
    return f"cli:uid{getuid()}" if getuid is not None else "cli"


def client_address(settings: Settings, peer: str | None, headers: Mapping[str, str] | None) -> str:
    """A browser's address for the sign-in throttle and the audit log. Loopback counts as an
    address (Streamlit says ``None`` for it). ``X-Forwarded-For`` names the client only when
    the operator names the proxies (``MASIS_TRUSTED_PROXIES``): the server in front of
    Streamlit (uvicorn) takes it from any loopback peer, so a forged header had picked the
    address that was locked out and that the audit log recorded. Unnamed, a forwarded
    connection counts as its proxy's: loopback."""
    forwarded = [a.strip() for a in (headers or {}).get("x-forwarded-for", "").split(",")]
    forwarded = [a for a in forwarded if a]
    address = peer or "127.0.0.1"
    if not forwarded or address not in forwarded:  # uvicorn did not take it from the header
        return address
    trusted = names(settings.trusted_proxies)
    if not trusted:
        return "127.0.0.1"
    for hop in reversed(forwarded):  # the nearest hop no named proxy stands for
        if hop.lower() not in trusted:
            return hop
    return forwarded[0]
