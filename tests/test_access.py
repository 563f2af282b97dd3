"""Workspace access through the one door (``masis_core.services.access.Door``) and the CLI.

2,000 seeded random requests by 3 accounts over 6 workspaces with mixed roles, checked
against a model of who may do what: no read returns anything of a workspace the account
cannot see, a hidden workspace answers exactly as one that does not exist, and no write
happens without the role it needs. Once on SQLite with embedded Chroma, once in server mode
(PostgreSQL and ``chroma run``). No embedding: documents and runs are rows.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from masis_core.__main__ import main as cli
from masis_core.config import Settings
from masis_core.errors import AccessError, ConfigError, InputError, WorkspaceError
from masis_core.services.access import Door, no_workspace
from masis_core.services.identity import check_listen
from masis_core.services.records import RunRecord, RunStore
from masis_core.services.runs import RunService
from masis_core.storage.accounts import RANK, Accounts, Principal
from masis_core.storage.registry import Scope
from masis_core.workspaces.workbench import Workbench

FAST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
ACTORS = ("ann", "bob", "cy")
SPACES = tuple(f"w{i}" for i in range(6))
GHOST = "w-ghost"
REQUESTS = 2000
CLI_REQUESTS = 24
# Requests and how often each comes (deleting a workspace wipes its members: rarely).
OPS = {"list": 2, "docs": 3, "runs": 3, "run": 3, "export": 2, "preview": 2, "delete_doc": 2,
       "share": 2, "start": 1, "delete_ws": 0.3}  # fmt: skip


class World:
    """The workbench under test and the model of what each account should see."""

    def __init__(self, bench: Workbench, seed: int) -> None:
        self.bench, self.rng = bench, random.Random(seed)
        bench._accounts = Accounts(bench.db, hasher=FAST)
        for ws in SPACES:
            bench.registry.create_workspace(ws, "wordllama")
        bench.accounts.create("root", "root password")  # the first admin adopts all six
        self.roles: dict[tuple[str, str], str] = {}
        for name in ACTORS:
            bench.accounts.create(name, f"{name} password")
        for ws in SPACES:
            self.deal(ws)
        self.runs = RunService(bench)
        self.doors = {n: Door(bench, Principal(n), self.runs) for n in ACTORS}
        self.root = Door(bench, Principal("root", admin=True), self.runs)
        self.docs: dict[str, set[str]] = {}
        self.run_ws: dict[str, str] = {}
        for ws in SPACES:
            self.seed(ws)

    def deal(self, ws: str) -> None:
        """Random roles in the workspace for the three accounts (or none)."""
        for name in ACTORS:
            role = self.rng.choice([None, "viewer", "editor", "owner"])
            if role:
                self.bench.accounts.grant(ws, name, role, actor="root")
                self.roles[name, ws] = role

    def seed(self, ws: str) -> None:
        reg = self.bench.registry
        self.docs[ws] = set()
        for i in range(3):
            doc = f"{ws}-{i}".encode().hex().ljust(64, "0")[:64]
            reg.claim_document(ws, doc, f"{ws}-{i}.pdf", 10)
            reg.mark_ready(ws, doc, 1, 0, [])
            self.docs[ws].add(doc)
            run_id = f"r{ws}{i}{self.rng.randrange(10**6)}"
            self.runs.store.save(RunRecord(run_id, ws, f"question {i}", "offline", "completed"))
            self.run_ws[run_id] = ws

    def role(self, name: str, ws: str) -> str | None:
        return self.roles.get((name, ws)) if ws in self.docs else None

    def allowed(self, name: str, ws: str, need: str) -> bool:
        role = self.role(name, ws)
        return role is not None and RANK[role] >= RANK[need]


def hidden_same_as_ghost(exc: Exception, ws: str) -> bool:
    """A hidden workspace's refusal: the type and words of a missing one."""
    return type(exc) is WorkspaceError and str(exc) == str(no_workspace(ws))


