"""Signing in and out of the Streamlit app (AppTest): MASIS_AUTH=local's form, and
MASIS_AUTH=oidc's ``st.login`` path with ``st.user`` as Streamlit's AppTest seeds it (no OIDC
provider is installable from the package index here; docs/team.md and docs/security.md say so)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from masis_core.config import get_settings
from masis_core.errors import SignInRefused
from masis_core.services.records import RunRecord
from masis_core.services.runs import RunStore
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app


def auth_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> Workbench:
    monkeypatch.setenv("MASIS_AUTH", mode)
    get_settings.cache_clear()
    return Workbench(get_settings())


def workspace_ids(at: AppTest) -> list[str]:
    boxes = [s for s in at.sidebar.selectbox if s.label == "Workspace"]
    return [o.split(" · ")[0] for o in boxes[0].options] if boxes else []


def click(at: AppTest, label: str) -> AppTest:
    (button,) = [b for b in at.button if b.label == label]
    return button.click().run()


def sign_in(at: AppTest, name: str, password: str) -> AppTest:
    at.text_input(key="signin-name").input(name)
    at.text_input(key="signin-password").input(password)
    return click(at, "Sign in")


def test_sign_in_shows_only_your_workspaces_and_sign_out_ends_access(settings, monkeypatch) -> None:
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("root", "root password")
    for name in ("ann", "bob"):
        bench.accounts.create(name, f"{name} password")
        bench.registry.create_workspace(f"{name}-ws", "wordllama")
        bench.accounts.grant(f"{name}-ws", name, "owner", actor="root")
    RunStore(bench).save(
        RunRecord("bobrun000001", "bob-ws", "bob's question", "offline", "completed")
    )

    at = fresh_app()
    at.run()
    assert not at.exception and workspace_ids(at) == []
    assert [t.key for t in at.text_input] == ["signin-name", "signin-password"]
    sign_in(at, "ann", "wrong password")
    assert "Wrong account name or password" in at.error[0].value and workspace_ids(at) == []
    sign_in(at, "ANN", "ann password")  # names are case-folded
    assert not at.exception, at.exception
    assert workspace_ids(at) == ["ann-ws"]
    assert any("Signed in as **ann**" in c.value for c in at.sidebar.caption)
    secret = at.session_state["masis_session"]
    # Bob's run by its address: "not found", the same as a run that does not exist.
    at.query_params["run"] = "bobrun000001"
    at.run()
    hidden = [w.value for w in at.warning if "No run" in w.value]
    at.query_params["run"] = "nosuchrun001"
    at.run()
    missing = [w.value for w in at.warning if "No run" in w.value]
    assert (
        hidden
        and missing
        and hidden[0].replace("bobrun000001", "X") == missing[0].replace("nosuchrun001", "X")
    )
    click(at, "Sign out")
    assert workspace_ids(at) == [] and "signin-name" in [t.key for t in at.text_input]
    with pytest.raises(SignInRefused):
        bench.accounts.session(secret)  # over in the database too, not only in this tab
    actions = [e.action for e in bench.accounts.audit_log()]
    assert {"signin", "signin.fail", "signout"} <= set(actions)


def test_oidc_signs_in_through_st_user_and_makes_the_account(settings, monkeypatch) -> None:
    bench = auth_mode(monkeypatch, "oidc")
    bench.registry.create_workspace("old-ws", "wordllama")
    at = fresh_app()
    at.user = {"is_logged_in": False}
    at.run()
    assert [b.label for b in at.button] == ["Sign in"] and workspace_ids(at) == []
    at.user = {**ISSUED, "email": "Ann@Example.org", "email_verified": True, "sub": "1"}
    at.run()
    assert not at.exception, at.exception
    assert workspace_ids(at) == ["old-ws"]  # the first account: admin, owns the old data
    assert bench.accounts.get("ann@example.org").admin
    at2 = fresh_app()
    at2.user = {**ISSUED, "email": "bob@example.org", "email_verified": True, "sub": "2"}
    at2.run()
    assert not at2.exception and workspace_ids(at2) == []
    assert not bench.accounts.get("bob@example.org").admin
    assert ("bob@example.org", "signin") in [
        (e.actor, e.action) for e in bench.accounts.audit_log()
    ]
    click(at2, "Sign out")  # st.logout: AppTest's user becomes logged out
    assert [b.label for b in at2.button] == ["Sign in"]


ISSUED = {"is_logged_in": True, "iss": "https://idp.example"}


@pytest.mark.parametrize(
    "claims",
    [
        {"preferred_username": "ADA", "sub": "attacker-123"},
        {"preferred_username": "Ａｄａ", "sub": "attacker-124"},  # full-width, NFKC: "ada"
        {"email": "ada", "preferred_username": "ada", "sub": "attacker-125"},
    ],
)
def test_an_oidc_sign_in_never_takes_over_a_held_name(settings, monkeypatch, claims) -> None:
    """The review's takeovers of the admin "ada" (a password account): each is refused with
    what an admin does to link it, sees nothing, and no sign-in is audited as ada."""
    bench = auth_mode(monkeypatch, "oidc")
    bench.accounts.create("ada", "ada password")
    bench.registry.create_workspace("ada-ws", "wordllama")
    bench.accounts.grant("ada-ws", "ada", "owner", actor="ada")
    mallory = fresh_app()
    mallory.user = {**ISSUED, **claims}
    mallory.run()
    assert not mallory.exception
    said = " ".join(e.value for e in mallory.error)
    assert "not linked to it" in said and "users link ada" in said, said
    assert workspace_ids(mallory) == []
    assert not [e for e in bench.accounts.audit_log() if e.action == "signin"]
    assert [a.name for a in bench.accounts.all()] == ["ada"]


def test_an_unverified_email_names_nothing_and_a_subject_keeps_its_account(
    settings, monkeypatch
) -> None:
    """An e-mail without ``email_verified: true`` is not the account's name; the issuer and
    ``sub`` find the account on every later sign-in, whatever the e-mail says then."""
    bench = auth_mode(monkeypatch, "oidc")
    bench.registry.create_workspace("ann-ws", "wordllama")
    ann = fresh_app()
    ann.user = {**ISSUED, "email": "ann@example.org", "email_verified": True, "sub": "1"}
    ann.run()
    assert workspace_ids(ann) == ["ann-ws"]
    mallory = fresh_app()
    mallory.user = {**ISSUED, "email": "ann@example.org", "sub": "666"}
    mallory.run()
    assert not mallory.exception and workspace_ids(mallory) == []
    assert bench.accounts.get("666") is not None  # an account of her own, by her subject
    later = fresh_app()
    later.user = {**mallory.user, "email_verified": True}  # even verified now: still "666"
    later.run()
    assert workspace_ids(later) == []
    signins = [(e.actor, e.action) for e in bench.accounts.audit_log() if e.action == "signin"]
    assert ("ann@example.org", "signin") in signins and signins.count(("666", "signin")) == 2


def run_on_open_address() -> AppTest:
    """The app as served with ``--server.address 0.0.0.0``."""
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    try:
        at = fresh_app()
        at.run()
    finally:
        config.set_option("server.address", before)
    return at


def test_an_open_address_without_sign_in_serves_nothing(settings, monkeypatch) -> None:
    """``server.address`` beyond loopback with MASIS_AUTH=none: the app says what to set and
    draws no page; MASIS_ALLOW_OPEN=1 serves it."""
    at = run_on_open_address()
    assert "MASIS_ALLOW_OPEN=1" in at.error[0].value and workspace_ids(at) == []
    assert "No workspace yet" not in " ".join(w.value for w in at.sidebar.warning)
    monkeypatch.setenv("MASIS_ALLOW_OPEN", "1")
    get_settings.cache_clear()
    at = run_on_open_address()
    assert not at.error and "No workspace yet" in " ".join(w.value for w in at.sidebar.warning)


def test_account_page_audit_log_for_admins_only_and_password_change(settings, monkeypatch) -> None:
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("root", "root password")
    bench.accounts.create("ann", "ann password")
    at = fresh_app()
    at.run()
    sign_in(at, "ann", "ann password")
    at.switch_page("pages/account.py").run()
    assert not at.exception, at.exception
    headers = [h.value for h in at.subheader]
    assert "Personal tokens" in headers and "Audit log" not in headers
    at.text_input(key="pw-old").input("ann password")
    at.text_input(key="pw-new").input("ann's new password")
    click(at, "Change password")
    assert bench.accounts.verify_password("ann", "ann's new password").name == "ann"
    at.run()  # this tab stays signed in on a session of its own
    assert any("Signed in as **ann**" in c.value for c in at.sidebar.caption)
    root = fresh_app()
    root.run()
    sign_in(root, "root", "root password")
    root.switch_page("pages/account.py").run()
    assert "Audit log" in [h.value for h in root.subheader]
    log = root.dataframe[-1].value
    assert {"signin", "password.change"} <= set(log["action"])


def test_an_admin_unlocks_an_account_and_a_reset_says_its_tokens_went(
    settings, monkeypatch
) -> None:
    """Past five wrong passwords the sign-in waits (each refusal audited); an admin's
    "Unlock sign-in" on the Account page ends the wait, and a reset revokes the tokens."""
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("root", "root password")
    bench.accounts.create("carol", "carol password")
    bench.accounts.create_token("carol", "laptop")
    carol = fresh_app()
    carol.run()
    for _ in range(6):
        sign_in(carol, "carol", "wrong password")
    assert "Too many failed sign-ins" in carol.error[0].value
    root = fresh_app()
    root.run()
    sign_in(root, "root", "root password")
    root.switch_page("pages/account.py").run()
    root.text_input(key="reset-name").input("carol")
    click(root, "Unlock sign-in")
    assert "Unlocked: 5 failed sign-ins forgotten." in [s.value for s in root.success]
    sign_in(carol, "carol", "carol password")
    assert any("Signed in as **carol**" in c.value for c in carol.sidebar.caption)
    root.text_input(key="reset-name").input("carol")
    root.text_input(key="reset-pw").input("carol's new password")
    click(root, "Reset password")
    assert any("1 personal tokens were revoked" in s.value for s in root.success)
    assert bench.accounts.tokens("carol") == []
    actions = [(e.actor, e.action) for e in bench.accounts.audit_log()]
    assert ("anonymous@127.0.0.1", "signin.throttled") in actions
    assert ("root", "account.unlock") in actions


def test_an_owner_shares_from_the_sidebar_and_a_viewer_gets_no_owner_boxes(
    settings, monkeypatch
) -> None:
    """Sharing by account name from the sidebar form: a name that is no account is refused
    (shown escaped), a viewer then sees the workspace without the share and delete boxes."""
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("root", "root password")
    for name in ("ann", "b_o_b"):
        bench.accounts.create(name, f"{name} password")
    bench.registry.create_workspace("ann-ws", "wordllama")
    bench.accounts.grant("ann-ws", "ann", "owner", actor="root")

    ann = sign_in(fresh_app().run(), "ann", "ann password")
    assert workspace_ids(ann) == ["ann-ws"]
    ann.sidebar.text_input(key="share-name").input("*nobody*")
    click(ann, "Share")
    assert "There is no account '\\*nobody\\*'" in ann.error[0].value
    ann.sidebar.text_input(key="share-name").input("B_O_B")
    ann.sidebar.selectbox(key="share-role").select("viewer")
    click(ann, "Share")
    assert not ann.exception, ann.exception
    assert bench.accounts.members("ann-ws") == {"ann": "owner", "b_o_b": "viewer"}
    assert any(c.value == "b_o_b: viewer" for c in ann.sidebar.caption)

    bob = sign_in(fresh_app().run(), "b_o_b", "b_o_b password")
    assert workspace_ids(bob) == ["ann-ws"]
    labels = [e.label for e in bob.sidebar.expander]
    assert "Share this workspace" not in labels and "Delete this workspace" not in labels
    assert ("ann", "workspace.share") in [(e.actor, e.action) for e in bench.accounts.audit_log()]


def test_a_verdict_after_the_workspace_was_unshared_is_not_kept(settings, monkeypatch) -> None:
    """The thumbs' callback goes through the door: bob's page still shows ann's run after
    she took his role away, and his click there stores nothing; nor does ann's once her
    session has ended elsewhere."""
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("ann", "ann password")
    bench.accounts.create("bob", "bob password")
    bench.registry.create_workspace("ann-ws", "wordllama")
    bench.accounts.grant("ann-ws", "ann", "owner", actor="ann")
    # An editor: a viewer gets no thumbs on another account's run at all (test_access).
    bench.accounts.grant("ann-ws", "bob", "editor", actor="ann")
    store = RunStore(bench)
    store.save(
        RunRecord("annrun000001", "ann-ws", "ann's question", "offline", "completed", "Yes.")
    )
    bob = sign_in(fresh_app().run(), "bob", "bob password")
    bob.switch_page("pages/runs.py").run()
    assert not bob.exception, bob.exception
    (thumbs,) = bob.feedback
    bench.accounts.grant("ann-ws", "bob", None, actor="ann")
    thumbs.set_value(1).run()
    assert not bob.exception, bob.exception
    assert store.get("annrun000001").feedback is None and workspace_ids(bob) == []
    # Ann, signed out in another tab: her click keeps nothing and the tab shows the sign-in.
    ann = sign_in(fresh_app().run(), "ann", "ann password")
    ann.switch_page("pages/runs.py").run()
    (thumbs,) = ann.feedback
    bench.accounts.end_session(ann.session_state["masis_session"])
    thumbs.set_value(1).run()
    assert not ann.exception and [b.label for b in ann.button] == ["Sign in"]
    assert store.get("annrun000001").feedback is None


def test_a_viewer_reads_anothers_run_without_its_review_or_thumbs(settings, monkeypatch) -> None:
    """A viewer was offered the review form and the thumbs of the owner's runs (and could
    cancel one); they now read that the review and verdict are the asker's."""
    bench = auth_mode(monkeypatch, "local")
    for name in ("ann", "carl"):
        bench.accounts.create(name, f"{name} password")
    bench.registry.create_workspace("ann-ws", "wordllama")
    bench.accounts.grant("ann-ws", "ann", "owner", actor="ann")
    bench.accounts.grant("ann-ws", "carl", "viewer", actor="ann")
    done = RunRecord("annrun000001", "ann-ws", "ann's question", "offline", "completed", "Yes.")
    done.asked_by, done.feedback = "ann", True
    paused = RunRecord("annrun000002", "ann-ws", "ann's other", "offline", "needs_human", "No.")
    paused.asked_by, paused.hitl = "ann", {"kind": "low_confidence", "message": "Low."}
    for rec in (paused, done):  # the Runs page opens the newest
        RunStore(bench).save(rec)
    carl = sign_in(fresh_app().run(), "carl", "carl password")
    carl.switch_page("pages/runs.py").run()
    assert not carl.exception and not carl.feedback  # the completed run: no thumbs
    said = "Asked by ann: its review and verdict are theirs, or an editor's, to give."
    assert f"{said} It is marked right." in [c.value for c in carl.caption]
    carl.query_params["run"] = "annrun000002"
    carl.switch_page("pages/research.py").run()
    assert not carl.exception, carl.exception
    assert said in [i.value for i in carl.info]
    assert not [b for b in carl.button if b.label == "Submit and resume"]
    assert not [e for e in carl.expander if "paused run" in e.label]  # not carl's to review
    # Nor is a viewer offered the upload, to be refused only after choosing files.
    carl.switch_page("pages/library.py").run()
    assert not carl.exception, carl.exception
    assert carl.info[0].value.startswith("Your role in this workspace is viewer: adding")
    assert not [b for b in carl.button if b.label == "Ingest"]
    # Nor an evaluation or a recalibration, which change what every reader sees.
    carl.switch_page("pages/inspector.py").run()
    assert not carl.exception, carl.exception
    said = "Your role in this workspace is viewer: running an evaluation needs editor"
    assert any(i.value.startswith(said) for i in carl.info)
    assert not [b for b in carl.button if b.label in ("Evaluate this workspace", "Recalibrate now")]


