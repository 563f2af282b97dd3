"""A workspace that follows a folder: sync, versions, renames, removals and the edges
(issue 56). Real Chroma on tmp_path and SQLite; files made by the tests."""

from __future__ import annotations

import json
import os
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from ingest.sync import Syncer, allowed_folder
from ingest.versioning import answer_comparison
from masis_core.__main__ import main as ask_main
from masis_core.config import Settings
from masis_core.errors import AccessError, InputError, WorkspaceError
from masis_core.services.access import Door
from masis_core.services.reports import citation_source
from masis_core.storage.accounts import LOCAL, Accounts, Principal
from masis_core.storage.registry import Workspace
from masis_core.storage.versions import Versions
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import filler, make_pdf
from tests.proc import run_module

FAST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
TOPICS = [f"topic{i:02d}" for i in range(12)]


def pages(changed: dict[int, str] | None = None) -> bytes:
    """A 12-page PDF, each page on its own topic; ``changed`` replaces some pages' topics."""
    texts = [filler((changed or {}).get(i, t), 230) for i, t in enumerate(TOPICS)]
    return make_pdf(texts)


@pytest.fixture
def ws(bench: Workbench) -> Workspace:
    return bench.create_workspace("demo", "wordllama")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "followed"
    (d / "sub").mkdir(parents=True)
    (d / "report.pdf").write_bytes(pages())
    (d / "notes.md").write_text("# Notes\n\n" + filler("harbour", 120))
    (d / "sub" / "plan.txt").write_text(filler("turbine", 150))
    return d


def synced(bench: Workbench, ws: Workspace, folder: Path) -> tuple[Syncer, Door]:
    s, door = Syncer(bench), Door(bench)
    s.follow(door, ws.id, folder)
    return s, door


def visible_texts(bench: Workbench, ws: Workspace) -> list[str]:
    ids = bench.store.visible_ids(ws.embed_model, ws.id)
    return [t for t, _ in bench.store.get_chunks(ws.embed_model, ws.id, list(ids)).values()]


def status_of(report, name: str) -> str:
    return next(r.status for r in report.files if r.file == name)


def test_first_sync_adds_second_changes_nothing(bench: Workbench, ws: Workspace, folder: Path):
    s, door = synced(bench, ws, folder)
    first = s.sync_as(door, ws.id)
    assert first.counts["added"] == 3 and first.counts["failed"] == 0
    assert {d.filename for d in bench.documents(ws.id)} == {"report.pdf", "notes.md", "plan.txt"}
    again = s.sync_as(door, ws.id)
    assert again.counts == {**again.counts, "unchanged": 3, "added": 0, "updated": 0}
    assert all(r.embedded == 0 for r in again.files)
    log = [(e.action, e.target) for e in bench.accounts.audit_log()]
    assert ("folder.follow", ws.id) in log and log.count(("folder.sync", ws.id)) == 2