def one_request(world: World, tally: Counter[str]) -> None:
    """One random request, its outcome checked against the model."""
    rng = world.rng
    name = rng.choice(ACTORS)
    door = world.doors[name]
    ws = rng.choice([*SPACES, GHOST])
    op = rng.choices(list(OPS), weights=list(OPS.values()))[0]
    need = {"delete_doc": "editor", "share": "owner", "delete_ws": "owner"}.get(op, "viewer")
    if op == "list":
        seen = {w.id for w in door.workspaces()}
        tally["leak"] += len(seen - {w for w in SPACES if world.role(name, w)})
        tally["missing"] += len({w for w in SPACES if world.role(name, w)} - seen)
        return
    if op in ("run", "export"):
        pool = [r for r, w in world.run_ws.items() if w == ws] or ["no-such-run"]
        run_id = rng.choice(pool)
        try:
            rec = door.run(run_id) if op == "run" else door.export(run_id)
        except InputError as exc:
            rec = None
            tally["bad_message"] += str(exc) != f"There is no run '{run_id}'."
        if rec is not None:
            tally["leak"] += not world.allowed(name, rec.workspace_id, "viewer")
            tally["ok"] += 1
        else:
            tally["missing"] += world.allowed(name, ws, "viewer") and run_id in world.run_ws
            tally["denied"] += 1
        return
    if op == "delete_doc" and ws in world.docs and not world.docs[ws]:
        world.seed(ws)  # emptied: new documents (and runs) to delete
        return
    before = world.allowed(name, ws, need)  # the model changes with a successful write
    if op == "preview":
        doc = rng.choice(sorted(world.docs.get(ws, ())) or ["0" * 64])
        shown = door.preview_allowed(ws, doc)
        tally["leak"] += shown and not before
        tally["missing"] += before and doc in world.docs[ws] and not shown
        tally["ok" if shown else "denied"] += 1
        return
    try:
        act(world, door, op, ws)
    except WorkspaceError as exc:
        tally["denied"] += 1
        tally["bad_message"] += not hidden_same_as_ghost(exc, ws)
        tally["missing"] += world.role(name, ws) is not None
        return
    except AccessError:
        tally["denied"] += 1
        tally["wrong_refusal"] += world.role(name, ws) is None or before
        return
    tally["ok"] += 1
    if not before:
        tally["leak" if need == "viewer" else "forbidden_write"] += 1


def act(world: World, door: Door, op: str, ws: str) -> object:
    """Do ``op`` through the door and keep the model in step when it succeeds."""
    rng = world.rng
    if op == "docs":
        found = {d.doc_id for d in door.documents(ws)}
        assert found == world.docs[ws]
        return found
    if op == "runs":
        return door.runs(ws)
    if op == "delete_doc":
        doc = rng.choice(sorted(world.docs.get(ws, ())) or ["0" * 64])
        door.delete_document(ws, doc)
        world.docs[ws].discard(doc)
        return None
    if op == "share":
        other, role = rng.choice(ACTORS), rng.choice(["viewer", "editor", "owner", None])
        door.share(ws, other, role)
        world.roles.pop((other, ws), None)
        if role:
            world.roles[other, ws] = role
        return None
    if op == "start":
        rec, _ = door.start(ws, "what does it say?")
        world.run_ws[rec.run_id] = ws
        return rec
    door.delete_workspace(ws)  # op == "delete_ws": then the admin makes it anew
    world.run_ws = {r: w for r, w in world.run_ws.items() if w != ws}
    world.roles = {k: v for k, v in world.roles.items() if k[1] != ws}
    world.root.create_workspace(ws, "wordllama")
    world.deal(ws)
    world.seed(ws)
    return None


def check_writes_kept_out(world: World) -> int:
    """After the run, the stores hold exactly what the model says: a refused write that
    happened anyway shows here. Returns the number of differences."""
    diff = 0
    for ws in SPACES:
        stored = {d.doc_id for d in world.bench.registry.list_documents(ws)}
        diff += stored != world.docs[ws]
        members = world.bench.accounts.members(ws)
        model = {n: r for (n, w), r in world.roles.items() if w == ws}
        diff += {n: r for n, r in members.items() if n != "root"} != model
    return diff


