"""Accounts in the workbench's own database (MASIS_AUTH=local), on SQLite and PostgreSQL:
names that cannot pass for others, the first admin adopting an old data dir, the last admin,
a removed account's workspaces, throttled sign-ins on an injected clock, sessions, tokens,
and the first admin and the throttle under requests arriving together (threads)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from argon2 import PasswordHasher

from masis_core.errors import AccessError, SignInRefused, Throttled
from masis_core.storage.accounts import Accounts, normalise_name
from masis_core.storage.db import open_database
from masis_core.storage.registry import Registry

pytestmark = pytest.mark.usefixtures("backend")

# Argon2 at its lightest: the tests check the flow, not the cost.
FAST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def accounts(settings, clock) -> Accounts:
    return Accounts(open_database(settings), clock=clock, hasher=FAST, window_s=900)


def test_names_are_normalised_and_confusables_refused() -> None:
    assert normalise_name("  Ｐａｕｌ ") == "paul"  # full-width letters, any case
    assert normalise_name("STRASSE") == normalise_name("straße")
    assert normalise_name("Jose\u0301") == normalise_name("jos\u00e9") == "jos\u00e9"  # decomposed
    for bad, why in [
        ("", "empty"),
        ("   ", "empty"),
        ("a" * 65, "at most 64"),
        ("p\u0430ul", "mixes alphabets"),  # Cyrillic а inside Latin
        ("ann smith", "not ' '"),
        ("bob\u200b", "not"),  # a zero-width space
        ("b\u0301ob", "not"),  # a combining accent that composes with nothing
    ]:
        with pytest.raises(AccessError, match=why):
            normalise_name(bad)


def test_first_admin_adopts_every_workspace_and_stays(settings, accounts) -> None:
    registry = Registry(accounts.db)
    for ws in ("old-a", "old-b"):
        registry.create_workspace(ws, "wordllama")  # made while MASIS_AUTH=none
    admin = accounts.create("Ada", "correct horse")
    assert admin.admin and accounts.members("old-a") == {"ada": "owner"}
    assert accounts.members("old-b") == {"ada": "owner"}
    bob = accounts.create("bob", "battery staple")
    assert not bob.admin
    with pytest.raises(AccessError, match="already exists"):
        accounts.create("ADA", "another one")
    with pytest.raises(AccessError, match="last admin"):
        accounts.remove("ada", actor="ada")
    with pytest.raises(AccessError, match="last admin"):
        accounts.set_admin("ada", False, actor="ada")
    # bob alone owns a workspace; removing him moves it to the acting admin, audited.
    registry.create_workspace("bobs", "wordllama")
    accounts.grant("bobs", "bob", "owner", actor="bob")
    accounts.grant("old-a", "bob", "viewer", actor="ada")
    assert accounts.remove("bob", actor="ada") == ["bobs"]
    assert accounts.members("bobs") == {"ada": "owner"}
    assert accounts.members("old-a") == {"ada": "owner"}
    actions = [(e.action, e.target) for e in accounts.audit_log()]
    assert ("workspace.transfer", "bobs") in actions and (
        "workspace.adopt",
        "old-a,old-b",
    ) in actions
    # The last owner of a workspace stays one.
    with pytest.raises(AccessError, match="at least one owner"):
        accounts.grant("bobs", "ada", "viewer", actor="ada")


def test_brute_force_is_throttled_and_the_right_password_works_later(accounts, clock) -> None:
    accounts.create("ada", "correct horse")
    refused = throttled = 0
    for i in range(50):
        clock.now += 1
        try:
            accounts.sign_in("ada", f"guess {i}", address="10.0.0.9")
        except Throttled:
            throttled += 1
        except SignInRefused:
            refused += 1
    assert refused == accounts.max_failures and throttled == 50 - accounts.max_failures
    with pytest.raises(Throttled, match="try again in"):  # even the right one, from there
        accounts.sign_in("ada", "correct horse", address="10.0.0.9")
    clock.now += accounts.window_s + 1
    who, secret = accounts.sign_in("ada", "correct horse", address="10.0.0.9")
    assert who.name == "ada" and who.admin and accounts.session(secret) == who
    # Another account from the same address: the address's own limit.
    accounts.create("bob", "battery staple")
    for i in range(accounts.max_failures_address):
        with pytest.raises(SignInRefused):
            accounts.sign_in(f"nobody{i}", "x" * 8, address="10.0.0.66")
    with pytest.raises(Throttled):
        accounts.sign_in("bob", "battery staple", address="10.0.0.66")
    assert accounts.sign_in("bob", "battery staple", address="10.0.0.7")[0].name == "bob"


def test_an_unknown_name_costs_a_hash_as_a_wrong_password_does(settings, clock) -> None:
    """No timing oracle for account names: an unknown one is refused after a password
    hash is checked, as a known one with a wrong password is."""
    checked: list[str] = []

    class Counting(PasswordHasher):
        def verify(self, hash: str | bytes, password: str | bytes) -> bool:
            checked.append(str(hash))
            return super().verify(hash, password)

    hasher = Counting(time_cost=1, memory_cost=8, parallelism=1)
    accounts = Accounts(open_database(settings), clock=clock, hasher=hasher)
    accounts.create("ada", "correct horse")
    for name in ("ada", "nobody"):
        with pytest.raises(SignInRefused, match="Wrong account name or password"):
            accounts.sign_in(name, "wrong guess")
    assert len(checked) == 2 and all(h.startswith("$argon2id$") for h in checked)


def test_sessions_end_on_sign_out_expiry_and_password_change(accounts, clock) -> None:
    accounts.create("ada", "correct horse")
    _, first = accounts.sign_in("ada", "correct horse")
    _, second = accounts.sign_in("ada", "correct horse")
    accounts.end_session(first)
    with pytest.raises(SignInRefused, match="ended"):
        accounts.session(first)
    assert accounts.session(second).name == "ada"
    clock.now += 1
    accounts.change_password("ada", "correct horse", "new password 1")
    with pytest.raises(SignInRefused):
        accounts.session(second)
    _, third = accounts.sign_in("ada", "new password 1")
    clock.now += accounts.session_s + 1
    with pytest.raises(SignInRefused):
        accounts.session(third)
    with pytest.raises(SignInRefused):
        accounts.sign_in("ada", "correct horse")
    accounts.sign_in("ada", "new password 1")  # the expired session's row goes meanwhile
    with accounts.db.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


def test_tokens_are_stored_hashed_and_revocable(accounts) -> None:
    accounts.create("ada", "correct horse")
    token = accounts.create_token("ada", "laptop")
    assert accounts.token_principal(token).name == "ada"
    with accounts.db.connect() as conn:
        stored = [tuple(r) for r in conn.execute("SELECT * FROM tokens")]
    assert token not in repr(stored) and token.split("_", 2)[2] not in repr(stored)
    with pytest.raises(SignInRefused):
        accounts.token_principal(token[:-2] + "xx")
    token_id = accounts.tokens("ada")[0]["token_id"]
    accounts.create("bob", "battery staple")
    accounts.revoke_token("bob", token_id)  # not bob's: it stays, and nothing is logged
    assert accounts.token_principal(token).name == "ada"
    accounts.revoke_token("ada", token_id)
    accounts.revoke_token("ada", token_id)  # a second click
    with pytest.raises(SignInRefused):
        accounts.token_principal(token)
    revoked = [(e.actor, e.target) for e in accounts.audit_log() if e.action == "token.revoke"]
    assert revoked == [("ada", token_id)]


THREADS = 8


def together(work: Callable[[int], str]) -> Counter[str]:
    """``work(i)`` on THREADS threads released at once; the tally of what each returned."""
    gate, tally, lock = threading.Barrier(THREADS), Counter[str](), threading.Lock()

    def one(i: int) -> None:
        gate.wait()
        outcome = work(i)
        with lock:
            tally[outcome] += 1

    threads = [threading.Thread(target=one, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally


def test_first_account_is_the_only_admin_when_created_together(accounts) -> None:
    """Eight accounts created at once on an empty database: exactly one is admin, and it
    alone adopted the old workspace."""
    Registry(accounts.db).create_workspace("old", "wordllama")

    def create(i: int) -> str:
        return "admin" if accounts.create(f"user{i}", "a password").admin else "user"

    assert together(create) == Counter(admin=1, user=THREADS - 1)
    admins = [a.name for a in accounts.all() if a.admin]
    assert len(admins) == 1 and accounts.members("old") == {admins[0]: "owner"}


def test_guesses_arriving_together_get_no_more_refusals_than_the_limit(accounts) -> None:
    """Eight threads guessing three times each: five refusals in all (the account's
    limit), the rest throttled; an address's limit holds the same way."""
    accounts.create("ada", "correct horse")

    def guesses(address: str) -> Callable[[int], str]:
        def guess(i: int) -> str:
            outcome = ""
            for n in range(3):
                try:
                    accounts.sign_in(f"x{i}-{n}" if address else "ada", f"no {i} {n}", address)
                except Throttled:
                    outcome += "t"
                except SignInRefused:
                    outcome += "r"
            return outcome

        return guess

    tally = together(guesses(""))
    assert sum(o.count("r") * k for o, k in tally.items()) == accounts.max_failures, tally
    accounts.max_failures_address = 7
    tally = together(guesses("10.0.0.9"))  # eight names, one address
    assert sum(o.count("r") * k for o, k in tally.items()) == 7, tally


