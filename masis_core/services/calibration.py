"""The analyst's verdicts as calibration points, and the fit they change.

A thumbs up or down on a run is a labelled point of its workspace's calibration
(``masis_core/workspaces/calibration.py``): the judge's score of its answer (the critic's
``judged_confidence`` where a map was applied, else the confidence it reported) and the verdict.
Only runs of the engine the map is for count; a verdict changes the fit at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from masis_core.answers.judgement import judge_version
from masis_core.workspaces.calibration import ENGINE, CalibrationStore, Point, stale
from masis_core.workspaces.workbench import Workbench

if TYPE_CHECKING:  # ``RunService.mark`` calls in here: no import of the run service at run time
    from masis_core.services.runs import RunRecord, RunStore

VERDICT_LIMIT = 10_000


def judged_score(rec: RunRecord) -> float | None:
    """The judge's own score of the run's final draft (its last critic entry); None when the
    judge that gave it is not today's (``judgement.judge_version``): its scores meant
    something else, and the workspace map is fitted on today's."""
    critics = [e for e in rec.trace if e.get("node") == "critic"]
    if not critics or critics[-1].get("judge") != judge_version():
        return None
    last = critics[-1]
    score = last.get("judged_confidence")
    if score is None:
        score = last.get("confidence")
    return None if score is None else float(score)


def verdict_points(runs: Iterable[RunRecord]) -> list[Point]:
    """A point per run of the calibrated engine that has an answer, a score and a verdict."""
    points = []
    for rec in runs:
        score = judged_score(rec)
        if rec.feedback is None or score is None or rec.engine != ENGINE or not rec.answer:
            continue
        points.append(Point(score, bool(rec.feedback), "verdict", rec.question[:200]))
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