def cli_request(world: World, tokens: dict[str, str], tally: Counter[str]) -> None:
    """The CLI as an account (``--token``): ``status`` lists only its workspaces and runs,
    ``resume`` of a hidden run says "not found" like a run that does not exist."""
    rng = world.rng
    name = rng.choice(ACTORS)
    out, err = io.StringIO(), io.StringIO()
    if rng.random() < 0.5:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli(["--token", tokens[name], "status", "--json"])
        import json

        data = json.loads(out.getvalue())
        seen = {w["id"] for w in data["workspaces"]}
        runs = {r["workspace"] for r in data["recent_runs"]}
        visible = {w for w in SPACES if world.role(name, w)}
        tally["leak"] += code != 0 or len(seen - visible) + len(runs - visible)
        tally["missing"] += len(visible - seen)
        return
    run_id = rng.choice(sorted(world.run_ws))
    with redirect_stdout(out), redirect_stderr(err):
        code = cli(["--token", tokens[name], "resume", run_id, "--json"])
    hidden = not world.allowed(name, world.run_ws[run_id], "viewer")
    said_missing = f"There is no run '{run_id}'." in err.getvalue()
    tally["leak"] += hidden != said_missing or code != 2


@pytest.fixture(params=["sqlite", "server"])
def world(request, tmp_path, monkeypatch) -> World:
    if request.param == "server":
        monkeypatch.setenv("MASIS_POSTGRES_URL", request.getfixturevalue("postgres_url"))
        chroma = request.getfixturevalue("chroma_server")
        monkeypatch.setenv("MASIS_CHROMA_HOST", "127.0.0.1")
        monkeypatch.setenv("MASIS_CHROMA_PORT", str(chroma.port))
    settings = request.getfixturevalue("settings")
    monkeypatch.setenv("MASIS_AUTH", "local")
    return World(Workbench(settings), seed=30)


def test_random_requests_leak_nothing_and_write_nothing_forbidden(world: World) -> None:
    tally: Counter[str] = Counter()
    for _ in range(REQUESTS):
        one_request(world, tally)
    tokens = {n: world.bench.accounts.create_token(n, "test") for n in ACTORS}
    from masis_core.config import get_settings

    get_settings.cache_clear()  # the CLI reads MASIS_AUTH=local
    for _ in range(CLI_REQUESTS):
        cli_request(world, tokens, tally)
    assert tally["leak"] == 0 and tally["forbidden_write"] == 0, tally
    assert tally["bad_message"] == 0 and tally["wrong_refusal"] == 0, tally
    assert tally["missing"] == 0, tally
    assert check_writes_kept_out(world) == 0
    # Both sides were exercised: allowed and refused requests in numbers.
    assert tally["ok"] > 400 and tally["denied"] > 400, tally


@pytest.mark.usefixtures("backend")
def test_scoped_store_queries_return_nothing_of_anothers(bench: Workbench) -> None:
    """The registry's and the run store's own queries, scoped to account B, hold nothing of
    A's workspace: its lookup and its run's answer None like a missing id, the listings
    leave them out; the admin's scope sees both, a deleted workspace's run no one."""
    bench._accounts = Accounts(bench.db, hasher=FAST)
    reg, store = bench.registry, RunStore(bench)
    bench.accounts.create("root", "root password")
    for name in ("ann", "bob"):
        bench.accounts.create(name, f"{name} password")
        reg.create_workspace(f"{name}s", "wordllama")
        bench.accounts.grant(f"{name}s", name, "owner", actor="root")
        store.save(RunRecord(f"run-{name}", f"{name}s", "q", "offline", "completed"))
    bob, ann, admin = Scope("bob"), Scope("ann"), Scope()
    assert reg.get_workspace("anns", bob) is None and reg.get_workspace("ghost", bob) is None
    assert reg.get_workspace("bobs", bob) is not None and reg.get_workspace("anns", ann)
    assert [w.id for w in reg.list_workspaces(bob)] == ["bobs"]
    assert [w.id for w in reg.list_workspaces(admin)] == ["anns", "bobs"]
    assert store.get("run-ann", bob) is None and store.get("no-such-run", bob) is None
    assert store.get("run-bob", bob) is not None and store.get("run-ann", admin) is not None
    assert [r.run_id for r in store.list(scope=bob)] == ["run-bob"]
    assert store.list("anns", scope=bob) == [] and len(store.list(scope=admin)) == 2
    door = Door(bench, Principal("bob"))
    said = []
    for run_id in ("run-ann", "no-such-run"):
        with pytest.raises(InputError) as exc:
            door.require_run(run_id)
        said.append(str(exc.value).replace(run_id, "ID"))
    assert said[0] == said[1] and door.recent_runs() == store.list(scope=bob)
    bench.accounts.grant("anns", "bob", "viewer", actor="ann")  # shared: now visible
    assert reg.get_workspace("anns", bob) and store.get("run-ann", bob)
    reg.delete_workspace("anns")  # its run row stays until swept; no one sees it
    assert store.get("run-ann", bob) is None and store.get("run-ann", admin) is None
    assert store.get("run-ann") is not None  # unscoped: the internal callers' view


