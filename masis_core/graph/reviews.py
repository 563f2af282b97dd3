"""Human review, in one place: which actions each kind of review offers, and its payload.

The nodes that pause a run (researcher, synthesizer, supervisor), the node that applies the
answer (human_review) and the review form all read this table, so an action offered is always
one the graph can carry out.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from masis_core.state import HitlKind, HitlPayload

Action = Literal["rephrase", "retry_lower_threshold", "choose_source", "accept", "cancel"]
ACTIONS: tuple[Action, ...] = get_args(Action)

# In the order the form lists them; ``review`` may leave one out where it cannot apply.
REVIEW_ACTIONS: dict[HitlKind, tuple[Action, ...]] = {
    # retry_lower_threshold only where passages were filtered: with nothing found, a lower bar
    # finds nothing either.
    "no_evidence": ("rephrase", "retry_lower_threshold", "cancel"),
    "conflict": ("choose_source", "accept", "rephrase", "cancel"),
    "low_confidence": ("rephrase", "accept", "cancel"),
}


def review(
    kind: HitlKind,
    message: str,
    details: dict[str, Any],
    *,
    without: tuple[Action, ...] = (),
) -> HitlPayload:
    """The payload ``interrupt`` shows the analyst: the kind's actions, less ``without``."""
    options: list[str] = [a for a in REVIEW_ACTIONS[kind] if a not in without]
    return {"kind": kind, "message": message, "options": options, "details": details}