@pytest.mark.usefixtures("backend")
def test_a_changed_file_is_a_new_version_sharing_its_unchanged_chunks(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    v1_chunks = bench.store.count(ws.embed_model, ws.id, visible_only=False)
    (folder / "report.pdf").write_bytes(pages({3: "zeppelin"}))
    report = s.sync_as(door, ws.id)
    rec = next(r for r in report.files if r.file == "report.pdf")
    assert (rec.status, rec.version) == ("updated", 2)
    assert rec.shared >= 9 and 0 < rec.embedded <= 3
    # Storage: only what v2 adds.
    total = bench.store.count(ws.embed_model, ws.id, visible_only=False)
    assert total - v1_chunks == rec.embedded
    texts = visible_texts(bench, ws)
    assert any("zeppelin" in t for t in texts)
    assert not any("topic03" in t for t in texts)  # v1's page is out of retrieval
    versions = Versions(bench.db)
    v = versions.version_of(ws.id, rec.doc_id)
    assert v is not None
    assert [x.state for x in versions.versions(ws.id, v.lineage)] == ["superseded", "current"]
    # "What changed?" from the stored files of both versions, cited to both.
    diff = answer_comparison(bench, ws, "compare v1 and v2 of report.pdf")
    assert diff is not None and diff.counts()["changed"] == 1
    (section,) = diff.sections
    cited = {x.page for c in section.changes for x in (*c.old, *c.new)}
    assert 4 in cited <= {3, 4}  # page 3's last sentence runs on into page 4
    assert all("zeppelin" in " ".join(x.text for x in c.new) for c in section.changes)
    assert "[report.pdf, v1, p. " in "\n".join(diff.lines())
    assert answer_comparison(bench, ws, "what changed in report?") is not None
    # The library lists the document once, as its current version.
    assert [d.filename for d in bench.documents(ws.id)].count("report.pdf") == 1
    # Citations of current chunks name the version.
    ids = list(bench.store.visible_ids(ws.embed_model, ws.id))
    got = bench.store.get_chunks(ws.embed_model, ws.id, ids).values()
    metas = [m for _, m in got if m["filename"] == "report.pdf"]
    assert {m["version"] for m in metas} == {2} and {m["doc_id"] for m in metas} == {rec.doc_id}


def test_rename_costs_no_embedding_and_delete_is_kept_in_history(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    ids_before = bench.store.visible_ids(ws.embed_model, ws.id)
    (folder / "sub" / "plan.txt").rename(folder / "renamed-plan.txt")
    (folder / "notes.md").unlink()
    report = s.sync_as(door, ws.id)
    assert status_of(report, "renamed-plan.txt") == "renamed"
    assert status_of(report, "notes.md") == "removed"
    assert report.counts["added"] == 0 and all(r.embedded == 0 for r in report.files)
    ids_after = bench.store.visible_ids(ws.embed_model, ws.id)
    assert ids_after < ids_before  # the removed file's chunks left; the rename kept its own
    assert not any("harbour" in t for t in visible_texts(bench, ws))
    names = {d.filename for d in bench.documents(ws.id)}
    assert names == {"report.pdf", "renamed-plan.txt"}
    metas = bench.store.get_chunks(ws.embed_model, ws.id, list(ids_after)).values()
    assert "renamed-plan.txt" in {m["filename"] for _, m in metas}
    removed = [d for d in bench.registry.list_documents(ws.id, status="removed")]
    assert [d.filename for d in removed] == ["notes.md"]  # kept, never quoted
    # It comes back: the same bytes are the same document again, not re-read.
    (folder / "notes.md").write_text("# Notes\n\n" + filler("harbour", 120))
    back = s.sync_as(door, ws.id)
    assert status_of(back, "notes.md") == "added"
    assert any("harbour" in t for t in visible_texts(bench, ws))


def test_a_vanished_folder_fails_with_its_reason_and_removes_nothing(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    before = bench.store.visible_ids(ws.embed_model, ws.id)
    folder.rename(folder.with_name("elsewhere"))
    report = s.sync_as(door, ws.id)
    assert report.counts["failed"] == 1 and report.counts["removed"] == 0
    assert "does not exist" in report.folders[0]["error"]
    assert "Nothing was removed" in report.folders[0]["error"]
    assert bench.store.visible_ids(ws.embed_model, ws.id) == before


def test_an_unreadable_subfolder_removes_nothing_under_it(
    bench: Workbench, ws: Workspace, folder: Path, monkeypatch: pytest.MonkeyPatch
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    real = os.scandir

    def refused(path):  # what chmod 0 does (the tests run as root, who reads everything)
        if Path(path) == folder / "sub":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr("ingest.sync.os.scandir", refused)
    report = s.sync_as(door, ws.id)
    assert report.counts["removed"] == 0
    assert any(r.file == "sub/" and "Permission denied" in (r.error or "") for r in report.files)
    assert "plan.txt" in {d.filename for d in bench.documents(ws.id)}


def test_one_sync_at_a_time_and_a_dead_holder_is_taken_over(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    versions = Versions(bench.db)
    assert versions.lock(ws.id, f"{os.uname().nodename}:1") is None  # pid 1 never ends
    with pytest.raises(WorkspaceError, match="already running"):
        s.sync_as(door, ws.id)
    versions.unlock(ws.id, f"{os.uname().nodename}:1")
    dead = f"{os.uname().nodename}:999999999"
    assert versions.lock(ws.id, dead) is None
    assert s.sync_as(door, ws.id).counts["added"] == 3  # the dead holder's lock is taken


def test_links_loops_hard_links_and_undecodable_names(
    bench: Workbench, ws: Workspace, folder: Path, tmp_path: Path
):
    outside = tmp_path / "outside.txt"
    outside.write_text(filler("secret", 80))
    (folder / "leak.txt").symlink_to(outside)
    (folder / "sub" / "loop").symlink_to(folder)
    os.link(folder / "sub" / "plan.txt", folder / "hard.txt")
    odd = os.fsencode(folder) + b"/caf\xe9-notes.txt"
    with open(odd, "wb") as fh:
        fh.write(filler("lagoon", 90).encode())
    s, door = synced(bench, ws, folder)
    report = s.sync_as(door, ws.id)
    assert "link out of" in next(r.error for r in report.files if r.file == "leak.txt")
    assert not any("secret" in t for t in visible_texts(bench, ws))
    # One of two hard links is the document, the other a second path of it.
    assert {status_of(report, "hard.txt"), status_of(report, "sub/plan.txt")} == {
        "added",
        "duplicate",
    }
    assert status_of(report, "caf\\xe9-notes.txt") == "added"
    assert any("lagoon" in t for t in visible_texts(bench, ws))
    assert not any(r.file.startswith("sub/loop/sub/loop") for r in report.files)
    assert s.sync_as(door, ws.id).counts["added"] == 0
    # Both links change at once: one new version, the other path is the same document.
    (folder / "hard.txt").write_text(filler("tidewater", 150))
    again = s.sync_as(door, ws.id)
    assert {status_of(again, "hard.txt"), status_of(again, "sub/plan.txt")} == {
        "updated",
        "duplicate",
    }
    assert again.counts["failed"] == 1  # leak.txt, still skipped


def test_a_file_changed_while_read_is_retried_next_sync(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)

    def meddle(name: str, stage: str) -> None:
        if name == "notes.md" and stage == "hashed":
            (folder / "notes.md").write_text("# Notes\n\n" + filler("estuary", 120))

    report = s.sync_as(door, ws.id, on_file=meddle)
    rec = next(r for r in report.files if r.file == "notes.md")
    assert rec.status == "failed" and "changed while being read" in (rec.error or "")
    assert status_of(s.sync_as(door, ws.id), "notes.md") == "added"
    assert any("estuary" in t for t in visible_texts(bench, ws))


def test_two_workspaces_follow_one_folder_apart(bench: Workbench, folder: Path):
    a = bench.create_workspace("a", "wordllama")
    b = bench.create_workspace("b", "wordllama")
    s, door = Syncer(bench), Door(bench)
    s.follow(door, a.id, folder)
    s.follow(door, b.id, folder)
    s.sync_as(door, a.id)
    (folder / "notes.md").unlink()
    s.sync_as(door, b.id)
    assert "notes.md" in {d.filename for d in bench.documents(a.id)}
    assert "notes.md" not in {d.filename for d in bench.documents(b.id)}


def test_allow_list_and_roles(
    settings: Settings, bench: Workbench, ws: Workspace, folder: Path, monkeypatch
):
    monkeypatch.setattr(settings, "sync_roots", str(folder.parent / "other"))
    with pytest.raises(InputError, match="MASIS_SYNC_ROOTS"):
        allowed_folder("/etc", settings)
    monkeypatch.setattr(settings, "sync_roots", "")
    monkeypatch.setattr(settings, "auth", "local")
    with pytest.raises(InputError, match="not set"):
        allowed_folder(folder, settings)
    monkeypatch.setattr(settings, "sync_roots", str(folder.parent))
    assert allowed_folder(folder, settings) == folder.resolve()
    with pytest.raises(InputError, match="is a file"):
        allowed_folder(folder / "notes.md", settings)
    bench._accounts = Accounts(bench.db, hasher=FAST)
    bench.accounts.create("root", "root password")
    bench.accounts.create("vera", "vera password")
    bench.accounts.grant(ws.id, "vera", "viewer", actor="root")
    viewer, s = Door(bench, Principal("vera")), Syncer(bench)
    with pytest.raises(AccessError, match="viewer"):
        s.follow(viewer, ws.id, folder)
    s.follow(Door(bench, Principal("root", admin=True)), ws.id, folder)
    with pytest.raises(AccessError, match="viewer"):
        s.sync_as(viewer, ws.id)
    assert Door(bench, LOCAL).workspace(ws.id).id == ws.id


# -- the command line ---------------------------------------------------------------------
def cli(data_dir: Path, *args: str, env: dict[str, str] | None = None):
    return run_module(["ingest", "--workspace", "demo", *args], data_dir, env)


def test_cli_follow_sync_json_and_unfollow(settings: Settings, folder: Path):
    data = settings.data_dir
    followed = cli(data, "--follow", str(folder), "--json")
    assert followed.returncode == 0, followed.stderr
    assert json.loads(followed.stdout)["folders"] == [str(folder.resolve())]
    ran = cli(data, "--sync", "--json")
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["sync"] == {
        "added": 3,
        "updated": 0,
        "renamed": 0,
        "removed": 0,
        "unchanged": 0,
        "duplicate": 0,
        "failed": 0,
    }
    assert {r["file"] for r in out["files"]} == {"report.pdf", "notes.md", "sub/plan.txt"}
    assert set(out["files"][0]) >= {"file", "status", "doc_id", "version", "error"}
    (folder / "notes.md").write_text("# Notes\n\n" + filler("harbour", 60) + " Revised.")
    plain = cli(data, "--sync")
    assert plain.returncode == 0, plain.stderr
    assert "updated    notes.md v2" in plain.stdout
    assert cli(data, "--unfollow", str(folder)).returncode == 0
    assert json.loads(cli(data, "--sync", "--json").stdout)["sync"]["unchanged"] == 0
    bad = cli(data, "--follow", str(folder / "absent"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr


@pytest.mark.parametrize("kill_at", [2, 4])
def test_a_sync_killed_mid_version_shows_nothing_half_written_and_the_next_finishes(
    settings: Settings, folder: Path, kill_at: int
):
    data = settings.data_dir
    assert cli(data, "--follow", str(folder)).returncode == 0
    assert cli(data, "--sync").returncode == 0
    (folder / "report.pdf").write_bytes(pages({3: "zeppelin"}))
    killed = cli(data, "--sync", env={"MASIS_TEST_KILL_AT": str(kill_at)})
    assert killed.returncode == -signal.SIGKILL
    bench = Workbench(settings)
    ws = bench.registry.require_workspace("demo")
    texts = visible_texts(bench, ws)
    # One whole version of page 4 is visible, never both or neither.
    assert sum("zeppelin" in t for t in texts) + sum("topic03" in t for t in texts) == 1
    again = cli(data, "--sync", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sync"]["updated"] == 1
    texts = visible_texts(bench, ws)
    assert any("zeppelin" in t for t in texts) and not any("topic03" in t for t in texts)
    assert len(texts) == len(set(texts))  # no chunk quoted twice
    versions = Versions(bench.db)
    doc = next(d for d in bench.documents(ws.id) if d.filename == "report.pdf")
    lineage = versions.version_of(ws.id, doc.doc_id)
    assert lineage is not None
    states = [v.state for v in versions.versions(ws.id, lineage.lineage)]
    assert states == ["superseded", "current"]


def test_a_schedule_is_off_by_default_and_due_once_its_minutes_have_passed(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    versions = Versions(bench.db)
    assert versions.due() == []  # off by default
    (followed,) = versions.folders(ws.id)
    versions.set_schedule(ws.id, followed.path, 30)
    assert versions.due() == [ws.id]  # never synced
    s.sync_as(door, ws.id)
    assert versions.due() == []
    later = datetime.now(UTC) + timedelta(minutes=31)
    assert versions.due(later) == [ws.id]


def test_answers_quote_the_current_version_and_name_it(
    bench: Workbench, ws: Workspace, folder: Path
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    (folder / "report.pdf").write_bytes(pages({3: "zeppelin"}))
    s.sync_as(door, ws.id)
    rec = door.ask(ws.id, "How does the zeppelin work in practice?")
    cited = [c for c in rec.citations if c.get("filename") == "report.pdf"]
    assert cited and all(c["version"] == 2 for c in cited)
    assert any(", v2, page 4" in citation_source(c) for c in cited)
    assert all("topic03" not in c["text"] for c in rec.citations)


def test_the_ask_command_answers_what_changed_with_the_diff(
    bench: Workbench, ws: Workspace, folder: Path, capsys: pytest.CaptureFixture[str]
):
    s, door = synced(bench, ws, folder)
    s.sync_as(door, ws.id)
    (folder / "report.pdf").write_bytes(pages({3: "zeppelin"}))
    s.sync_as(door, ws.id)
    capsys.readouterr()
    assert ask_main(["ask", "--workspace", ws.id, "compare v1 and v2 of report.pdf", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "zeppelin" in out["answer"] and "[report.pdf, v2, p. " in out["answer"]
    assert out["comparison"]["sections"][0]["kind"] == "changed"
    assert out["summary"]["by"] == "offline"  # no model summary offline, and it says so
    assert "Offline extractive mode: the changes below are the computed diff" in out["answer"]
