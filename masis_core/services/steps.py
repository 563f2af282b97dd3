"""A run's trace in the analyst's words: what each step of the agent did, for the Research and
Runs pages.

The trace's entries are written for the record (``HITL_triggered``, ``quality_issue_detected``,
``rag_queries``): the Inspector and the run's JSON show them as they are. A page an analyst
reads says "searched your documents: 17 passages kept, 3 below the bar" instead, and leaves out
steps that did nothing (a web search on a run that asked for none, on every pass).
"""

from __future__ import annotations

from typing import Any

from masis_core.text.markup import counted, percent

# Why the supervisor sent a draft back, as the trace records it and as the analyst reads it.
RETRY_WORDS = {
    "quality_issue_detected": "the answer was not good enough",
    "conflicting_evidence_attempting_resolution": "the sources disagree",
}
PAUSE_WORDS = {
    "low_confidence": "the best passage may not answer",
    "conflict": "your sources disagree",
    "no_evidence": "no passage cleared the bar",
}
REVIEW_WORDS = {
    "accept": "accepted the draft",
    "rephrase": "rephrased the question",
    "retry_lower_threshold": "asked for another search with a lower bar",
    "choose_source": "chose the source to trust",
    "cancel": "cancelled the run",
}
KEPT_WORDS = {"dense": "meaning", "keyword": "exact terms", "both": "both", "row": "table row"}


def _confidence(entry: dict[str, Any]) -> str:
    value = entry.get("confidence")
    return "" if value is None else f" ({percent(float(value))})"


def _supervisor(entry: dict[str, Any]) -> str:
    decision = entry.get("decision")
    if decision == "first_run":
        return "Started: planning the search"
    if decision == "retry":
        why = RETRY_WORDS.get(str(entry.get("reason")), "the answer was not good enough")
        return f"Tried again (attempt {entry.get('retry_count')}): {why}{_confidence(entry)}"
    if decision == "HITL_triggered":
        why = PAUSE_WORDS.get(str(entry.get("kind")), "the answer needs a person")
        return f"Paused for your review: {why}{_confidence(entry)}"
    if entry.get("lead_chosen"):
        return f"Finished, leading with the passage chosen at review{_confidence(entry)}"
    return f"Finished: the answer is final{_confidence(entry)}"


def _planner(entry: dict[str, Any]) -> str:
    docs, web = int(entry.get("rag_queries") or 0), int(entry.get("web_queries") or 0)
    text = f"Planned {counted(docs, 'search', 'searches')} of your documents"
    return text + (f" and {counted(web, 'search', 'searches')} of the web" if web else "")


def _researcher(entry: dict[str, Any]) -> str | None:
    if entry.get("skipped"):
        return None  # a web-only run: nothing was searched here
    below = int(entry.get("filtered_out") or 0)
    if entry.get("warning") == "no_qualifying_evidence":
        return f"Searched your documents: no passage cleared the bar ({below} below it)"
    text = (
        f"Searched your documents: {counted(int(entry.get('chunks') or 0), 'passage')} kept, "
        f"{below} below the bar"
    )
    low = int(entry.get("low_quality_dropped") or 0)
    return text + (f", {low} too thin to quote" if low else "")


def _web(entry: dict[str, Any]) -> str | None:
    if entry.get("skipped"):
        return None  # no web search asked for: one such line per pass said nothing
    text = (
        f"Searched the web: {counted(int(entry.get('results') or 0), 'result')} from "
        f"{counted(int(entry.get('queries') or 0), 'query', 'queries')}"
    )
    extra = []
    if entry.get("duplicates_dropped"):
        extra.append(f"{counted(int(entry['duplicates_dropped']), 'duplicate')} dropped")
    if entry.get("cache_hits"):
        extra.append(f"{entry['cache_hits']} from the last day's cache")
    return text + (f" ({', '.join(extra)})" if extra else "")


def _evaluator(entry: dict[str, Any]) -> str:
    removed = len(entry.get("citation_violations") or [])
    flagged = int(entry.get("flagged") or 0)
    text = f"Checked the citations: {counted(int(entry.get('citations') or 0), 'citation')}"
    if removed:
        text += f", {removed} removed (pointing outside the evidence)"
    return text + (f", {counted(flagged, 'sentence')} flagged" if flagged else ", none flagged")


def _review(entry: dict[str, Any]) -> str:
    action = REVIEW_WORDS.get(str(entry.get("action")), str(entry.get("action")))
    text = f"Reviewed: {action}"
    if entry.get("lead"):
        text += f", leading with “Also relevant” passage {entry['lead']}"
    if entry.get("action") == "rephrase" and entry.get("question"):
        text += f" as “{entry['question']}”"
    return text


def step_words(entry: dict[str, Any]) -> str | None:
    """What one step of the run did, in one line; None for a step that did nothing."""
    node = entry.get("node")
    if node == "supervisor":
        return _supervisor(entry)
    if node == "planner":
        return _planner(entry)
    if node == "researcher":
        return _researcher(entry)
    if node == "web_searcher":
        return _web(entry)
    if node == "synthesizer":
        if entry.get("skipped"):
            return None  # nothing to write from: the researcher's line says why
        return f"Wrote the draft: {counted(int(entry.get('sentences') or 0), 'cited sentence')}"
    if node == "critic":
        value = entry.get("confidence")
        given = "no confidence given" if value is None else f"confidence {percent(float(value))}"
        return f"Judged the draft: {given}"
    if node == "evaluator":
        return _evaluator(entry)
    if node == "human_review":
        return _review(entry)
    return f"Step {node}"


def kept_for(entry: dict[str, Any]) -> str:
    """Why the researcher kept its passages, as counts: "meaning 10, exact terms 5"."""
    kept = entry.get("kept_by") or {}
    return ", ".join(f"{KEPT_WORDS.get(k, k)} {n}" for k, n in kept.items() if n)
