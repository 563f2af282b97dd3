"""Resuming a run: check that it may resume, take it for this process (one claimant wins),
and choose the graph input that continues it from its checkpoint."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.types import Command

from masis_core.errors import InputError, RunBusy
from masis_core.graph.nodes.human_review import validate
from masis_core.services.driving import run_config
from masis_core.services.records import RunRecord, RunStore
from masis_core.storage.owners import current_owner

log = logging.getLogger(__name__)


def claim(
    store: RunStore, graph: Any, run_id: str, response: dict[str, Any] | None
) -> tuple[RunRecord, Any]:
    """Check the response and take the run for this process (atomically: a second
    claimant gets ``RunBusy``); return the record and the graph input that resumes it."""
    store.sweep_orphans(run_id)
    rec = store.get(run_id)
    if rec is None:
        raise InputError(f"There is no run '{run_id}'.")
    check_resumable(rec, response)
    expected = rec.status
    if not store.claim(run_id, current_owner()):
        raise RunBusy(
            f"Run '{run_id}' was just taken by another tab or process; reload to follow it."
        )
    rec.status, rec.owner, rec.error = "running", current_owner(), None
    return rec, resume_input(graph, rec, expected, response)


def check_resumable(rec: RunRecord, response: dict[str, Any] | None) -> None:
    """A paused run needs a valid response; a failed one resumes as it is; nothing else does."""
    run_id = rec.run_id
    if rec.status == "needs_human":
        if response is None:
            raise InputError("This run waits for a review response.")
        validate(rec.hitl or {}, response)
    elif rec.status == "running":
        raise RunBusy(
            f"Run '{run_id}' is already running (owner {rec.owner}); wait for it to pause "
            "or finish."
        )
    elif rec.status != "failed":
        raise InputError(f"Run '{run_id}' is {rec.status}; only paused or failed runs resume.")
    elif response is not None:  # it would be dropped: a failed run awaits no review
        raise InputError(
            f"Run '{run_id}' failed; it resumes from its last checkpoint as it is, with no "
            "response (a response answers a paused run's review)."
        )


def resume_input(graph: Any, rec: RunRecord, expected: str, response: dict[str, Any] | None) -> Any:
    """The run's first input when it has no checkpoint, the response to its pending review,
    or None (continue from the checkpoint)."""
    snapshot = graph.get_state(run_config(rec.run_id))
    if not snapshot.values and not snapshot.next:
        return rec.input  # stopped before its first checkpoint: start over
    if expected == "needs_human":
        if snapshot.interrupts:
            return Command(resume=response)
        # The record said 'paused' but the checkpoint has moved on (an old interrupted
        # resume): continue from the checkpoint rather than send an answer nobody awaits.
        log.warning("run %s had no pending review; continuing from its checkpoint", rec.run_id)
    return None