def test_open_listener_without_sign_in_is_refused(tmp_path: Path) -> None:
    none = Settings.local(tmp_path)
    for address in ("127.0.0.1", "::1", "localhost", "[::1]"):
        check_listen(none, address)
    for address in ("0.0.0.0", "", None, "192.168.1.20", "::"):
        with pytest.raises(ConfigError, match=r"MASIS_AUTH=local.*MASIS_ALLOW_OPEN=1"):
            check_listen(none, address)
    check_listen(Settings.local(tmp_path, allow_open=True), "0.0.0.0")
    check_listen(Settings.local(tmp_path, auth="local"), "0.0.0.0")


def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    import sys

    real = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli(argv)
    finally:
        sys.stdin = real
    return code, out.getvalue() + err.getvalue()


def real_cli(
    module: str, argv: list[str], env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """The real command (``python -m masis_core`` / ``python -m ingest``) in a process of
    its own, on the test's settings."""
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=Path(__file__).parent.parent,
        timeout=300,
    )


def test_cli_sign_ins_are_keyed_on_the_user_id_and_audited(settings, monkeypatch) -> None:
    """The command line's throttle key is the process's user id, which ``$USER`` does not
    set (``USER=victim`` had locked the real user out); password and token sign-ins and the
    refusals are in the audit log, the refusals not under the targeted account's name."""
    monkeypatch.setenv("MASIS_AUTH", "local")
    env = {"MASIS_AUTH": "local", "USER": "victim", "LOGNAME": "victim"}
    assert (
        real_cli(
            "masis_core", ["users", "add", "ada", "--password-stdin"], env, "ada pw 1234\n"
        ).returncode
        == 0
    )
    wrong = real_cli("masis_core", ["--user", "ada", "status"], {**env, "MASIS_PASSWORD": "guess"})
    assert wrong.returncode == 2 and "Wrong account name" in wrong.stderr
    right = real_cli(
        "masis_core", ["--user", "ada", "status"], {**env, "MASIS_PASSWORD": "ada pw 1234"}
    )
    assert right.returncode == 0, right.stderr
    bench = Workbench(Settings.local(settings.data_dir))
    token = bench.accounts.create_token("ada", "cli")
    assert real_cli("masis_core", ["--token", token, "status"], env).returncode == 0
    bad = real_cli("masis_core", ["--token", token[:-3] + "xyz", "status"], env)
    assert bad.returncode == 2
    uid = f"cli:uid{os.getuid()}"
    rows = [(e.actor, e.action, e.target, e.detail) for e in bench.accounts.audit_log()]
    assert (f"anonymous@{uid}", "signin.fail", "ada", uid) in rows
    assert ("ada", "signin", "ada", f"{uid} password") in rows
    assert ("ada", "signin", "ada", f"{uid} token") in rows
    assert any(r[0] == f"anonymous@{uid}" and r[3].startswith("token ") for r in rows)
    assert not [r for r in rows if "victim" in " ".join(r)]


