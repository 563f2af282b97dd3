"""The outside review's holes (issue 53), each closed: the Host check of the no-sign-in mode,
the throttle's address, ``python -m ingest`` acting as an account, cancels and uploads that
check the role when they act, names that do not tell of hidden workspaces, and audit rows
written in their action's own transaction (a process killed between the two writes leaves
both or neither)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from ingest.pipeline import Ingestor, Source
from masis_core.config import Settings
from masis_core.errors import AccessError, ConfigError
from masis_core.services.access import Door
from masis_core.services.identity import check_host, client_address
from masis_core.services.jobs import Job, JobManager
from masis_core.services.runs import RunService
from masis_core.storage.accounts import Accounts, Principal
from masis_core.workspaces.workbench import Workbench
from tests.test_access import real_cli
from tests.texts import BOILER, PUMP

FAST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


def team(bench: Workbench, roles: dict[str, str], ws: str = "team") -> None:
    """Accounts root (admin) and ``roles``' names, with those roles in workspace ``ws``."""
    bench._accounts = Accounts(bench.db, hasher=FAST)
    bench.registry.create_workspace(ws, "wordllama")
    bench.accounts.create("root", "root password")
    for name, role in roles.items():
        bench.accounts.create(name, f"{name} password")
        bench.accounts.grant(ws, name, role, actor="root")


def log(bench: Workbench) -> list[tuple[str, str, str, str]]:
    return [(e.actor, e.action, e.target, e.detail) for e in bench.accounts.audit_log()]


@pytest.mark.parametrize(
    ("host", "served"),
    [
        ("localhost:8501", True),
        ("127.0.0.1:8501", True),
        ("[::1]:8501", True),
        ("LOCALHOST.", True),
        ("rebind.attacker.example:8501", False),
        ("127.0.0.1.nip.io", False),
        ("wb.lan:8501", True),  # listed by the operator
    ],
)
def test_without_sign_in_only_loopback_names_and_listed_hosts_are_served(
    tmp_path: Path, host: str, served: bool
) -> None:
    settings = Settings.local(tmp_path, allowed_hosts="wb.lan")
    if served:
        check_host(settings, host)
    else:
        with pytest.raises(ConfigError, match="MASIS_ALLOWED_HOSTS"):
            check_host(settings, host)
    check_host(Settings.local(tmp_path, auth="local"), "rebind.attacker.example")  # signed in


def test_the_throttles_address_is_the_peer_unless_a_named_proxy_forwards(tmp_path: Path) -> None:
    """Loopback is an address; a forged X-Forwarded-For from loopback (which the server in
    front of Streamlit believes) is not the address unless the operator names the proxy."""
    plain = Settings.local(tmp_path)
    assert client_address(plain, None, {}) == "127.0.0.1"
    assert client_address(plain, "10.0.0.5", {}) == "10.0.0.5"
    forged = {"x-forwarded-for": "6.6.6.6"}  # uvicorn made the peer 6.6.6.6 from it
    assert client_address(plain, "6.6.6.6", forged) == "127.0.0.1"
    assert client_address(plain, "10.0.0.5", forged) == "10.0.0.5"  # not taken from it
    proxied = Settings.local(tmp_path, trusted_proxies="127.0.0.1, 10.0.0.1")
    chain = {"x-forwarded-for": "6.6.6.6, 203.0.113.7, 10.0.0.1"}
    assert client_address(proxied, "10.0.0.1", chain) == "203.0.113.7"


def test_a_viewer_cannot_cancel_an_editors_calibration_and_cancels_are_audited(
    bench: Workbench,
) -> None:
    team(bench, {"bob": "editor", "carl": "viewer", "dora": "editor"})
    job = Job("job000000001", "calibration", "team", "calibration of team", account="bob")
    carl, dora = Door(bench, Principal("carl")), Door(bench, Principal("dora"))
    assert not carl.may_cancel(job) and dora.may_cancel(job)
    with pytest.raises(AccessError, match="is viewer; calibrate needs editor"):
        carl.cancel(job)
    assert not job.cancel_requested
    dora.cancel(job)
    assert job.cancel_requested
    rows = log(bench)
    assert ("carl", "access.refused", "team", "calibrate as viewer") in rows
    assert ("dora", "job.cancel", "team", "calibration: calibration of team") in rows


class RemovedAfterFirst:
    """The real ingestor; after its first file an admin takes the uploader out of the
    workspace (the review's removal while a batch ran)."""

    def __init__(self, inner: Ingestor, remove: object) -> None:
        self.inner, self.remove = inner, remove

    def display_names(self, sources: list[Source]) -> list[str]:
        return self.inner.display_names(sources)

    def ingest_each(self, ws, sources, on_start, cancelled, added=None):  # type: ignore[no-untyped-def]
        reports = self.inner.ingest_each(ws, sources, on_start, cancelled, added)
        for i, report in enumerate(reports):
            yield report
            if i == 0:
                self.remove()  # type: ignore[operator]


