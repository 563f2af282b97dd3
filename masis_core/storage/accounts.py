"""Accounts, workspace members, tokens, sessions, sign-in throttling and the audit log.

Used when ``MASIS_AUTH`` is ``local`` or ``oidc``; with ``none`` the single local user
(``LOCAL``) may do everything, as before accounts existed. The rows live in the same database
as the registry (SQLite or PostgreSQL), so a team's servers share them. Passwords are hashed
with Argon2id (argon2-cffi); tokens and session secrets are random and kept only as SHA-256
digests, so a copy of the database signs no one in. The clock is injectable: the throttle
and the session expiry are tested without waiting.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from masis_core.errors import AccessError, DuplicateRow, SignInRefused, Throttled
from masis_core.storage.db import ACCOUNTS_LOCK, SIGNIN_LOCK, Connection, Database
from masis_core.storage.registry import now_iso

Role = Literal["viewer", "editor", "owner"]
ROLES: tuple[Role, ...] = ("viewer", "editor", "owner")
RANK = {role: i for i, role in enumerate(ROLES)}
NAME_MAX = 64
PASSWORD_MIN = 8
PASSWORD_MAX = 1024
TOKEN_PREFIX = "masis_"
# Characters an account name may hold beside letters and digits.
NAME_PUNCTUATION = frozenset("._-@+")


@dataclass(frozen=True)
class Principal:
    """Who acts: an account, or the single local user of ``MASIS_AUTH=none`` (``local``)."""

    name: str
    admin: bool = False
    local: bool = False


LOCAL = Principal("local", admin=True, local=True)


@dataclass(frozen=True)
class Account:
    name: str
    display: str
    admin: bool
    created_at: str
    oidc: bool


@dataclass(frozen=True)
class AuditEntry:
    at: str
    actor: str
    action: str
    target: str
    detail: str


def normalise_name(raw: str) -> str:
    """The account name as stored: NFKC-normalised, case-folded, trimmed. Refused when empty,
    longer than 64 characters, holding anything but letters, digits and ``. _ - @ +``, or
    mixing scripts (``pаul`` with a Cyrillic ``а`` would pass for ``paul``)."""
    name = unicodedata.normalize("NFKC", raw or "").casefold().strip()
    name = unicodedata.normalize("NFKC", name)  # casefold can undo NFKC (e.g. "ß" → "ss")
    if not name:
        raise AccessError("An account name cannot be empty.")
    if len(name) > NAME_MAX:
        raise AccessError(f"An account name has at most {NAME_MAX} characters.")
    bad = [c for c in name if not (c.isalnum() or c in NAME_PUNCTUATION)]
    if bad:
        raise AccessError(
            f"An account name holds letters, digits and . _ - @ + only, not {bad[0]!r}."
        )
    scripts = {_script(c) for c in name if c.isalpha()}
    if len(scripts) > 1:
        raise AccessError(
            "An account name mixes alphabets (" + ", ".join(sorted(scripts)).lower() + "): "
            "such names pass for others; use one alphabet."
        )
    return name


def _script(char: str) -> str:
    """The Unicode script a letter belongs to, as the first word of its name (LATIN, …)."""
    return unicodedata.name(char, "UNKNOWN").split(" ")[0]


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Accounts:
    """The account rows and everything hanging off them (one per process and database)."""

    def __init__(
        self,
        db: Database,
        *,
        session_s: float = 12 * 3600,
        max_failures: int = 5,
        max_failures_address: int = 20,
        window_s: float = 900.0,
        clock: Callable[[], float] = time.time,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.db = db
        self.session_s, self.window_s = session_s, window_s
        self.max_failures, self.max_failures_address = max_failures, max_failures_address
        self.clock = clock
        self.hasher = hasher or PasswordHasher()

    # -- accounts ---------------------------------------------------------------------
    def count(self) -> int:
        with self.db.connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM accounts").fetchone()[0])

    def get(self, name: str) -> Account | None:
        try:
            key = normalise_name(name)
        except AccessError:
            return None
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM accounts WHERE name = ?", (key,)).fetchone()
        return _account(row) if row else None

    def all(self) -> list[Account]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM accounts ORDER BY name").fetchall()
        return [_account(r) for r in rows]

    def create(
        self,
        name: str,
        password: str | None,
        *,
        actor: str = "",
        admin: bool = False,
        first_only: bool = False,
        identity: tuple[str, str] | None = None,
    ) -> Account:
        """A new account; the first one is an admin and owns every workspace that has no
        owner yet (a data dir used before accounts: nothing is lost, all of it is the
        admin's). ``password`` None: an OIDC account, signed in by its identity provider
        (``identity``: its issuer and subject, linked in the same transaction).
        ``first_only``: a caller nobody signed in (the CLI's first ``users add``), refused
        once any account exists, checked in the same locked transaction as the insert."""
        key = normalise_name(name)
        hashed = None if password is None else self.hasher.hash(_check_password(password))
        with self.db.connect() as conn:
            # Alone among account creations: two at once on an empty table made two admins.
            conn.serialize(ACCOUNTS_LOCK)
            first = int(conn.execute("SELECT COUNT(*) FROM accounts").fetchone()[0]) == 0
            if first_only and not first:
                raise AccessError(
                    "An account exists now: only an admin adds more (sign in with --user "
                    "NAME or --token TOKEN)."
                )
            try:
                conn.execute(
                    "INSERT INTO accounts (name, display, password, admin, created_at)"
                    " VALUES (?,?,?,?,?)",
                    (key, name.strip(), hashed, int(admin or first), now_iso()),
                )
            except DuplicateRow as exc:
                raise AccessError(f"An account '{key}' already exists.") from exc
            _audit(conn, actor or key, "account.create", key, "admin" if admin or first else "")
            if identity is not None:
                _link(conn, identity, key, actor or key)
            if first:
                adopted = _adopt_orphans(conn, key)
                if adopted:
                    _audit(conn, key, "workspace.adopt", ",".join(adopted), "first admin")
        acc = self.get(key)
        assert acc is not None
        return acc

    def set_password(
        self, name: str, password: str, *, actor: str, keep_tokens: bool = False
    ) -> int:
        """A new password (own change or an admin's reset); every session of the account
        ends, its failed sign-ins are forgotten, and its personal tokens are revoked (a
        stolen token had outlived the reset meant to shut its thief out) unless the account
        itself asks to keep them. Returns the number of tokens revoked."""
        key = self._existing(name)
        hashed = self.hasher.hash(_check_password(password))
        with self.db.connect() as conn:
            conn.execute(
                "UPDATE accounts SET password = ?, sessions_after = ? WHERE name = ?",
                (hashed, self.clock(), key),
            )
            conn.execute("DELETE FROM sessions WHERE account = ?", (key,))
            _forget_failures(conn, key)
            own = actor == key
            revoked = 0
            if not (own and keep_tokens):
                revoked = conn.execute("DELETE FROM tokens WHERE account = ?", (key,)).rowcount
            detail = f"{revoked} tokens revoked" if revoked else ""
            _audit(conn, actor, "password.change" if own else "password.reset", key, detail)
        return int(revoked)

    def change_password(self, name: str, old: str, new: str, *, keep_tokens: bool = False) -> int:
        self.verify_password(name, old)
        return self.set_password(name, new, actor=normalise_name(name), keep_tokens=keep_tokens)

    def unlock(self, name: str, *, actor: str) -> int:
        """An admin's unlock: the account's counted failed sign-ins, from every address, are
        forgotten. Returns how many there were."""
        key = self._existing(name)
        with self.db.connect() as conn:
            gone = _forget_failures(conn, key)
            _audit(conn, actor, "account.unlock", key, f"{gone} failed sign-ins forgotten")
        return gone

    # -- OIDC identities --------------------------------------------------------------
    def oidc_account(self, issuer: str, subject: str, name: str) -> Account:
        """The account an identity provider's identity (issuer + subject) is linked to, made
        on its first sign-in under ``name``. A name already held (a password account, an
        admin's, another identity's) is never taken over: an admin links them
        (``link_identity``), as Open WebUI and Grafana refuse to merge by name or e-mail."""
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT a.* FROM oidc_identities i JOIN accounts a ON a.name = i.account"
                " WHERE i.issuer = ? AND i.subject = ?",
                (issuer, subject),
            ).fetchone()
        if row is not None:
            return _account(row)
        key = normalise_name(name)
        try:
            return self.create(key, None, actor=key, identity=(issuer, subject))
        except AccessError as exc:
            if "already exists" not in str(exc):
                raise
        raise AccessError(
            f"An account '{key}' exists here already and your sign-in is not linked to it. "
            f"An admin links it: `python -m masis_core users link {key} --issuer '{issuer}' "
            f"--subject '{subject}'`."
        )

    def link_identity(self, name: str, issuer: str, subject: str, *, actor: str) -> None:
        """An admin attaches an identity provider's identity to an existing account."""
        key = self._existing(name)
        with self.db.connect() as conn:
            _link(conn, (issuer, subject), key, actor)

    def set_admin(self, name: str, admin: bool, *, actor: str) -> None:
        key = self._existing(name)
        with self.db.connect() as conn:
            if not admin:
                _refuse_last_admin(conn, key)
            conn.execute("UPDATE accounts SET admin = ? WHERE name = ?", (int(admin), key))
            _audit(conn, actor, "account.admin" if admin else "account.unadmin", key)

    def remove(self, name: str, *, actor: str) -> list[str]:
        """Delete the account. The last admin cannot go; the workspaces it alone owned move
        to an admin (the acting one when it is an admin), said in the audit log. Returns
        the ids of the workspaces that moved."""
        key = self._existing(name)
        with self.db.connect() as conn:
            _refuse_last_admin(conn, key)
            heir = _heir(conn, actor, key)
            moved = [
                r[0]
                for r in conn.execute(
                    "SELECT m.workspace_id FROM memberships m WHERE m.account = ? AND"
                    " m.role = 'owner' AND NOT EXISTS (SELECT 1 FROM memberships o WHERE"
                    " o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.account <> ?)",
                    (key, key),
                )
            ]
            for ws_id in moved:
                _grant(conn, ws_id, heir, "owner")
            conn.execute("DELETE FROM accounts WHERE name = ?", (key,))
            _audit(conn, actor, "account.remove", key)
            for ws_id in moved:
                _audit(conn, actor, "workspace.transfer", ws_id, f"from {key} to {heir}")
        return moved

    def _existing(self, name: str) -> str:
        acc = self.get(name)
        if acc is None:
            raise AccessError(f"There is no account '{name.strip()[:NAME_MAX]}'.")
        return acc.name

    # -- signing in -------------------------------------------------------------------
    def verify_password(self, name: str, password: str, address: str = "") -> Principal:
        """The account, when the password is its own. Failures are counted per account and
        caller address together, and per address: past a limit the answer is ``Throttled``
        (without looking at the password) until the window has moved past the oldest
        failure or an admin unlocks it. One caller's failures never refuse another caller's
        right password (a per-account count had locked carol out from everywhere). Each
        attempt reserves its failure rows before the password is checked (``_reserve``), so
        requests arriving together get no more refusals than the limit; the right password
        gives the reservation back. Refusals are audited with the address as the actor, never
        the targeted account."""
        try:
            key = normalise_name(name)
        except AccessError:
            key = ""
        subjects = [f"account:{key}@{address}"] + ([f"address:{address}"] if address else [])
        attempt = self._reserve(subjects, key or "?", address)
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT password, admin FROM accounts WHERE name = ?", (key,)
            ).fetchone()
        # An unknown name (or an OIDC account) costs one hash too: a quick refusal would
        # tell which account names exist.
        known = row is not None and row[0] is not None
        if not self._matches(row[0] if known else self._decoy, password) or not known:
            with self.db.connect() as conn:
                _audit(conn, _anonymous(address), "signin.fail", key or "?", address)
            raise SignInRefused("Wrong account name or password.")
        with self.db.connect() as conn:
            conn.execute(
                "DELETE FROM signin_failures WHERE subject = ? OR attempt = ?",
                (subjects[0], attempt),
            )
        return Principal(key, admin=bool(row[1]))

    @functools.cached_property
    def _decoy(self) -> str:
        """A hash of no one's password, with this hasher's cost."""
        return self.hasher.hash(secrets.token_urlsafe(16))

    def _matches(self, hashed: str, password: str) -> bool:
        try:
            return bool(self.hasher.verify(hashed, password))
        except (VerificationError, InvalidHashError):
            return False

    def _reserve(self, subjects: list[str], target: str, address: str) -> str:
        """Count the subjects' failures in the window and, under every limit, record this
        attempt as one more: the check and the count in one serialized transaction (counted
        first and recorded after the slow hash, eight requests at once all passed a limit of
        five). ``Throttled`` past a limit, and the refused attempt audited
        (``signin.throttled``). Returns the attempt's mark."""
        now, attempt = self.clock(), secrets.token_hex(8)
        since = now - self.window_s
        limits = [self.max_failures, self.max_failures_address]
        refusal = ""
        with self.db.connect() as conn:
            conn.serialize(SIGNIN_LOCK)
            conn.execute("DELETE FROM signin_failures WHERE at < ?", (since,))
            for subject, limit in zip(subjects, limits, strict=False):
                row = conn.execute(
                    "SELECT COUNT(*), MIN(at) FROM signin_failures WHERE subject = ? AND at >= ?",
                    (subject, since),
                ).fetchone()
                if int(row[0]) >= limit:
                    wait = max(1, int(row[1] + self.window_s - now) + 1)
                    where = _FROM["address" if subject.startswith("address:") else "account"]
                    refusal = f"Too many failed sign-ins {where}; try again in {_minutes(wait)}"
                    _audit(conn, _anonymous(address), "signin.throttled", target, address)
                    break
            else:
                conn.executemany(
                    "INSERT INTO signin_failures (subject, at, attempt) VALUES (?, ?, ?)",
                    [(s, now, attempt) for s in subjects],
                )
        if refusal:  # raised after the commit: the audit row stays
            raise Throttled(f"{refusal}, or ask an admin to unlock the account.")
        return attempt

    def sign_in(self, name: str, password: str, address: str = "") -> tuple[Principal, str]:
        """Check the password and open a session; returns its secret (kept by the caller)."""
        who = self.verify_password(name, password, address)
        secret = self.open_session(who.name)
        with self.db.connect() as conn:
            _audit(conn, who.name, "signin", who.name, address)
        return who, secret

    def open_session(self, name: str) -> str:
        secret = secrets.token_urlsafe(32)
        now = self.clock()
        with self.db.connect() as conn:
            # Tabs closed without signing out leave rows; they go once they have expired.
            conn.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
            conn.execute(
                "INSERT INTO sessions (digest, account, started, expires) VALUES (?,?,?,?)",
                (digest(secret), normalise_name(name), now, now + self.session_s),
            )
        return secret

    def session(self, secret: str) -> Principal:
        """The account a live session belongs to; ``SignInRefused`` once it has expired,
        was ended, or its password changed since it began."""
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT s.account, s.expires, s.started, a.admin, a.sessions_after"
                " FROM sessions s JOIN accounts a ON a.name = s.account WHERE s.digest = ?",
                (digest(secret),),
            ).fetchone()
        if row is None or row[1] <= self.clock() or row[2] < row[4]:
            raise SignInRefused("Your session has ended; sign in again.")
        return Principal(row[0], admin=bool(row[3]))

    def end_session(self, secret: str) -> None:
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT account FROM sessions WHERE digest = ?", (digest(secret),)
            ).fetchone()
            conn.execute("DELETE FROM sessions WHERE digest = ?", (digest(secret),))
            if row is not None:
                _audit(conn, row[0], "signout", row[0])

    # -- tokens -----------------------------------------------------------------------
    def create_token(self, name: str, label: str) -> str:
        """A personal token for the CLI, shown once: only its digest is kept."""
        key = self._existing(name)
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        with self.db.connect() as conn:
            conn.execute(
                "INSERT INTO tokens (token_id, account, label, digest, created_at)"
                " VALUES (?,?,?,?,?)",
                (token_id, key, label.strip()[:80] or "token", digest(secret), now_iso()),
            )
            _audit(conn, key, "token.create", token_id, label.strip()[:80])
        return f"{TOKEN_PREFIX}{token_id}_{secret}"

    def tokens(self, name: str) -> list[dict[str, Any]]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT token_id, label, created_at FROM tokens WHERE account = ?"
                " ORDER BY created_at",
                (normalise_name(name),),
            ).fetchall()
        return [dict(r) for r in rows]

    def revoke_token(self, name: str, token_id: str) -> None:
        """Revoke one of the account's tokens; audited only when one went (not a second
        click, nor another account's token id)."""
        key = normalise_name(name)
        with self.db.connect() as conn:
            gone = conn.execute(
                "DELETE FROM tokens WHERE token_id = ? AND account = ?", (token_id, key)
            ).rowcount
            if gone:
                _audit(conn, key, "token.revoke", token_id)

    def token_principal(self, token: str) -> Principal:
        token_id, _, secret = token.strip().removeprefix(TOKEN_PREFIX).partition("_")
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT t.digest, a.name, a.admin FROM tokens t JOIN accounts a"
                " ON a.name = t.account WHERE t.token_id = ?",
                (token_id,),
            ).fetchone()
        if row is None or not secrets.compare_digest(row[0], digest(secret)):
            raise SignInRefused("That token is not valid (revoked, or mistyped).")
        return Principal(row[1], admin=bool(row[2]))

    # -- members ----------------------------------------------------------------------
    def role(self, who: Principal, ws_id: str) -> Role | None:
        """What ``who`` may do in the workspace: admins and the local user own every one."""
        if who.admin:
            return "owner"
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT role FROM memberships WHERE workspace_id = ? AND account = ?",
                (ws_id, who.name),
            ).fetchone()
        return row[0] if row else None

    def members(self, ws_id: str) -> dict[str, Role]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT account, role FROM memberships WHERE workspace_id = ? ORDER BY account",
                (ws_id,),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def grant(self, ws_id: str, name: str, role: Role | None, *, actor: str) -> None:
        """Give ``name`` a role in the workspace (None: take it away); the last owner stays."""
        key = self._existing(name)
        if role is not None and role not in ROLES:
            raise AccessError(f"A role is one of {', '.join(ROLES)}, not {role!r}.")
        with self.db.connect() as conn:
            owners = [
                r[0]
                for r in conn.execute(
                    "SELECT account FROM memberships WHERE workspace_id = ? AND role = 'owner'",
                    (ws_id,),
                )
            ]
            if owners == [key] and role != "owner":
                raise AccessError("A workspace keeps at least one owner; make another first.")
            if role is None:
                conn.execute(
                    "DELETE FROM memberships WHERE workspace_id = ? AND account = ?", (ws_id, key)
                )
            else:
                _grant(conn, ws_id, key, role)
            _audit(conn, actor, "workspace.share", ws_id, f"{key}: {role or 'none'}")

    def audit(self, actor: str, action: str, target: str, detail: str = "") -> None:
        with self.db.connect() as conn:
            _audit(conn, actor, action, target, detail)

    @staticmethod
    def audit_in(conn: Connection, actor: str, action: str, target: str, detail: str = "") -> None:
        """An audit row in the caller's transaction: it commits with the action or not at all."""
        _audit(conn, actor, action, target, detail)

    @staticmethod
    def owner_in(conn: Connection, ws_id: str, name: str) -> None:
        """A new workspace's owner and its audit row, in the transaction that creates it."""
        _grant(conn, ws_id, name, "owner")
        _audit(conn, name, "workspace.create", ws_id)

    def audit_log(self, limit: int = 500) -> list[AuditEntry]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT at, actor, action, target, detail FROM audit"
                " ORDER BY at DESC, rowid DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [AuditEntry(*tuple(r)) for r in rows]


