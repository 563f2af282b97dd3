"""The one door to workspaces for a principal: every read and write checks its role first.

The pages, the CLI and the jobs reach workspaces, documents, runs, exports and page previews
through ``Door``: a workspace the principal is no member of answers exactly as one that does
not exist ("There is no workspace 'x'.", a run "not found"), so no one learns what others
have. A visible workspace with too small a role answers ``AccessError`` saying which role the
action needs. A run belongs to its workspace: reading, resuming or exporting it needs a role
there. With ``MASIS_AUTH=none`` the principal is ``LOCAL``, an admin: every check passes and
nothing is audited, as before accounts existed.

What the principal may see comes from the stores' scoped queries (``Scope``: the registry's
workspace lookup and listing, the run store's lookup and listing join ``memberships`` in
SQL), so a hidden workspace or run never leaves the database; the door adds the role a
write needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from masis_core.errors import AccessError, InputError, WorkspaceError
from masis_core.services.records import RunRecord, RunStore
from masis_core.services.runs import RunService
from masis_core.storage.accounts import LOCAL, RANK, Accounts, Principal, Role
from masis_core.storage.db import Connection
from masis_core.storage.registry import Document, Scope, Workspace
from masis_core.workspaces.workbench import Workbench

# What each action needs (the roles: owner shares, renames, deletes; editor uploads
# and deletes documents; viewer asks and reads runs).
NEEDS: dict[str, Role] = {
    "read": "viewer",
    "ask": "viewer",
    "export": "viewer",
    "upload": "editor",
    "delete_document": "editor",
    "calibrate": "editor",
    "evaluate": "editor",  # an evaluation is stored and shown to every reader of the workspace
    "review_others": "editor",  # answer the review of, or mark, a run another account asked
    "share": "owner",
    "delete_workspace": "owner",
}


# The role a job's cancel needs: the one that could have started it (a viewer had cancelled
# an editor's calibration, and nothing recorded it).
CANCEL_NEEDS: dict[str, str] = {
    "ingest": "upload",
    "evaluation": "evaluate",
    "calibration": "calibrate",
    "research": "review_others",
}


def no_workspace(ws_id: str) -> WorkspaceError:
    """The one answer for a workspace that does not exist and for one the principal may not
    see (the same words, the same type)."""
    return WorkspaceError(f"There is no workspace '{str(ws_id)[:80]}'.")


class Door:
    """What ``who`` may do with the workbench; one per request or browser session (cheap)."""

    def __init__(self, bench: Workbench, who: Principal = LOCAL, runs: RunService | None = None):
        self.bench, self.who, self._runs = bench, who, runs
        self.scope = Scope(None if who.admin else who.name)

    @property
    def runs_service(self) -> RunService:
        if self._runs is None:
            self._runs = RunService(self.bench)
        return self._runs

    # -- checks -------------------------------------------------------------------------
    def role(self, ws_id: str) -> Role | None:
        return self.bench.accounts.role(self.who, ws_id)  # LOCAL is an admin: owner

    def workspace(self, ws_id: str, action: str = "read", *, quiet: bool = False) -> Workspace:
        """The workspace when the principal may do ``action`` in it. A refusal is audited
        (``access.refused``) unless ``quiet``: a page asking whether to offer a button."""
        ws = None
        if isinstance(ws_id, str):
            ws = self.bench.registry.get_workspace(ws_id, self.scope)
        role = self.role(ws.id) if ws is not None else None  # None: unshared meanwhile
        if ws is None or role is None:
            self._refused(quiet, str(ws_id)[:80], action)
            raise no_workspace(ws_id)
        need = NEEDS[action]
        if RANK[role] < RANK[need]:
            self._refused(quiet, ws.id, f"{action} as {role}")
            raise AccessError(
                f"Your role in workspace '{ws.id}' is {role}; {action.replace('_', ' ')} "
                f"needs {need}. Ask an owner of the workspace."
            )
        return ws

    def _refused(self, quiet: bool, target: str, detail: str) -> None:
        if not quiet:
            self.audit("access.refused", target, detail)

    def start_task(self, ws_id: str, action: Literal["evaluate", "calibrate"]) -> Workspace:
        """An evaluation or a calibration of the workspace: each stores what it found for every
        reader of the workspace (the calibration also moves every run's confidence), so each
        needs editor and is audited; a viewer had run evaluations that no record showed."""
        ws = self.workspace(ws_id, action)
        self.audit(f"workspace.{action}", ws.id)
        return ws

    def may_cancel(self, job: Any) -> bool:
        """Whether the principal may cancel a job (``Job``): its own, or with the role that
        starts one of its kind."""
        own = bool(job.account) and job.account == self.who.name
        return own or self.may(job.workspace_id, CANCEL_NEEDS.get(job.kind, "upload"))

    def cancel(self, job: Any) -> None:
        """Cancel a job (a batch, an evaluation, a calibration) when ``may_cancel``; audited
        (``job.cancel``), a refusal too (``access.refused``)."""
        if not (job.account and job.account == self.who.name):
            self.workspace(job.workspace_id, CANCEL_NEEDS.get(job.kind, "upload"))
        job.cancel()
        self.audit("job.cancel", job.workspace_id, f"{job.kind}: {str(job.title)[:80]}")

    def may(self, ws_id: str, action: str = "read") -> bool:
        try:
            self.workspace(ws_id, action, quiet=True)
        except (WorkspaceError, AccessError):
            return False
        return True

    def audit(self, action: str, target: str, detail: str = "") -> None:
        if not self.who.local:
            self.bench.accounts.audit(self.who.name, action, target, detail)

    def _audit_in(self, conn: Connection, action: str, target: str, detail: str = "") -> None:
        """An audit row in the action's own transaction (both are written, or neither)."""
        if not self.who.local:
            Accounts.audit_in(conn, self.who.name, action, target, detail)

    # -- workspaces ---------------------------------------------------------------------
    def workspaces(self) -> list[Workspace]:
        return self.bench.registry.list_workspaces(self.scope)

    def create_workspace(self, name: str, embedder: str = "auto") -> Workspace:
        """A new workspace, owned by its creator."""
        if self.who.local:
            return self.bench.create_workspace(name, embedder)
        owner = functools.partial(Accounts.owner_in, name=self.who.name)
        return self.bench.create_workspace(name, embedder, owner, self.scope)

    def delete_workspace(self, ws_id: str, jobs: Any = None) -> int:
        """Delete it with its runs (through the job manager when given: it refuses while work
        runs there). Returns the number of runs removed."""
        ws = self.workspace(ws_id, "delete_workspace")

        def audit(conn: Connection, runs: int) -> None:
            self._audit_in(conn, "workspace.delete", ws.id, f"{runs} runs")

        return int((jobs or self.runs_service).delete_workspace(ws.id, audit))

    def share(self, ws_id: str, account: str, role: Role | None) -> None:
        ws = self.workspace(ws_id, "share")
        self.bench.accounts.grant(ws.id, account, role, actor=self.who.name)

    def members(self, ws_id: str) -> dict[str, Role]:
        return self.bench.accounts.members(self.workspace(ws_id).id)

    # -- documents ----------------------------------------------------------------------
    def documents(self, ws_id: str) -> list[Document]:
        return self.bench.documents(self.workspace(ws_id).id)

    def delete_document(self, ws_id: str, doc_id: str) -> None:
        ws = self.workspace(ws_id, "delete_document")
        if self.bench.registry.get_document(ws.id, doc_id) is None:
            raise AccessError("That document is not in the workspace (deleted meanwhile?).")
        self.bench.delete_document(
            ws.id, doc_id, lambda conn: self._audit_in(conn, "document.delete", f"{ws.id}/{doc_id}")
        )

    def added(self, ws_id: str) -> Callable[[Connection, str, str], None]:
        """Each new document's audit row (``document.add``: who added which document), for
        the ingest to write in the transaction that makes the document ready: a crash
        between two transactions had left a document without its row, or the reverse."""

        def audit(conn: Connection, doc_id: str, filename: str) -> None:
            self._audit_in(conn, "document.add", f"{ws_id}/{doc_id}", filename)

        return audit

    def preview_allowed(self, ws_id: str, doc_id: str) -> bool:
        """Whether a page of the document may be drawn for this principal: the workspace is
        visible to it and still holds the document."""
        return self.may(ws_id) and self.bench.registry.get_document(ws_id, doc_id) is not None

    # -- runs ---------------------------------------------------------------------------
    def run(
        self, run_id: str | None, action: str = "read", *, quiet: bool = False
    ) -> RunRecord | None:
        """The run, or None when it does not exist or its workspace is not visible (audited
        as a refused access unless ``quiet``)."""
        rec = self.runs_service.get(run_id, self.scope) if run_id else None
        if rec is None:
            self._refused(quiet or not run_id, f"run {str(run_id)[:80]}", action)
            return None
        try:  # a visible one: the role must suffice
            self.workspace(rec.workspace_id, action)
        except WorkspaceError:  # deleted or unshared since the run was read
            return None
        return rec

    def require_run(self, run_id: str, action: str = "read") -> RunRecord:
        rec = self.run(run_id, action)
        if rec is None:
            raise InputError(f"There is no run '{str(run_id)[:80]}'.")  # as claims says it
        return rec

    def runs(self, ws_id: str, status: str | None = None, limit: int = 200) -> list[RunRecord]:
        ws = self.workspace(ws_id)
        return self.runs_service.runs(ws.id, status=status, limit=limit, scope=self.scope)

    def recent_runs(self, limit: int = 20) -> list[RunRecord]:
        """The newest runs of every workspace the principal may see (the CLI's status)."""
        store = self._runs.store if self._runs else RunStore(self.bench)  # no sweep, no graph
        return store.list(limit=limit, scope=self.scope)

    def thread(self, run_id: str) -> list[RunRecord]:
        return self.runs_service.thread(self.require_run(run_id).run_id)

    def start(self, ws_id: str, question: str, **options: Any) -> Any:
        """Record a run (``RunService.start``) in a workspace the principal may ask in."""
        ws = self.workspace(ws_id, "ask")
        if options.get("thread") and not self.who.local:  # the local user: start's own check
            self.require_run(options["thread"])
        asked_by = None if self.who.local else self.who.name
        started = self.runs_service.start(ws.id, question, asked_by=asked_by, **options)
        self.audit("run.start", f"{ws.id}/{started[0].run_id}")
        return started

    def ask(self, ws_id: str, question: str, **options: Any) -> RunRecord:
        on_event = options.pop("on_event", None)
        rec, state = self.start(ws_id, question, **options)
        return self.runs_service.drive(rec, state, on_event)

    def may_review(self, rec: RunRecord) -> bool:
        """A run's review and its verdict (👍 / 👎) are for the account that asked it, or an
        editor or owner of its workspace: a viewer had cancelled an owner's paused run and
        turned its verdict, which also moves the workspace's calibration."""
        return (
            self.who.local
            or (rec.asked_by is not None and rec.asked_by == self.who.name)
            or self.may(rec.workspace_id, "review_others")
        )

    def _require_review(self, run_id: str) -> RunRecord:
        rec = self.require_run(run_id, "ask")
        if not self.may_review(rec):
            raise AccessError(
                f"Run {rec.run_id} was asked by another account: its review and verdict are "
                "theirs, or an editor's of the workspace."
            )
        return rec

    def require_resume(self, run_id: str) -> None:
        """A resume needs the ask role in the run's workspace and the run to be the
        principal's own (or an editor's to act on, ``may_review``); it is audited (the local
        user: the claim's own checks, as before)."""
        if not self.who.local:
            self._require_review(run_id)
            self.audit("run.resume", run_id)

    def resume(self, run_id: str, response: dict[str, Any] | None, **kw: Any) -> RunRecord:
        self.require_resume(run_id)
        if response is not None and not self.who.local:
            response = {**response, "by": self.who.name}  # who confirmed an accepted answer
        return self.runs_service.resume(run_id, response, **kw)

    def mark(self, run_id: str, right: bool | None) -> None:
        rec = self._require_review(run_id)
        self.runs_service.mark(rec.run_id, right)
        self.audit(
            "run.verdict", run_id, "none" if right is None else ("right" if right else "wrong")
        )

    def export(self, run_id: str) -> RunRecord:
        """The run to export, audited."""
        rec = self.require_run(run_id, "export")
        self.audit("run.export", f"{rec.workspace_id}/{rec.run_id}")
        return rec

    def exported(self, run_id: str) -> None:
        """A download button's callback: the export is checked again and audited."""
        self.export(run_id)
