"""Keep a workspace in step with the folders it follows (DESIGN §1, docs/folder-sync.md).

A sync reads every file's content hash and compares it with what the last sync saw:

- a new file is ingested (the pipeline, as an upload); a file whose bytes a workspace already
  holds (uploaded before, or a removed document come back) is taken as it is, not read again;
- a changed file becomes the next version of its document, storing only the chunks it adds;
- a file gone is removed: out of retrieval, its versions kept in history;
- a file gone from one path and found at another with the same bytes is a rename: no parse,
  no embedding; a second path with the same bytes (a hard link, a copy) is the same document.

One sync per workspace at a time (a row in ``sync_locks``); a sync cut short leaves no half
version visible and the next one finishes the work (``VersionKeeper.recover``). A folder that
is gone or unreadable fails with the reason and removes nothing; a file that changed while it
was read fails and is retried next time; links that loop or lead outside the allowed roots
are skipped.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from ingest import kinds
from ingest.parsing import SUPPORTED_SUFFIXES
from ingest.pipeline import Ingestor, Source, display_name
from ingest.versioning import PageIngestor, VersionKeeper, stage_printer
from masis_core.config import Settings
from masis_core.errors import InputError, MasisError, WorkspaceError
from masis_core.retrieval.store import chunk_id
from masis_core.services.access import Door
from masis_core.services.jobs import FileProgress, Job, JobManager
from masis_core.storage.owners import current_owner, owner_alive
from masis_core.storage.registry import READY, Workspace
from masis_core.storage.versions import (
    CURRENT,
    REMOVED,
    Folder,
    NewVersion,
    SyncedFile,
    Version,
)
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)

Status = Literal["added", "updated", "renamed", "removed", "unchanged", "duplicate", "failed"]
COUNTED: tuple[Status, ...] = (
    "added",
    "updated",
    "renamed",
    "removed",
    "unchanged",
    "duplicate",
    "failed",
)
OnFile = Callable[[str, str], None]  # (file, stage or outcome)
HASH_BLOCK = 1 << 20


@dataclass
class SyncRecord:
    """One file's outcome, as ``--json`` prints it."""

    file: str
    folder: str
    status: Status
    doc_id: str | None = None
    version: int | None = None
    previous: str | None = None  # a rename's old path
    embedded: int = 0  # chunks embedded for this file
    shared: int = 0  # chunks shared with the version before (neither stored nor embedded)
    error: str | None = None

    def line(self) -> str:
        extra = f" (was {self.previous})" if self.previous else ""
        why = f": {self.error}" if self.error else ""
        v = f" v{self.version}" if self.version else ""
        return f"{self.status:<10} {self.file}{v}{extra}{why}"


@dataclass
class SyncReport:
    workspace: str
    files: list[SyncRecord] = field(default_factory=list)
    folders: list[dict[str, Any]] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = dict.fromkeys(COUNTED, 0)
        for r in self.files:
            out[r.status] += 1
        out["failed"] += sum(1 for f in self.folders if f.get("error"))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "sync": self.counts,
            "folders": self.folders,
            "files": [asdict(r) for r in self.files],
        }

    def summary(self) -> str:
        return ", ".join(f"{n} {k}" for k, n in self.counts.items() if n) or "nothing to do"


# -- which folders ------------------------------------------------------------------------
def sync_roots(settings: Settings) -> list[Path]:
    return [Path(r).resolve() for r in settings.sync_roots.split(":") if r.strip()]


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def allowed_folder(path: str | Path, settings: Settings) -> Path:
    """The folder, resolved, when the server may follow it; else ``InputError`` saying why.
    With sign-in on only folders under ``MASIS_SYNC_ROOTS`` (a web user must not make the
    server read /etc); with ``MASIS_AUTH=none`` any folder it can read, unless the list is set."""
    raw = Path(os.path.expanduser(str(path)))
    if not raw.is_absolute():
        raw = Path.cwd() / raw
    resolved = raw.resolve()
    roots = sync_roots(settings)
    if roots and not any(_under(resolved, r) for r in roots):
        shown = ":".join(str(r) for r in roots)
        raise InputError(
            f"{raw} is not under the folders this server may follow (MASIS_SYNC_ROOTS={shown}); "
            "ask the administrator to add it there."
        )
    if not roots and settings.auth != "none":
        raise InputError(
            "With sign-in on, a folder can be followed only under MASIS_SYNC_ROOTS, which is "
            "not set: the administrator sets it to the folders (colon-separated) users may follow."
        )
    if not resolved.exists():
        raise InputError(f"{raw} does not exist (moved, or its drive not mounted?).")
    if not resolved.is_dir():
        raise InputError(f"{raw} is a file, not a folder: follow the folder that holds it.")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise InputError(f"The server may not read {raw} (permission denied).")
    return resolved