def _account(row: Any) -> Account:
    return Account(
        row["name"], row["display"], bool(row["admin"]), row["created_at"], row["password"] is None
    )


def _check_password(password: str) -> str:
    if not (PASSWORD_MIN <= len(password or "") <= PASSWORD_MAX):
        raise AccessError(f"A password has {PASSWORD_MIN} to {PASSWORD_MAX} characters.")
    return password


_FROM = {"account": "on this account from here", "address": "from this address"}


def _anonymous(address: str) -> str:
    """The actor of a refused sign-in: the caller's address, not the account it named."""
    return f"anonymous@{address}" if address else "anonymous"


def _forget_failures(conn: Connection, key: str) -> int:
    """Delete the account's counted failed sign-ins from every address; returns how many."""
    prefix = f"account:{key}@"
    return int(
        conn.execute(
            "DELETE FROM signin_failures WHERE substr(subject, 1, ?) = ?", (len(prefix), prefix)
        ).rowcount
    )


def _link(conn: Connection, identity: tuple[str, str], key: str, actor: str) -> None:
    try:
        conn.execute(
            "INSERT INTO oidc_identities (issuer, subject, account, linked_at) VALUES (?,?,?,?)",
            (identity[0], identity[1], key, now_iso()),
        )
    except DuplicateRow as exc:
        raise AccessError("That identity is linked to an account already.") from exc
    _audit(conn, actor, "account.link", key, f"{identity[0]} {identity[1]}"[:500])


