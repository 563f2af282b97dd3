"""Threads of runs: a follow-up joins the thread of the run it follows, and is rewritten as a
standalone question from the thread's questions and answers before it is asked."""

from __future__ import annotations

from masis_core.answers.followup import Rewrite, Turn, thread_subject
from masis_core.answers.providers import make_engine
from masis_core.answers.questions import check_question
from masis_core.errors import InputError
from masis_core.services.records import RunRecord, RunStore
from masis_core.state import EngineName
from masis_core.workspaces.workbench import Workbench


def engine_name(bench: Workbench) -> EngineName:
    """The engine a run gets when none is asked for: the configured model when it is ready."""
    status = bench.provider_status()
    return status.mode if status.ready else "offline"


def thread(store: RunStore, run_id: str) -> list[RunRecord]:
    """Every turn of the thread ``run_id`` belongs to, oldest first."""
    rec = store.get(run_id)
    return store.thread(rec.thread_id) if rec is not None else []


def thread_of(store: RunStore, run_id: str, workspace_id: str) -> str:
    """The thread a follow-up to ``run_id`` joins; a run of another workspace is none."""
    parent = store.get(run_id)
    if parent is None or parent.workspace_id != workspace_id:
        raise InputError(
            f"There is no run '{run_id}' in workspace '{workspace_id}' to follow up; "
            "see `python -m masis_core status` for recent run ids."
        )
    return parent.thread_id


def subject(store: RunStore, run_id: str, question: str) -> list[str]:
    """The searches a follow-up of ``run_id`` adds for the thread's subject when ``question``
    leans on the thread (``followup.thread_subject``)."""
    turns = thread(store, run_id)
    upto = next((i for i, t in enumerate(turns) if t.run_id == run_id), len(turns) - 1) + 1
    history = [Turn(t.question, t.answer or "", _section(t)) for t in turns[:upto]]
    return thread_subject(question, history)


def _section(rec: RunRecord) -> str:
    """Where the run's lead was cited: its first citation's place (a heading path, a sheet)."""
    first = next(iter(rec.citations or []), {})
    return str(first.get("place") or "")


def rewrite(
    bench: Workbench,
    store: RunStore,
    run_id: str,
    follow_up: str,
    engine: EngineName | None = None,
) -> Rewrite:
    """A follow-up to run ``run_id`` as a standalone question, from the thread's questions
    and answers up to that run: by the chat model with Ollama (the offline rewrite when
    it fails), by the offline rule otherwise. The analyst sees and may edit it."""
    follow_up = check_question(follow_up)
    turns = thread(store, run_id)
    if not turns:
        raise InputError(f"There is no run '{run_id}' to follow up.")
    upto = next(i for i, t in enumerate(turns) if t.run_id == run_id) + 1
    history = [Turn(t.question, t.answer or "") for t in turns[:upto]]
    name = engine or engine_name(bench)
    result = make_engine(bench.settings, name).condense(follow_up, history)
    written: Rewrite = result.value
    return written