def test_the_account_page_by_its_address_signs_in_first_and_shows_names_as_text(
    settings, monkeypatch
) -> None:
    """The Account page opened by its address before signing in draws the sign-in and none
    of the page; an account made with a decomposed accent signs in by its composed capitals
    and is shown composed; a token label with markup shows as text, and the token shown once
    acts for the CLI."""
    bench = auth_mode(monkeypatch, "local")
    bench.accounts.create("root", "root password")
    bench.accounts.create("Jose\u0301", "jose password")
    at = fresh_app()
    at.switch_page("pages/account.py").run()
    assert not at.exception, at.exception
    assert [t.key for t in at.text_input] == ["signin-name", "signin-password"]
    assert "Personal tokens" not in [h.value for h in at.subheader]
    sign_in(at, "JOS\u00c9", "jose password")
    assert not at.exception, at.exception
    assert "Personal tokens" in [h.value for h in at.subheader]
    assert any("Signed in as **jos\u00e9**" in c.value for c in at.sidebar.caption)
    at.text_input(key="token-label").input("*laptop* [x](https://e.vil)")
    click(at, "Create token")
    assert bench.accounts.token_principal(at.code[0].value).name == "jos\u00e9"
    (label,) = [c.value for c in at.caption if "·" in c.value]
    assert label.startswith("\\*laptop\\* \\[x\\]") and "`https://e.vil`" in label, label