def _minutes(seconds: int) -> str:
    return f"{seconds} s" if seconds < 120 else f"{round(seconds / 60)} minutes"


def _audit(conn: Connection, actor: str, action: str, target: str, detail: str = "") -> None:
    conn.execute(
        "INSERT INTO audit (at, actor, action, target, detail) VALUES (?,?,?,?,?)",
        (now_iso(), actor, action, target[:500], detail[:500]),
    )


def _grant(conn: Connection, ws_id: str, account: str, role: str) -> None:
    conn.execute(
        "INSERT INTO memberships (workspace_id, account, role) VALUES (?,?,?)"
        " ON CONFLICT (workspace_id, account) DO UPDATE SET role = excluded.role",
        (ws_id, account, role),
    )


def _adopt_orphans(conn: Connection, admin: str) -> list[str]:
    """Every workspace without an owner becomes ``admin``'s."""
    orphans = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM workspaces w WHERE NOT EXISTS (SELECT 1 FROM memberships m"
            " WHERE m.workspace_id = w.id AND m.role = 'owner') ORDER BY id"
        )
    ]
    for ws_id in orphans:
        _grant(conn, ws_id, admin, "owner")
    return orphans


def _refuse_last_admin(conn: Connection, key: str) -> None:
    admins = [r[0] for r in conn.execute("SELECT name FROM accounts WHERE admin = 1")]
    if admins == [key]:
        raise AccessError(f"'{key}' is the last admin: make another account admin first.")


def _heir(conn: Connection, actor: str, leaving: str) -> str:
    """The admin who takes over the workspaces of a removed account."""
    admins = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM accounts WHERE admin = 1 AND name <> ? ORDER BY created_at, name",
            (leaving,),
        )
    ]
    return actor if actor in admins else admins[0]