def test_a_removed_members_upload_stops_at_the_next_file_with_the_reason(
    bench: Workbench,
) -> None:
    team(bench, {"bob": "editor"})
    runs = RunService(bench)
    ingestor = RemovedAfterFirst(
        Ingestor(bench), lambda: bench.accounts.grant("team", "bob", None, actor="root")
    )
    jobs = JobManager(runs, ingestor)  # type: ignore[arg-type]
    sources = [
        Source.of_bytes(f"{n}.txt", text.encode())
        for n, text in enumerate([BOILER, PUMP, BOILER + PUMP])
    ]
    job = jobs.ingest(
        bench.registry.require_workspace("team"), sources, door=Door(bench, Principal("bob"), runs)
    )
    assert job.wait(300)
    assert job.state == "cancelled" and "bob may no longer add documents to team" in job.error
    assert [f.stage for f in job.files] == ["ingested", "cancelled", "cancelled"]
    assert [d.filename for d in bench.documents("team")] == ["0.txt"]
    assert ("bob", "access.refused", "team", "upload: role gone mid-batch") in log(bench)


def test_a_name_held_by_a_hidden_workspace_tells_nothing(bench: Workbench) -> None:
    """Names are each account's own: ann's "Secret" beside root's hidden one gets an id of its
    own, not "already exists"; her own name taken twice is still said."""
    team(bench, {"ann": "editor"}, ws="shared")
    bench.registry.create_workspace("Secret", "wordllama")  # root's, hidden from ann
    ann = Door(bench, Principal("ann"))
    mine = ann.create_workspace("Secret", "wordllama")
    assert (mine.id, mine.name) == ("secret-2", "Secret")
    assert sorted(w.id for w in ann.workspaces()) == ["secret-2", "shared"]
    with pytest.raises(Exception, match="already exists"):
        ann.create_workspace("Secret", "wordllama")
    root = Door(bench, Principal("root", admin=True))
    with pytest.raises(Exception, match="already exists"):  # an admin sees every one
        root.create_workspace("Secret", "wordllama")


KILLER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from masis_core.config import Settings
    from masis_core.services.access import Door
    from masis_core.storage import accounts
    from masis_core.storage.accounts import Principal
    from masis_core.workspaces.workbench import Workbench

    data, action = Path(sys.argv[1]), sys.argv[2]
    write = accounts._audit

    def audit(conn, actor, what, *rest):
        if what == action:  # the action's row is written, its audit row not yet: killed
            os._exit(9)
        write(conn, actor, what, *rest)

    accounts._audit = audit
    bench = Workbench(Settings.local(data, provider="offline"))
    door = Door(bench, Principal("ann"))
    if action == "workspace.create":
        door.create_workspace("doomed", "wordllama")
    elif action == "workspace.delete":
        door.delete_workspace("kept")
    elif action == "document.add":
        from ingest.pipeline import Ingestor, Source

        boiler = Source.of_bytes("boiler.txt", sys.argv[3].encode())
        ws = bench.registry.require_workspace("kept")
        list(Ingestor(bench).ingest_each(ws, [boiler], added=door.added("kept")))
    else:
        door.delete_document("kept", bench.documents("kept")[0].doc_id)
    """
)


@pytest.mark.parametrize(
    "action", ["workspace.create", "workspace.delete", "document.delete", "document.add"]
)
def test_a_process_killed_between_an_action_and_its_audit_row_leaves_neither(
    tmp_path: Path, action: str
) -> None:
    data = tmp_path / "data"
    bench = Workbench(Settings.local(data, provider="offline"))
    team(bench, {"ann": "owner"}, ws="kept")
    assert (
        Ingestor(bench)
        .ingest_bytes(bench.registry.require_workspace("kept"), PUMP.encode(), "pump.txt")
        .status
        == "ingested"
    )
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, str(data), action, BOILER],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert killed.returncode == 9, killed.stderr[-2000:]
    db = sqlite3.connect(data / "masis.db")
    audited = db.execute("SELECT COUNT(*) FROM audit WHERE action = ?", (action,)).fetchone()[0]
    spaces = {r[0] for r in db.execute("SELECT id FROM workspaces")}
    owners = db.execute("SELECT COUNT(*) FROM memberships WHERE workspace_id = 'doomed'")
    docs = db.execute(
        "SELECT COUNT(*) FROM documents WHERE workspace_id = 'kept' AND status = 'ready'"
    ).fetchone()[0]
    assert audited == 0  # killed before its audit row: so the action is not there either
    if action == "workspace.create":
        assert "doomed" not in spaces and owners.fetchone()[0] == 0
    elif action == "workspace.delete":
        assert "kept" in spaces
    else:  # the deleted one still there; the added one never ready (swept as a crash's)
        assert docs == 1


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("where", ["writing the audit row", "after the audit row"])
def test_a_failure_between_a_new_document_and_its_audit_row_leaves_neither(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The document's ready row and its ``document.add`` row are one transaction (SQLite and
    PostgreSQL): a failure writing the audit row, or just after it, stores neither, and
    the same file ingested again lands with its one row."""
    from masis_core.storage import accounts

    team(bench, {"ann": "editor"})
    ws, ann = bench.registry.require_workspace("team"), Door(bench, Principal("ann"))
    write = accounts._audit

    def failing(conn, actor, action, *rest):  # type: ignore[no-untyped-def]
        if action == "document.add" and where == "writing the audit row":
            raise RuntimeError("disk full")
        write(conn, actor, action, *rest)
        if action == "document.add":
            raise RuntimeError("disk full")

    monkeypatch.setattr(accounts, "_audit", failing)
    source = Source.of_bytes("boiler.txt", BOILER.encode())
    (report,) = Ingestor(bench).ingest_each(ws, [source], added=ann.added(ws.id))
    assert report.status == "failed" and "disk full" in str(report.error)
    assert bench.registry.list_documents(ws.id, status=None) == []
    assert not [r for r in log(bench) if r[1] == "document.add"]
    assert bench.store.count(ws.embed_model, ws.id, visible_only=False) == 0
    monkeypatch.setattr(accounts, "_audit", write)
    (report,) = Ingestor(bench).ingest_each(ws, [source], added=ann.added(ws.id))
    assert report.status == "ingested"
    added = [r for r in log(bench) if r[1] == "document.add"]
    assert added == [("ann", "document.add", f"team/{report.doc_id}", "boiler.txt")]