def test_cli_users_and_signing_in(settings, monkeypatch) -> None:
    """``users add|list|reset|remove`` for admins; commands act as ``--user`` (password from
    MASIS_PASSWORD here, a prompt otherwise) or ``--token``; nothing without one of them."""
    from masis_core.config import get_settings

    monkeypatch.setenv("MASIS_AUTH", "local")
    get_settings.cache_clear()
    for action in ("reset", "remove"):  # nothing to reset or remove: said before any prompt
        code, said = run_cli(["users", action, "bob"])
        assert code == 2 and "There is no account yet" in said, said
    assert (
        run_cli(["users", "add", "Ada", "--password-stdin"], "first password\n")[0] == 0
    )  # the first: no sign-in yet
    code, said = run_cli(["users", "add", "bob", "--password-stdin"], "bob password\n")
    assert code == 2 and "--user NAME" in said
    monkeypatch.setenv("MASIS_PASSWORD", "first password")
    assert (
        run_cli(["--user", "ada", "users", "add", "bob", "--password-stdin"], "bob password\n")[0]
        == 0
    )
    monkeypatch.setenv("MASIS_PASSWORD", "bob password")
    code, said = run_cli(
        ["--user", "bob", "users", "add", "eve", "--password-stdin"], "eve password\n"
    )
    assert code == 2 and "not an admin" in said
    code, said = run_cli(["--user", "bob", "status", "--json"])
    assert code == 0 and '"workspaces": []' in said
    monkeypatch.setenv("MASIS_PASSWORD", "wrong password")
    assert "Wrong account name or password" in run_cli(["--user", "bob", "status"])[1]
    monkeypatch.setenv("MASIS_PASSWORD", "first password")
    code, said = run_cli(["--user", "ada", "users", "list"])
    assert code == 0 and "ada (admin)" in said and "bob  since" in said
    code, said = run_cli(
        ["--user", "ada", "users", "reset", "bob", "--password-stdin", "--json", "-v"],
        "new bob pw\n",
    )  # --json and -v after the command, as on every other command
    assert code == 0 and json.loads(said) == {"action": "reset", "name": "bob", "tokens_revoked": 0}
    code, said = run_cli(["--user", "ada", "users", "remove", "ada"])
    assert code == 2 and "last admin" in said
    assert run_cli(["--user", "ada", "users", "remove", "bob"])[0] == 0
    bench = Workbench(get_settings())
    assert [a.name for a in bench.accounts.all()] == ["ada"]
    # An admin removing itself: its workspace goes to the other admin, and the CLI says so.
    assert (
        run_cli(
            ["--user", "ada", "users", "add", "cy", "--admin", "--password-stdin"], "cy pw 123\n"
        )[0]
        == 0
    )
    bench.registry.create_workspace("adas", "wordllama")
    bench.accounts.grant("adas", "ada", "owner", actor="ada")
    code, said = run_cli(["--user", "ada", "users", "remove", "ada"])
    assert code == 0 and "adas now owned by cy" in said, said


def test_jobs_check_the_role_and_stay_the_accounts_after_sign_out(bench, settings) -> None:
    """The job manager checks the door it is given; a run started in a session goes on after
    that session signs out, owned by the account (the job and the audit log say whose)."""
    from ingest.pipeline import Ingestor, Source
    from masis_core.services.jobs import JobManager

    bench._accounts = Accounts(bench.db, hasher=FAST)
    for ws in ("shared", "private"):
        bench.registry.create_workspace(ws, "wordllama")
    bench.accounts.create("root", "root password")
    bench.accounts.create("ann", "ann password")
    bench.accounts.grant("shared", "ann", "viewer", actor="root")
    who, secret = bench.accounts.sign_in("ann", "ann password")
    runs = RunService(bench)
    ann = Door(bench, who, runs)
    jobs = JobManager(runs, Ingestor(bench))
    job = jobs.ask("shared", "What does the manual say about pumps?", door=ann)
    bench.accounts.end_session(secret)  # signed out while the run works
    assert job.wait(120) and job.state == "done" and job.account == "ann"
    assert runs.get(job.id) is not None and ann.run(job.id) is not None
    assert ("ann", "run.start") in [(e.actor, e.action) for e in bench.accounts.audit_log()]
    with pytest.raises(AccessError, match="needs editor"):
        jobs.ingest(
            bench.registry.require_workspace("shared"), [Source.of_bytes("a.txt", b"x")], door=ann
        )
    with pytest.raises(WorkspaceError, match="There is no workspace 'private'"):
        jobs.ask("private", "What does it say?", door=ann)
    hidden, _ = runs.start("private", "A question of root's")
    with pytest.raises(InputError, match="There is no run"):
        jobs.resume(hidden.run_id, None, door=ann)