def test_one_callers_failures_never_refuse_anothers_right_password(accounts, clock) -> None:
    """Mallory's guesses from one address refuse that address only; carol's right password
    from hers goes through. Every refusal, the ones past the limit included, is audited with
    the caller's address as the actor (not carol). An admin's unlock ends the wait."""
    accounts.create("root", "root password")
    accounts.create("carol", "carol password")
    for i in range(accounts.max_failures + 3):
        clock.now += 1
        with pytest.raises(SignInRefused):
            accounts.sign_in("carol", f"guess {i}", address="10.6.6.6")
    with pytest.raises(Throttled, match="ask an admin to unlock"):
        accounts.sign_in("carol", "carol password", address="10.6.6.6")
    assert accounts.sign_in("carol", "carol password", address="127.0.0.1")[0].name == "carol"
    rows = [(e.actor, e.action, e.target) for e in accounts.audit_log() if e.target == "carol"]
    assert rows.count(("anonymous@10.6.6.6", "signin.fail", "carol")) == accounts.max_failures
    assert rows.count(("anonymous@10.6.6.6", "signin.throttled", "carol")) == 4
    assert not [r for r in rows if r[0] == "carol" and r[1].startswith("signin.")]
    assert accounts.unlock("carol", actor="root") == accounts.max_failures
    assert accounts.sign_in("carol", "carol password", address="10.6.6.6")[0].name == "carol"
    assert ("root", "account.unlock", "carol") in [
        (e.actor, e.action, e.target) for e in accounts.audit_log()
    ]


