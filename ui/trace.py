"""A run's trace on the Research and Runs pages: one panel per step, in the analyst's words
(``masis_core.services.steps``). The recorded fields, under their own names, are the
Inspector's (``raw_trace``) and the run's JSON."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from masis_core.services.steps import RETRY_WORDS, kept_for, step_words
from masis_core.text.markup import counted, percent, plain, untrusted

NODE_ICONS = {
    "supervisor": "🧭",
    "planner": "🗺️",
    "researcher": "🔎",
    "web_searcher": "🌐",
    "synthesizer": "✍️",
    "critic": "🧐",
    "evaluator": "✅",
    "human_review": "🙋",
}
# A step's figures shown as metrics, labelled as the analyst reads them.
FIGURES: dict[str, tuple[tuple[str, str], ...]] = {
    "researcher": (
        ("chunks", "passages kept"),
        ("filtered_out", "below the bar"),
        ("threshold_used", "the bar (similarity)"),
        ("avg_score", "mean similarity kept"),
    ),
    "web_searcher": (("results", "results"), ("queries", "queries")),
    "synthesizer": (("sentences", "cited sentences"), ("evidence", "passages read")),
    "evaluator": (("citations", "citations"), ("flagged", "sentences flagged")),
}


def _figures(entry: dict[str, Any]) -> None:
    shown = [
        (label, entry[key])
        for key, label in FIGURES.get(str(entry.get("node")), ())
        if entry.get(key) is not None
    ]
    if entry.get("node") == "critic" and entry.get("confidence") is not None:
        shown.append(("confidence", percent(float(entry["confidence"]))))
    if shown:
        for col, (label, value) in zip(st.columns(len(shown)), shown, strict=True):
            col.metric(label, value)


def _notes(entry: dict[str, Any]) -> list[str]:
    """The step's lines below its figures, as Markdown (untrusted parts escaped)."""
    notes = []
    if entry.get("node") == "researcher" and kept_for(entry):
        notes.append(f"Kept for: {kept_for(entry)}.")
    if entry.get("reason") in RETRY_WORDS:
        notes.append(f"Why again: {RETRY_WORDS[entry['reason']]}.")
    if entry.get("query_texts"):
        notes.append("Searched the web for: " + " | ".join(map(untrusted, entry["query_texts"])))
    if entry.get("alternatives"):
        notes.append("Also searched as: " + " | ".join(map(untrusted, entry["alternatives"])))
    if entry.get("strategy"):
        notes.append(f"Plan: {untrusted(entry['strategy'])}")
    if entry.get("duration_ms") is not None:
        notes.append(f"Took {entry['duration_ms']} ms.")
    return notes


def node_panel(entry: dict[str, Any], words: str) -> None:
    """One step, collapsed: its line says what it did; opened, its figures and notes."""
    node = str(entry.get("node", "?"))
    failed = bool(entry.get("error") or entry.get("prompt_cut"))
    failed = failed or entry.get("warning") == "no_qualifying_evidence"
    label = f"{NODE_ICONS.get(node, '•')} {untrusted(words)}"
    with st.status(label, state="error" if failed else "complete", expanded=False):
        _figures(entry)
        # Errors, queries, phrasings and the strategy can quote documents or model output.
        if entry.get("error"):
            st.error(untrusted(entry["error"]))
        for note in entry.get("notes") or []:  # what the model could not see
            st.warning(untrusted(note))
        for failure in entry.get("errors") or []:
            st.warning(f"Web query “{untrusted(failure['query'])}”: {untrusted(failure['error'])}")
        for note in _notes(entry):
            st.caption(note)


def render_trace(trace: list[dict[str, Any]], folded: bool = False) -> None:
    """The steps that did something, each a panel; ``folded`` (a run that has ended) puts
    them in one closed expander below the answer and the review."""
    steps = [(e, words) for e in trace if (words := step_words(e)) is not None]
    if not folded:
        for entry, words in steps:
            node_panel(entry, words)
        return
    passes = 1 + sum(e.get("node") == "supervisor" and e.get("decision") == "retry" for e in trace)
    title = f"🧭 How the agent worked: {counted(len(steps), 'step')}"
    with st.expander(title + (f", {passes} passes" if passes > 1 else ""), expanded=False):
        for entry, words in steps:
            node_panel(entry, words)
        st.caption("Every recorded field, under its own name: the Inspector and the run's JSON.")


def raw_trace(trace: list[dict[str, Any]]) -> None:
    """The trace as recorded, for the Inspector: field names and values as in the JSON."""
    with st.expander(f"The trace as recorded ({counted(len(trace), 'entry', 'entries')})"):
        # JSON shows strings as they are: only the bidi controls go.
        st.json(plain(json.dumps(trace, ensure_ascii=False, default=str)), expanded=False)
