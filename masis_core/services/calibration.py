"""The analyst's verdicts as calibration points, and the fit they change.

A thumbs up or down on a run is a labelled point of its workspace's calibration
(``masis_core/workspaces/calibration.py``): the judge's score of its answer (the critic's
``judged_confidence`` where a map was applied, else the confidence it reported) and the verdict.
So is a lead the analyst chose at review: the lead passed over was wrong, the chosen one right.
Only runs of the engine the map is for count; a verdict changes the fit at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from masis_core.answers.confidence import judge_version
from masis_core.services.records import RunRecord, RunStore
from masis_core.workspaces.calibration import ENGINE, CalibrationStore, Point, stale
from masis_core.workspaces.workbench import Workbench

VERDICT_LIMIT = 10_000


def _score(entry: dict[str, Any]) -> float | None:
    """A critic entry's own judge score; None when the judge that gave it is not today's
    (``confidence.judge_version``): its scores meant something else, and the workspace map is
    fitted on today's."""
    if entry.get("judge") != judge_version():
        return None
    score = entry.get("judged_confidence")
    if score is None:
        score = entry.get("confidence")
    return None if score is None else float(score)


def judged_score(rec: RunRecord) -> float | None:
    """The judge's own score of the run's final draft (its last critic entry)."""
    critics = [e for e in rec.trace if e.get("node") == "critic"]
    return _score(critics[-1]) if critics else None


def lead_choice(rec: RunRecord) -> float | None:
    """When the analyst led with another passage of a paused draft (``human_review``): the
    judge's score of the lead they passed over, a lead that does not answer."""
    last = None
    for entry in rec.trace:
        if entry.get("node") == "critic":
            last = entry
        elif entry.get("node") == "human_review" and entry.get("lead") and last is not None:
            return _score(last)
    return None


def verdict_points(runs: Iterable[RunRecord]) -> list[Point]:
    """The labelled points the analyst gave, on runs of the calibrated engine with an answer:
    a thumbs up or down on the final draft's score, and for a lead chosen at review the
    passed-over lead's score as wrong (the chosen one comes with a thumbs up, ``RunService``)."""
    points = []
    for rec in runs:
        if rec.engine != ENGINE or not rec.answer:
            continue
        question = rec.question[:200]
        passed_over = lead_choice(rec)
        if passed_over is not None:
            points.append(Point(passed_over, False, "verdict", question))
        score = judged_score(rec)
        if rec.feedback is not None and score is not None:
            points.append(Point(score, bool(rec.feedback), "verdict", question))
    return points


def refit_with_verdicts(bench: Workbench, store: RunStore, ws_id: str) -> dict[str, Any] | None:
    """Fit the workspace again with its current verdicts (after a thumbs up or down); a fit of
    an earlier judge's scores waits for the calibration job instead (its outline points are
    that judge's)."""
    calibrations = CalibrationStore(bench.db)
    if stale(calibrations.get(ws_id)):
        return None
    verdicts = verdict_points(store.list(ws_id, limit=VERDICT_LIMIT))
    return calibrations.refit(ws_id, verdicts)


def reliability_frame(report: dict[str, Any], which: str) -> pd.DataFrame | None:
    """The non-empty bins of the report's reliability ``before`` or ``after`` the map."""
    data = report.get(f"reliability_{which}")
    if not data or not data.get("count"):
        return None
    bins = pd.DataFrame(data["bins"])
    return bins[bins["count"] > 0].reset_index(drop=True)