def test_a_reset_revokes_the_accounts_tokens_a_change_unless_kept(accounts) -> None:
    accounts.create("root", "root password")
    accounts.create("bob", "bob password")
    stolen = accounts.create_token("bob", "laptop")
    assert accounts.set_password("bob", "new bob password", actor="root") == 1
    with pytest.raises(SignInRefused):
        accounts.token_principal(stolen)
    kept = accounts.create_token("bob", "laptop")
    assert (
        accounts.change_password("bob", "new bob password", "newer password", keep_tokens=True) == 0
    )
    assert accounts.token_principal(kept).name == "bob"
    assert accounts.change_password("bob", "newer password", "newest password") == 1
    with pytest.raises(SignInRefused):
        accounts.token_principal(kept)
    details = [e.detail for e in accounts.audit_log() if e.action.startswith("password.")]
    assert details == ["1 tokens revoked", "", "1 tokens revoked"]


def test_an_unauthenticated_first_account_is_refused_once_one_exists(accounts) -> None:
    """The CLI's first ``users add`` (no one signed in) checks the table in the insert's own
    transaction: a second process that also saw it empty gets no account, admin or not."""
    accounts.create("operator", "operator password", first_only=True)
    with pytest.raises(AccessError, match="only an admin adds more"):
        accounts.create("mallory", "mallory password", admin=True, first_only=True)
    assert [(a.name, a.admin) for a in accounts.all()] == [("operator", True)]


def test_oidc_identities_are_keyed_on_issuer_and_subject(accounts) -> None:
    """A name or e-mail never picks an account: a second identity wanting a held name (after
    NFKC and case folding) is refused until an admin links it."""
    ada = accounts.create("ada", "ada password")
    assert ada.admin
    for wanted in ("ADA", "Ａｄａ", "ada"):
        with pytest.raises(AccessError, match="not linked to it"):
            accounts.oidc_account("https://idp.example", "attacker-123", wanted)
    eve = accounts.oidc_account("https://idp.example", "eve-1", "eve")
    assert (eve.name, eve.admin, eve.oidc) == ("eve", False, True)
    renamed = accounts.oidc_account("https://idp.example", "eve-1", "someone-else")
    assert renamed.name == "eve"  # the subject, not the name, finds her
    with pytest.raises(AccessError, match="not linked"):  # same sub, another issuer
        accounts.oidc_account("https://other.example", "eve-1", "eve")
    accounts.link_identity("ada", "https://idp.example", "ada-sub", actor="ada")
    assert accounts.oidc_account("https://idp.example", "ada-sub", "whatever").name == "ada"
