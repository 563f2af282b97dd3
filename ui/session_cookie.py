"""The sign-in cookie (``MASIS_AUTH=local``): a reload, a bookmark or a second tab stays
signed in for the session's lifetime.

The cookie holds the server-side session's secret, signed (HMAC-SHA256 with a key kept in the
data dir), ``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's page sends
it) and ``Secure`` over HTTPS. Streamlit's script cannot set a cookie: the browser does it by
posting a one-time ticket (valid 60 s, in this process's memory) to ``/_masis/session``, a
route of the ``st.App`` in ``serve.py``; ``/_masis/signout`` clears it. The session row in
the database stays the truth: a sign-out, a password change or a removal ends it at the next
click whatever the cookie says (``Accounts.session``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from masis_core.config import get_settings

COOKIE = "masis_session"
TICKET_S = 60.0
_tickets: dict[str, tuple[str, float]] = {}
_lock = threading.Lock()


def _key() -> bytes:
    """The signing key: ``cookie.key`` in the data dir, made once (mode 0600)."""
    path = Path(get_settings().data_dir) / "cookie.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def _mac(secret: str) -> str:
    return hmac.new(_key(), secret.encode(), hashlib.sha256).hexdigest()


def sign(secret: str) -> str:
    return f"{secret}.{_mac(secret)}"


def unsign(value: object) -> str | None:
    """The session secret a cookie holds, or None when it is missing or not ours."""
    if not isinstance(value, str):  # none (or an in-process test's stand-in)
        return None
    secret, _, mac = value.rpartition(".")
    if not secret or not hmac.compare_digest(mac, _mac(secret)):
        return None
    return secret


def ticket(secret: str) -> str:
    """A one-time ticket the browser trades for the cookie (``/_masis/session``)."""
    token = secrets.token_urlsafe(24)
    now = time.monotonic()
    with _lock:
        for key in [k for k, (_, t) in _tickets.items() if t < now]:
            del _tickets[key]
        _tickets[token] = (secret, now + TICKET_S)
    return token


def _redeem(token: str) -> str | None:
    with _lock:
        found = _tickets.pop(token, None)
    return found[0] if found and found[1] >= time.monotonic() else None


async def _session(request: Request) -> Response:
    secret = _redeem((await request.body()).decode(errors="replace").strip())
    if secret is None:
        return Response("unknown or expired ticket", status_code=403)
    response = Response(status_code=204)
    response.set_cookie(
        COOKIE,
        sign(secret),
        max_age=int(get_settings().session_hours * 3600),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def _signout(_request: Request) -> Response:
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


ROUTES = [
    Route("/_masis/session", _session, methods=["POST"]),
    Route("/_masis/signout", _signout, methods=["POST"]),
]
