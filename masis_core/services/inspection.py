"""Tables the retrieval inspector draws, derived from stored runs' traces.

Kept free of Streamlit and plotly so the numbers an analyst judges the threshold by are tested
on their own. A *pass* is one researcher step of a run, numbered from 1 in order (a retry or a
rephrase after review starts a new pass).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from masis_core.services.jobs import FileProgress
from masis_core.services.runs import RunRecord
from masis_core.text.markup import plain
from masis_core.workspaces.calibration import reliability

# Why a candidate chunk ended where it did, keyed by the researcher's trace field.
OUTCOMES = {
    "scores_kept": "kept",
    "scores_kept_keyword": "kept by keyword match",
    "scores_kept_row": "kept for the table row it names",
    "scores_filtered": "below threshold",
    "scores_low_quality": "low content quality",
}
SCORE_COLUMNS = ["run_id", "pass", "retry_count", "score", "outcome", "threshold"]


def researcher_entries(trace: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in trace if e.get("node") == "researcher"]


def score_rows(rec: RunRecord) -> pd.DataFrame:
    """One row per candidate chunk per pass: its score and what the threshold did with it."""
    rows: list[dict[str, Any]] = []
    for n, entry in enumerate(researcher_entries(rec.trace), start=1):
        for field, outcome in OUTCOMES.items():
            rows.extend(
                {
                    "run_id": rec.run_id,
                    "pass": n,
                    "retry_count": entry.get("retry_count", 0),
                    "score": float(score),
                    "outcome": outcome,
                    "threshold": entry.get("threshold_used"),
                }
                for score in entry.get(field) or []
            )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def review_before(trace: Iterable[dict[str, Any]]) -> list[str | None]:
    """Per researcher pass, the review action that started it ("rephrase", "retry_lower_
    threshold", …), or None for a pass of the graph's own (the first, a retry): a pass
    after a rephrase starts its retry count again and read as a second first pass."""
    out: list[str | None] = []
    action: str | None = None
    for e in trace:
        if e.get("node") == "human_review":
            action = e.get("action")
        elif e.get("node") == "researcher":
            out.append(action)
            action = None
    return out


# A pass's histogram title after a review, in the review form's words.
_AFTER = {
    "rephrase": "after you rephrased",
    "retry_lower_threshold": "after you lowered the threshold",
    "choose_source": "after you chose a source",
}


def pass_title(p: dict[str, Any]) -> str:
    """A row of ``pass_summary`` as a chart's title: "Pass 4 (after you rephrased)"."""
    why = _AFTER.get(p.get("after_review") or "")
    return f"Pass {p['pass']} ({why or 'retry ' + str(p['retry_count'])})"


def pass_summary(rec: RunRecord) -> pd.DataFrame:
    """Kept vs filtered per pass, with the threshold and query settings of that pass."""
    after = review_before(rec.trace)
    rows = [
        {
            "pass": n,
            "after_review": after[n - 1] or "",
            "retry_count": e.get("retry_count", 0),
            "queries": e.get("queries"),
            "limit": e.get("limit"),
            "threshold": e.get("threshold_used"),
            "kept": e.get("chunks", 0),
            "filtered_out": e.get("filtered_out", 0),
            "low_quality": e.get("low_quality_dropped", 0),
            "avg_score": e.get("avg_score"),
            "augmented_query": bool(e.get("augmented_query_used")),
            "duration_ms": e.get("duration_ms"),
        }
        for n, e in enumerate(researcher_entries(rec.trace), start=1)
    ]
    return pd.DataFrame(rows)


def node_latency(rec: RunRecord) -> pd.DataFrame:
    """Milliseconds per node step, in run order, and totals per node."""
    rows = [
        {"step": i, "node": e.get("node", "?"), "duration_ms": int(e.get("duration_ms") or 0)}
        for i, e in enumerate(rec.trace, start=1)
        if "duration_ms" in e
    ]
    return pd.DataFrame(rows, columns=["step", "node", "duration_ms"])


def retry_reasons(rec: RunRecord) -> pd.DataFrame:
    return pd.DataFrame(
        rec.metrics.get("retry_reasons") or [],
        columns=["iteration", "reason", "confidence", "citation_issue", "hallucination"],
    )


def confidence_paths(rec: RunRecord) -> list[str]:
    """Each critic pass's confidence through the stages that applied, as the Inspector shows
    it: "model 0.41 → cap 0.41 → workspace 0.58" (``answers/confidence.STAGES``)."""
    return [
        " → ".join(f"{name} {float(value):.2f}" for name, value in stages.items())
        for e in rec.trace
        if e.get("node") == "critic" and (stages := e.get("confidence_stages"))
    ]


def workspace_scores(runs: Iterable[RunRecord]) -> pd.DataFrame:
    """Every candidate score of every run in a workspace: the distribution behind a threshold."""
    frames = [f for f in (score_rows(r) for r in runs) if not f.empty]
    if not frames:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def _threaded(runs: list[RunRecord]) -> set[str]:
    """Threads with a follow-up (a lone run shows no thread)."""
    return {r.thread for r in runs if r.thread}


def run_table(runs: Iterable[RunRecord]) -> pd.DataFrame:
    """The runs page's history table: a thread's turns together (newest thread first, its
    turns in the order asked), each run of its own otherwise newest first."""
    runs = list(runs)
    newest: dict[str, int] = {}
    for i, r in enumerate(runs):  # runs come newest first
        newest.setdefault(r.thread_id, i)
    runs.sort(key=lambda r: (newest[r.thread_id], r.created_at))
    threaded = _threaded(runs)
    rows = [
        {
            "run_id": r.run_id,
            "thread": r.thread_id if r.thread_id in threaded else "",
            "created": r.created_at,
            "status": r.shown_status,
            "asked by": plain(r.asked_by or ""),  # none without accounts (MASIS_AUTH=none)
            "question": plain(r.question),
            "engine": r.engine,
            # An answer the analyst confirmed has their word, not the figure it paused on.
            "confidence": None
            if r.confidence is None or r.confirmed_by
            else round(r.confidence * 100),
            "citations": len(r.citations),
            "retries": len(r.metrics.get("retry_reasons") or []),
            # What a paused run waits for; who confirmed a reviewed one.
            "review": f"confirmed by {r.confirmed_by}"
            if r.confirmed_by
            else (r.hitl or {}).get("kind") or "",
        }
        for r in runs
    ]
    columns = [
        "run_id",
        "thread",
        "created",
        "status",
        "asked by",
        "question",
        "engine",
        "confidence",
        "citations",
        "retries",
        "review",
    ]
    return pd.DataFrame(rows, columns=columns)


def kept_summary(scores: pd.DataFrame, embed_model: str, threshold: float) -> str:
    """One sentence on the workspace's candidates: how many the threshold kept, and where
    the kept scores sit (what to look at before moving the threshold)."""
    kept = scores[scores["outcome"] == "kept"]["score"]
    text = (
        f"First-pass threshold for `{embed_model}`: {threshold}. "
        f"{len(kept)} of {len(scores)} candidates were kept"
    )
    if not len(kept):
        return text + "."
    return (
        f"{text}; kept scores: median {kept.median():.3f}, "
        f"10th percentile {kept.quantile(0.1):.3f}."
    )


def marked_answers(runs: Iterable[RunRecord]) -> list[RunRecord]:
    """The runs whose answer the analyst marked 👍 or 👎 (a lead chosen at review marks it
    👍): what the Inspector and the calibration tab both count as "answers you marked". The
    two had said "vs 1 verdict" and "your verdicts 2" of one answer: the calibration counted
    its fit's points, two for a chosen lead (the lead passed over, the one chosen)."""
    return [r for r in runs if r.feedback is not None]


def verdict_reliability(runs: Iterable[RunRecord]) -> tuple[pd.DataFrame, float] | None:
    """The reliability bins of the runs the analyst marked right or wrong: per confidence bin,
    how many answers and the share marked right, and the expected calibration error; None
    while no answer with a confidence has a verdict."""
    pairs = [
        (float(r.confidence), bool(r.feedback))
        for r in runs
        if r.confidence is not None and r.feedback is not None
    ]
    if not pairs:
        return None
    result = reliability(pairs)
    bins = pd.DataFrame(result["bins"])
    return bins[bins["count"] > 0].reset_index(drop=True), float(result["ece"])


BATCH_COLUMNS = [
    "file",
    "status",
    "size",
    "chunks",
    "pages OCRed",
    "pages without text",
    "error",
    "notes",
]


def batch_table(files: Iterable[FileProgress]) -> pd.DataFrame:
    """One row per file of an upload batch, in batch order; files the batch never reached
    (it was cancelled) are listed as such, not left out."""
    rows = []
    for f in files:
        r = f.report
        rows.append(
            {
                "file": plain(r.file if r else f.name),
                "status": r.status if r else f.stage,
                # "3 pages", or "1 sheet, 118 rows": an .xlsx is not "3 pages".
                "size": r.size if r else "",
                "chunks": r.chunks if r else 0,
                "pages OCRed": len(r.ocr_pages) if r else 0,
                "pages without text": r.without_text if r else 0,
                "error": plain(r.error) if r and r.error else "",
                "notes": plain("; ".join(r.notes)) if r else "",
            }
        )
    return pd.DataFrame(rows, columns=BATCH_COLUMNS)
