"""Human review, in one place: which actions each kind of review offers, and its payload.

The nodes that pause a run (researcher, synthesizer, supervisor), the node that applies the
answer (human_review) and the review form all read this table, so an action offered is always
one the graph can carry out.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from masis_core.answers.compose import Window
from masis_core.answers.sections import scored_windows
from masis_core.answers.stances import passage_clash
from masis_core.state import Evidence, HitlKind, HitlPayload
from masis_core.text.sentences import markers, strip_markers

Action = Literal["rephrase", "retry_lower_threshold", "choose_source", "accept", "cancel"]
ACTIONS: tuple[Action, ...] = get_args(Action)
_WORD = re.compile(r"\w")

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


def _passages(draft: str) -> list[str]:
    """The draft's paragraphs that say something (a word, not markers or punctuation alone:
    the evaluator drops those): its lead, then the passages after it."""
    return [p for p in draft.split("\n\n") if _WORD.search(strip_markers(p))]


def other_passages(draft: str) -> list[str]:
    """The passages after the lead, as a low-confidence review offers them (without markers):
    ``lead`` = n in the analyst's response names the n-th."""
    return [strip_markers(p) for p in _passages(draft)[1:]]


def lead_with(draft: str, lead: int) -> str:
    """The draft with its passage ``lead`` (numbered as ``other_passages``) moved to the
    front, the others after it in their order."""
    return "\n\n".join(lead_with_list(_passages(draft), lead))


def lead_with_list(items: list[str], lead: int) -> list[str]:
    """``items`` with item ``lead`` moved to the front (as ``lead_with`` moves passages)."""
    if not 0 <= lead < len(items):
        return items
    return [items[lead], *items[:lead], *items[lead + 1 :]]


def candidates(
    question: str, draft: str, evidence: list[Evidence], headings: list[str]
) -> list[dict[str, Any]]:
    """The passages a paused offline draft offers, the lead first: each with its section's
    heading, its place and its text, and the others it contradicts (``clashes``: the picker
    shows those side by side, never as a plain answer)."""
    out: list[dict[str, Any]] = []
    for n, part in enumerate(_passages(draft)):
        cited = [evidence[m - 1] for m in markers(part) if 1 <= m <= len(evidence)]
        first = cited[0] if cited else {}
        heading = headings[n] if n < len(headings) else ""
        filename = first.get("filename") or first.get("url") or ""
        out.append(
            {
                "n": n,
                "text": strip_markers(part),
                "heading": heading,
                # The card's title: its section's heading, else its document and place.
                "title": heading or ", ".join(p for p in (filename, first.get("place")) if p),
                "filename": filename,
                "doc_id": first.get("doc_id") or "",
                "page": first.get("page_start"),
                # A chunk may run over a page break: the picker shows the page of the first
                # sentence quoted, as a citation's page view does (``ui.picker``).
                "page_end": first.get("page_end"),
                "place": first.get("place") or "",
                "clashes": [],
            }
        )
    for a in out:
        for b in out:
            if a["n"] < b["n"] and (why := passage_clash(question, a["text"], b["text"])):
                a["clashes"].append({"n": b["n"], "why": why})
                b["clashes"].append({"n": a["n"], "why": why})
    return out


def _features_of(text: str, found: list[Window]) -> dict[str, float] | None:
    """The features of the window a draft's paragraph quotes: the window of that text, else
    the longest one it opens with (a FAQ entry's opening or a whole list is built from the
    window of its first sentence, and carries its features)."""
    best: Window | None = None
    for w in found:
        if w.text == text:
            return w.features
        if text.startswith(w.text) and (best is None or len(w.text) > len(best.text)):
            best = w
    return best.features if best is not None else None


def pick_features(
    question: str, draft: str, evidence: list[Evidence], lead: int
) -> tuple[dict[str, float], list[dict[str, float]]] | None:
    """The window features of the passage the analyst picked (``lead``, numbered as the
    cards) and of the passages passed over: what the workspace's scorer learns from
    (``workspaces.picks``). None when the picked passage is no window of the evidence (a
    table's computed answer)."""
    texts = [strip_markers(p) for p in _passages(draft)]
    if not 0 <= lead < len(texts):
        return None
    found, _ = scored_windows(question, evidence)
    features = [_features_of(t, found) for t in texts]
    chosen = features[lead]
    if chosen is None:
        return None
    return chosen, [f for n, f in enumerate(features) if n != lead and f is not None]