# -- reading a folder ---------------------------------------------------------------------
def path_key(rel: str) -> str:
    """A relative path as stored: bytes that are no valid UTF-8 are escaped (``\\xff``)."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class Found:
    key: str  # path relative to the folder (``path_key``)
    path: Path
    size: int
    content_hash: str


@dataclass
class Walk:
    files: list[Found] = field(default_factory=list)
    skipped: list[SyncRecord] = field(default_factory=list)
    unread_dirs: list[str] = field(default_factory=list)  # keys of subfolders not read


def _readable_kind(name: str) -> bool:
    return Path(name).suffix.lower() in (*SUPPORTED_SUFFIXES, *kinds.SUFFIXES)


def walk(folder: Path, settings: Settings, on_file: OnFile | None = None) -> Walk:
    """Every file of a kind the Library reads under ``folder``, hashed. Links are followed
    only inside the allowed roots (the folder itself when none are set), each directory
    once (a loop ends there)."""
    allowed = sync_roots(settings) or [folder]
    out = Walk()
    seen_dirs: set[tuple[int, int]] = set()
    st = folder.stat()
    seen_dirs.add((st.st_dev, st.st_ino))
    stack = [folder]
    while stack:
        here = stack.pop()
        for entry in _entries(here, folder, out):
            key = path_key(os.path.relpath(entry.path, folder))
            why = _link_problem(entry, allowed)
            if why:
                out.skipped.append(SyncRecord(key, str(folder), "failed", error=why))
                continue
            try:
                info = entry.stat()
            except OSError as exc:
                out.skipped.append(SyncRecord(key, str(folder), "failed", error=_os_why(exc)))
                continue
            if stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) not in seen_dirs:
                    seen_dirs.add((info.st_dev, info.st_ino))
                    stack.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode) and _readable_kind(entry.name):
                found = _hashed(key, Path(entry.path), out, folder)
                if found is not None:
                    out.files.append(found)
                    if on_file:
                        on_file(key, "hashed")
    out.files.sort(key=lambda f: f.key)
    return out


def _entries(here: Path, folder: Path, out: Walk) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(here) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        key = path_key(os.path.relpath(here, folder))
        out.unread_dirs.append(key)
        out.skipped.append(SyncRecord(key + "/", str(folder), "failed", error=_os_why(exc)))
        return []


def _link_problem(entry: os.DirEntry[str], allowed: list[Path]) -> str | None:
    if not entry.is_symlink():
        return None
    target = Path(entry.path).resolve()
    if not target.exists():
        return "skipped: a link to nothing (or a link loop)"
    if not any(_under(target, r) for r in allowed):
        return "skipped: a link out of the folders this server may follow"
    return None


def _os_why(exc: OSError) -> str:
    return f"unreadable: {exc.strerror or exc}"


def _hashed(key: str, path: Path, out: Walk, folder: Path) -> Found | None:
    try:
        digest, size = file_hash(path)
    except OSError as exc:
        out.skipped.append(SyncRecord(key, str(folder), "failed", error=_os_why(exc)))
        return None
    return Found(key, path, size, digest)


def file_hash(path: Path) -> tuple[str, int]:
    """sha256 of the file's bytes (the doc_id they would have), read in blocks; a file whose
    size or time changed while it was read raises (it is retried at the next sync)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        before = os.fstat(fh.fileno())
        while block := fh.read(HASH_BLOCK):
            h.update(block)
        after = os.fstat(fh.fileno())
    if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
        raise _changed()
    return h.hexdigest(), after.st_size


def _changed() -> OSError:
    return OSError(errno.EAGAIN, "changed while being read; retried at the next sync")