def test_a_runs_review_and_verdict_are_its_askers_or_an_editors(bench: Workbench) -> None:
    """A viewer had cancelled the owner's paused run and turned its 👍 into their own (the
    owner then read "You marked this answer right"), moving the workspace's calibration."""
    bench._accounts = Accounts(bench.db, hasher=FAST)
    bench.registry.create_workspace("team", "wordllama")
    runs = RunService(bench)
    for name, role in (("ada", "owner"), ("bob", "editor"), ("carl", "viewer"), ("dee", "viewer")):
        bench.accounts.create(name, f"{name} password")
        bench.accounts.grant("team", name, role, actor="root")
    ada, bob, carl, dee = (Door(bench, Principal(n), runs) for n in ("ada", "bob", "carl", "dee"))
    paused = ada.ask("team", "What does the empty workspace say about pumps?")
    assert (paused.status, paused.asked_by) == ("needs_human", "ada")
    cancel = {"action": "cancel"}
    with pytest.raises(AccessError, match="asked by another account"):
        carl.resume(paused.run_id, cancel)
    with pytest.raises(AccessError, match="asked by another account"):
        carl.mark(paused.run_id, True)
    assert runs.get(paused.run_id).status == "needs_human"  # untouched
    assert runs.get(paused.run_id).feedback is None
    assert not carl.may_review(paused) and ada.may_review(paused) and bob.may_review(paused)
    own = carl.ask("team", "What does the empty workspace say about valves?")
    carl.mark(own.run_id, False)  # a viewer's own run is theirs to judge
    assert runs.get(own.run_id).feedback is False
    with pytest.raises(AccessError):
        dee.mark(own.run_id, True)
    assert bob.resume(paused.run_id, cancel).status == "cancelled"  # an editor may act
    log = [(e.actor, e.action) for e in bench.accounts.audit_log()]
    assert ("carl", "run.verdict") in log and ("bob", "run.resume") in log
    assert ("carl", "run.resume") not in log  # the refused one is not recorded as done


def test_evaluations_and_calibrations_need_editor_and_are_audited(bench: Workbench) -> None:
    """Both store what they found for every reader of the workspace (a calibration also moves
    every run's confidence); a viewer had run evaluations that no audit line recorded."""
    bench._accounts = Accounts(bench.db, hasher=FAST)
    bench.registry.create_workspace("team", "wordllama")
    for name, role in (("ada", "owner"), ("bob", "editor"), ("carl", "viewer")):
        bench.accounts.create(name, f"{name} password")
        bench.accounts.grant("team", name, role, actor="root")
    bob, carl = (Door(bench, Principal(n)) for n in ("bob", "carl"))
    for action in ("evaluate", "calibrate"):
        with pytest.raises(AccessError, match=f"is viewer; {action} needs editor"):
            carl.start_task("team", action)
        assert bob.start_task("team", action).id == "team"
    log = [(e.actor, e.action) for e in bench.accounts.audit_log()]
    assert ("bob", "workspace.evaluate") in log and ("bob", "workspace.calibrate") in log
    assert not [a for a in log if a[0] == "carl" and a[1].startswith("workspace.")]


def test_cli_first_admin_race_a_stale_empty_check_makes_no_second_admin(
    settings, monkeypatch
) -> None:
    """``users add mallory --admin`` that saw an empty table (another process made the first
    account meanwhile): the insert's own transaction refuses it, admin or not."""
    from masis_core.config import get_settings

    monkeypatch.setenv("MASIS_AUTH", "local")
    get_settings.cache_clear()
    assert run_cli(["users", "add", "operator", "--password-stdin"], "operator pw\n")[0] == 0
    monkeypatch.setattr(Accounts, "count", lambda self: 0)  # the check before the race
    code, said = run_cli(["users", "add", "mallory", "--admin", "--password-stdin"], "mal pw 12\n")
    assert code == 2 and "only an admin adds more" in said, said
    monkeypatch.undo()
    accounts = Workbench(Settings.local(settings.data_dir)).accounts
    assert [(a.name, a.admin) for a in accounts.all()] == [("operator", True)]