def test_an_upload_writes_one_audit_row_per_new_document_naming_the_account(
    bench: Workbench,
) -> None:
    """A batch through the job manager: each document that landed has its ``document.add``
    row naming the uploader; a duplicate and a file that failed have none."""
    team(bench, {"bob": "editor"})
    runs = RunService(bench)
    jobs = JobManager(runs, Ingestor(bench))
    sources = [
        Source.of_bytes(name, text.encode())
        for name, text in [("boiler.txt", BOILER), ("pump.txt", PUMP), ("again.txt", BOILER)]
    ] + [Source.of_bytes("empty.txt", b"")]
    ws = bench.registry.require_workspace("team")
    job = jobs.ingest(ws, sources, door=Door(bench, Principal("bob"), runs))
    assert job.wait(300) and job.state == "done"
    assert [f.stage for f in job.files] == ["ingested", "ingested", "duplicate", "failed"]
    docs = {d.filename: d.doc_id for d in bench.documents("team")}
    added = sorted(r for r in log(bench) if r[1] == "document.add")
    assert added == sorted(
        ("bob", "document.add", f"team/{docs[name]}", name) for name in ("boiler.txt", "pump.txt")
    )


def test_python_m_ingest_acts_as_an_account_and_is_audited(tmp_path: Path, settings) -> None:
    """With MASIS_AUTH=local the real command needs --user or --token; it lists and adds only
    where the account's role allows, a new workspace is the account's own, and the audit log
    says who added what."""
    bench = Workbench(settings)
    team(bench, {"ann": "owner", "mallory": "viewer"}, ws="anns")
    bench.accounts.create_token("ann", "laptop")
    doc = tmp_path / "pump.txt"
    doc.write_text(PUMP)
    env = {"MASIS_AUTH": "local"}
    nobody = real_cli("ingest", ["-w", "anns", "--list"], env)
    assert nobody.returncode == 2 and "--user NAME" in nobody.stderr
    as_mallory = {**env, "MASIS_PASSWORD": "mallory password"}
    planted = real_cli("ingest", ["--user", "mallory", "-w", "anns", str(doc)], as_mallory)
    assert planted.returncode == 2 and "is viewer; upload needs editor" in planted.stderr
    hidden = real_cli("ingest", ["--user", "mallory", "-w", "roots", "--list"], as_mallory)
    assert hidden.returncode == 2 and "There is no workspace 'roots'" in hidden.stderr
    made = real_cli("ingest", ["--user", "mallory", "-w", "mine", str(doc)], as_mallory)
    assert made.returncode == 0, made.stderr
    assert bench.accounts.members("mine") == {"mallory": "owner"}
    assert bench.documents("anns") == []
    rows = log(bench)
    assert ("mallory", "workspace.create", "mine", "") in rows
    assert ("mallory", "document.upload", "mine", "1 files (python -m ingest)") in rows
    (pump,) = bench.documents("mine")
    assert ("mallory", "document.add", f"mine/{pump.doc_id}", "pump.txt") in rows
    assert ("mallory", "access.refused", "anns", "upload as viewer") in rows


def test_the_sign_in_cookie_is_signed_and_a_ticket_is_traded_once(settings) -> None:
    """A cookie whose secret or signature was changed signs no one in; a ticket for it is
    good once (``ui/session_cookie.py``: the browser trades it for the HttpOnly cookie)."""
    from ui import session_cookie

    value = session_cookie.sign("the-secret")
    assert session_cookie.unsign(value) == "the-secret"
    assert session_cookie.unsign("other-secret" + value[len("the-secret") :]) is None
    assert session_cookie.unsign(value[:-1] + ("0" if value[-1] != "0" else "1")) is None
    assert session_cookie.unsign(None) is None and session_cookie.unsign("") is None
    assert (settings.data_dir / "cookie.key").stat().st_mode & 0o777 == 0o600
    ticket = session_cookie.ticket("the-secret")
    assert session_cookie._redeem(ticket) == "the-secret"
    assert session_cookie._redeem(ticket) is None