def read_verified(path: Path, content_hash: str) -> bytes:
    """The file's bytes, only if they are still those the walk hashed."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != content_hash:
        raise _changed()
    return data


# -- the sync ---------------------------------------------------------------------------
class Syncer:
    """Sync a workspace's followed folders; one per call site (cheap)."""

    def __init__(self, bench: Workbench, ingestor: Ingestor | None = None) -> None:
        self.bench = bench
        self.ingestor = ingestor or PageIngestor(bench)
        self.keeper = VersionKeeper(bench, self.ingestor)
        self.versions = self.keeper.versions

    def sync(
        self,
        ws: Workspace,
        actor: str = "local",
        on_file: OnFile | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> SyncReport:
        """Sync every folder the workspace follows; the summary goes to the audit log."""
        owner = self._lock(ws.id)
        report = SyncReport(ws.id)
        try:
            self.ingestor.sweep_stale()
            self.keeper.recover(ws)
            for folder in self.versions.folders(ws.id):
                if cancelled():
                    break
                self._sync_folder(ws, folder.path, report, on_file, cancelled)
        finally:
            self.versions.unlock(ws.id, owner)
        self.bench.accounts.audit(actor, "folder.sync", ws.id, report.summary())
        return report

    # -- the door's side: who may follow and sync ---------------------------------------
    def follow(self, door: Door, ws_id: str, path: str | Path) -> Folder:
        """Follow a folder (an editor's act, audited); checked against the allow-list."""
        ws = door.workspace(ws_id, "upload")
        resolved = allowed_folder(path, self.bench.settings)
        folder = self.versions.follow(ws.id, str(resolved), door.who.name)
        self.bench.accounts.audit(door.who.name, "folder.follow", ws.id, str(resolved))
        return folder

    def unfollow(self, door: Door, ws_id: str, path: str | Path) -> None:
        """Stop following; the documents stay. The path as followed, or as typed again."""
        ws = door.workspace(ws_id, "upload")
        typed = str(path)
        known = {f.path for f in self.versions.folders(ws.id)}
        key = typed if typed in known else str(Path(os.path.expanduser(typed)).resolve())
        if not self.versions.unfollow(ws.id, key):
            raise InputError(f"Workspace '{ws.id}' does not follow {typed}.")
        self.bench.accounts.audit(door.who.name, "folder.unfollow", ws.id, key)

    def sync_as(
        self,
        door: Door,
        ws_id: str,
        on_file: OnFile | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> SyncReport:
        """A sync started by ``door``'s principal (editor or owner; a viewer may not)."""
        ws = door.workspace(ws_id, "upload")
        return self.sync(ws, door.who.name, on_file, cancelled)

    def _lock(self, ws_id: str) -> str:
        owner = current_owner()
        holder = self.versions.lock(ws_id, owner)
        if holder is None:
            return owner
        if not owner_alive(holder) and self.versions.take_over(ws_id, holder, owner):
            log.warning("took over the sync lock of %s from %s, which is gone", ws_id, holder)
            return owner
        raise WorkspaceError(
            f"A sync of workspace '{ws_id}' is already running ({holder}); this one did not "
            "start. Wait for it to end."
        )

    def _sync_folder(
        self,
        ws: Workspace,
        folder: str,
        report: SyncReport,
        on_file: OnFile | None,
        cancelled: Callable[[], bool],
    ) -> None:
        try:
            path = allowed_folder(folder, self.bench.settings)
            found = walk(path, self.bench.settings, on_file)
        except (InputError, OSError) as exc:
            why = str(exc) if isinstance(exc, InputError) else _os_why(exc)
            report.folders.append({"folder": folder, "error": f"{why} Nothing was removed."})
            return
        plan = Plan.of(found, self.versions.synced_files(ws.id, folder))
        report.files.extend(found.skipped)
        apply = _Apply(self, ws, folder, report, on_file or (lambda _f, _s: None))
        apply.run(plan, cancelled)
        self.versions.mark_synced(ws.id, [folder])
        report.folders.append({"folder": folder, "files": len(found.files), "error": None})


@dataclass
class Plan:
    """What a folder's files are against what the last sync saw."""

    unchanged: list[tuple[Found, SyncedFile]] = field(default_factory=list)
    changed: list[tuple[Found, SyncedFile]] = field(default_factory=list)
    new: list[Found] = field(default_factory=list)
    renamed: list[tuple[Found, SyncedFile]] = field(default_factory=list)
    gone: list[SyncedFile] = field(default_factory=list)

    @classmethod
    def of(cls, found: Walk, before: dict[str, SyncedFile]) -> Plan:
        plan = cls()
        here = {f.key for f in found.files}
        for f in found.files:
            old = before.get(f.key)
            if old is None:
                plan.new.append(f)
            elif old.content_hash == f.content_hash:
                plan.unchanged.append((f, old))
            else:
                plan.changed.append((f, old))
        # Files not seen under a subfolder that could not be read are not gone.
        hidden = tuple(d + "/" for d in found.unread_dirs)
        missing = {k: v for k, v in before.items() if k not in here and not k.startswith(hidden)}
        by_hash: dict[str, list[SyncedFile]] = {}
        for old in missing.values():
            by_hash.setdefault(old.content_hash, []).append(old)
        for f in list(plan.new):
            if by_hash.get(f.content_hash):
                plan.renamed.append((f, by_hash[f.content_hash].pop()))
                plan.new.remove(f)
        moved = {old.path for _, old in plan.renamed}
        plan.gone = [v for k, v in missing.items() if k not in moved]
        return plan


class _Apply:
    """One folder's plan carried out, each file's record added to the report."""

    def __init__(
        self, syncer: Syncer, ws: Workspace, folder: str, report: SyncReport, on_file: OnFile
    ) -> None:
        self.s, self.ws, self.folder, self.report, self.on_file = (
            syncer,
            ws,
            folder,
            report,
            on_file,
        )
        self.versions = syncer.versions

    def record(self, rec: SyncRecord) -> None:
        self.report.files.append(rec)
        self.on_file(rec.file, rec.status)

    def run(self, plan: Plan, cancelled: Callable[[], bool]) -> None:
        for f, _old in plan.unchanged:
            self.record(SyncRecord(f.key, self.folder, "unchanged", f.content_hash))
        for f, old in plan.renamed:
            self.rename(f, old)
        for old in plan.gone:
            self.gone(old)
        self.add(plan.new, cancelled)
        for f, old in plan.changed:
            if cancelled():
                return
            self.update(f, old)

    def current(self, lineage: str) -> Version | None:
        kept = self.versions.versions(self.ws.id, lineage)
        return next((v for v in reversed(kept) if v.state in (CURRENT, REMOVED)), None)

    def rename(self, f: Found, old: SyncedFile) -> None:
        cur = self.current(old.lineage)
        new = SyncedFile(self.folder, f.key, old.lineage, f.content_hash, f.size)
        name = display_name(f.key)
        if cur is not None and cur.state == CURRENT:
            self.s.keeper.relabel(self.ws, cur, name)
        self.versions.rename(self.ws.id, old, new, name)
        rec = SyncRecord(f.key, self.folder, "renamed", f.content_hash, previous=old.path)
        rec.version = cur.version if cur else None
        self.record(rec)

    def gone(self, old: SyncedFile) -> None:
        """A file no longer there: its document is removed unless another path has it."""
        self.versions.forget_file(self.ws.id, old.folder, old.path)
        cur = self.current(old.lineage)
        if self.versions.paths_of(self.ws.id, old.lineage) or cur is None:
            return
        if cur.state == CURRENT:
            self.s.keeper.remove(self.ws, cur)
        self.record(SyncRecord(old.path, self.folder, "removed", cur.doc_id, cur.version))

    def add(self, files: list[Found], cancelled: Callable[[], bool]) -> None:
        """New files: those whose bytes the workspace has are taken as they are; the others
        go through the pipeline in one batch (parsed ahead, as an upload)."""
        fresh: list[Found] = []
        for f in files:
            if not self.known(f):
                fresh.append(f)
        if not fresh:
            return
        sources = [Source(f.key, partial(read_verified, f.path, f.content_hash)) for f in fresh]

        def on_start(i: int, _s: Source) -> Any:
            self.on_file(fresh[i].key, "parsing")
            return stage_printer(fresh[i].key, self.on_file)

        reports = self.s.ingestor.ingest_each(self.ws, sources, on_start, cancelled)
        for f, rep in zip(fresh, reports, strict=False):
            if rep.status == "failed":
                self.record(SyncRecord(f.key, self.folder, "failed", rep.doc_id, error=rep.error))
            elif rep.status == "duplicate":  # the same bytes as a file before it (a link)
                self.known(f)
            else:
                self.first(f, rep.chunks)

    def first(self, f: Found, embedded: int = 0) -> None:
        """A document of the workspace becomes version 1 of the file."""
        doc = self.s.bench.registry.get_document(self.ws.id, f.content_hash)
        assert doc is not None
        ids = [chunk_id(self.ws.id, doc.doc_id, i) for i in range(doc.chunks)]
        first = NewVersion(
            doc.doc_id, 1, doc.doc_id, doc.filename, doc.pages, ids, doc.chunks,
            self.folder, f.key, f.size,
        )  # fmt: skip
        self.s.keeper.adopt(self.ws, [first])
        self.record(SyncRecord(f.key, self.folder, "added", doc.doc_id, 1, embedded=embedded))

    def known(self, f: Found) -> bool:
        """Bytes the workspace already holds: a second path of a followed document, a removed
        one come back, an upload; False for bytes it does not have."""
        v = self.versions.version_of(self.ws.id, f.content_hash)
        synced = SyncedFile(self.folder, f.key, v.lineage if v else "", f.content_hash, f.size)
        if v is not None and v.state == CURRENT:
            # A second path of a document (a hard link, a copy), or the first one again (the
            # folder followed anew after an unfollow).
            status: Status = (
                "duplicate" if self.versions.paths_of(self.ws.id, v.lineage) else "unchanged"
            )
            self.versions.see_file(self.ws.id, synced)
            self.record(SyncRecord(f.key, self.folder, status, v.doc_id, v.version))
        elif v is not None and v.state == REMOVED:
            self.s.keeper.restore(self.ws, v)
            self.versions.see_file(self.ws.id, synced)
            self.record(SyncRecord(f.key, self.folder, "added", v.doc_id, v.version))
        elif v is not None:
            why = f"the same bytes as v{v.version} of {v.filename}, kept in its history"
            self.record(SyncRecord(f.key, self.folder, "failed", v.doc_id, error=why))
        else:
            doc = self.s.bench.registry.get_document(self.ws.id, f.content_hash)
            if doc is None or doc.status != READY:
                return False
            self.first(f)
        return True

    def update(self, f: Found, old: SyncedFile) -> None:
        cur = self.current(old.lineage)
        if cur is None or cur.state != CURRENT:
            self.versions.forget_file(self.ws.id, old.folder, old.path)
            self.add([f], lambda: False)
            return
        if cur.doc_id == f.content_hash:  # a hard link of a file this sync made a version of
            synced = SyncedFile(self.folder, f.key, cur.lineage, f.content_hash, f.size)
            self.versions.see_file(self.ws.id, synced)
            self.record(SyncRecord(f.key, self.folder, "duplicate", cur.doc_id, cur.version))
            return
        self.on_file(f.key, "parsing")
        source = Source(f.key, partial(read_verified, f.path, f.content_hash))
        done = self.s.keeper.new_version(
            self.ws,
            cur,
            source,
            (self.folder, f.key, f.size),
            stage_printer(f.key, self.on_file),
        )
        if done.error:
            self.record(SyncRecord(f.key, self.folder, "failed", done.doc_id, error=done.error))
            return
        rec = SyncRecord(f.key, self.folder, "updated", done.doc_id, done.version)
        rec.embedded, rec.shared = done.embedded, done.shared
        self.record(rec)


# -- as a job of the server's job runner ------------------------------------------------------
def job_work(bench: Workbench, door: Door, ws_id: str) -> Callable[[Job], SyncReport]:
    """A sync as the job runner's work: each file shows on ``job.files`` as the sync reaches
    it (its stage, then its outcome), and ``job.result`` is the report."""

    def work(job: Job) -> SyncReport:
        entries: dict[str, FileProgress] = {}

        def on_file(name: str, stage: str) -> None:
            entry = entries.get(name)
            if entry is None:
                entry = entries[name] = FileProgress(name)
                job.files.append(entry)
            entry.stage = stage
            job.progress = {"what": "files", "done": len(job.files), "total": len(job.files)}

        report = Syncer(bench).sync_as(door, ws_id, on_file, job._cancel.is_set)
        for rec in report.files:
            entry = entries.get(rec.file) or FileProgress(rec.file)
            if rec.file not in entries:
                job.files.append(entry)
            entry.report, entry.stage = rec, rec.status
        return report

    return work


def start_sync(jobs: JobManager, bench: Workbench, door: Door, ws_id: str, why: str) -> Job:
    """Queue a sync of the workspace in the job runner (refused for a viewer, here and in
    the job), unless one is queued or running there already."""
    ws = door.workspace(ws_id, "upload")
    for job in jobs.active(ws.id, "ingest"):
        if job.title.startswith("sync"):
            return job
    return jobs.task("ingest", ws.id, f"sync ({why})", job_work(bench, door, ws.id))


def run_schedule(jobs: JobManager, bench: Workbench) -> list[str]:
    """Queue the syncs whose schedule is due (``Versions.due``); the job runner runs them
    under the sync lock as any other. Returns the workspaces queued."""
    due = Syncer(bench).versions.due()
    for ws_id in due:
        try:
            start_sync(jobs, bench, Door(bench), ws_id, "scheduled")
        except MasisError as exc:  # deleted meanwhile
            log.warning("scheduled sync of %s not started: %s", ws_id, exc)
    return due
