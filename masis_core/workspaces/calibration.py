"""The judge's confidence refitted to one workspace: a monotone map from the judge's score to
the share of answers that were right on this workspace's own documents.

The judge (``masis_core/answers/judgement.py``, its model in ``confidence.py``) is fitted on
development cases and the manuals; on a new library its scores do not mean the same (on FAQ
PDFs it had never seen it underrated its drafts, issue #28; docs/measurements/calibration.md). A
workspace's points are (judge score, was the answer right) pairs from two sources: its outline
questions, asked by the calibration job (``evaluation/calibration.py``: right when the answer's
lead cites the heading's page), and the analyst's thumbs up or down on its runs.

Two maps are fitted and scored on points they were not fitted on (five folds): Platt scaling
(a logistic curve on the judge's log-odds, pulled towards the identity by a Gaussian prior of
precision 2: on the offset, the weight of eight answers at even odds) is kept unless
isotonic regression (pool-adjacent-violators in numpy: twenty lines, where scikit-learn and
SciPy would add to the workbench's install for the same algorithm) predicts them
clearly better (``choose``). Sixty-odd points are few for isotonic steps.
Either is a table of knots from the lowest score fitted to the highest, read by linear
interpolation. With too few points, or only right or only wrong ones, there is nothing to fit:
the workspace keeps the global model (the judge's score unchanged) and says so. The table is
kept in the database per workspace (``calibrations``), removed with it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from masis_core.answers.confidence import judge_version, logit, sigmoid
from masis_core.policy import POLICY
from masis_core.storage.db import Database
from masis_core.storage.registry import now_iso

log = logging.getLogger(__name__)

# Fewer points than this, or fewer right or wrong ones than MIN_EACH: keep the global model.
MIN_POINTS = POLICY.map_min_points
MIN_EACH = POLICY.map_min_each
# A block of the fit is pulled towards the judge's own mean score in it by this many pseudo
# points: three right answers in a block are not 100%.
PRIOR_WEIGHT = POLICY.isotonic_prior_weight
FOLDS = POLICY.map_folds
# Platt scaling's prior: a Gaussian around the identity map (slope 1, offset 0) with this
# precision, so a handful of points cannot turn the judge's ranking upside down.
PLATT_PRIOR = POLICY.platt_prior
# Where a Platt curve is tabulated: dense near 0 and 1, where the log-odds move fast.
PLATT_GRID = (0.0, 0.001, 0.005, 0.01, 0.02, 0.03, *(k / 40 for k in range(2, 39)), 0.97, 0.98,
              0.99, 0.995, 0.999, 1.0)  # fmt: skip
# The engine whose scores the job fits: an Ollama run's confidence also carries the model's
# opinion and is left as the judge gives it.
ENGINE = "offline"

PointSource = Literal["outline", "verdict"]
Status = Literal["fitted", "too_few", "one_sided", "not_ranking", "not_better"]
VERDICT_WEIGHT = POLICY.verdict_weight  # an analyst's verdict counts as this many outline points
Method = Literal["isotonic", "platt"]


def reliability(pairs: list[tuple[float, bool]], bins: int = 10) -> dict[str, Any]:
    """Expected calibration error and the reliability bins of (confidence, was right) pairs.

    Equal-width bins over [0, 1]; ECE is the count-weighted mean |accuracy - confidence|."""
    rows = []
    total = len(pairs)
    ece = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = [(c, ok) for c, ok in pairs if lo <= c < hi or (k == bins - 1 and c == 1.0)]
        mean_c: float | None
        acc: float | None
        if inside:
            mean_c = sum(c for c, _ in inside) / len(inside)
            acc = sum(ok for _, ok in inside) / len(inside)
            ece += len(inside) / total * abs(acc - mean_c)
        else:
            mean_c = acc = None
        rows.append(
            {
                "lo": round(lo, 3),
                "hi": round(hi, 3),
                "count": len(inside),
                "mean_confidence": None if mean_c is None else round(mean_c, 4),
                "accuracy": None if acc is None else round(acc, 4),
            }
        )
    return {"ece": round(ece, 4) if total else None, "count": total, "bins": rows}


@dataclass(frozen=True)
class Point:
    """One labelled judge score of this workspace."""

    score: float
    right: bool
    source: PointSource
    question: str = ""


@dataclass(frozen=True)
class CalibrationMap:
    """The fitted map: knots (judge score, calibrated probability), non-decreasing. Between
    the knots it interpolates; outside them it has seen no answer, so the judge's score
    stands, held on the map's side of the nearest knot (the whole stays monotone): outline
    questions score in a narrow high band, and a map flat beyond its ends had raised
    unanswerable questions' low scores to near even odds (docs/measurements/calibration.md).
    Both maps' tables end at the lowest and
    highest scores fitted."""

    scores: tuple[float, ...]
    probabilities: tuple[float, ...]

    def __call__(self, score: float) -> float:
        if score < self.scores[0]:
            return min(score, self.probabilities[0])
        if score > self.scores[-1]:
            return max(score, self.probabilities[-1])
        return float(np.interp(score, self.scores, self.probabilities))


def isotonic(
    scores: Sequence[float], labels: Sequence[float], weights: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pool-adjacent-violators: blocks of sorted scores whose weighted label means never
    decrease (equal scores always share a block). Returns each block's mean score, mean label
    and weight."""
    x = np.asarray(scores, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    unique, inverse = np.unique(x, return_inverse=True)
    weight = np.bincount(inverse, weights=w)
    label = np.bincount(inverse, weights=w * np.asarray(labels, dtype=float))
    blocks: list[list[float]] = []  # [sum w*x, sum w*y, sum w]
    for xi, yi, wi in zip(unique, label, weight, strict=True):
        blocks.append([xi * wi, yi, wi])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            last = blocks.pop()
            blocks[-1] = [a + b for a, b in zip(blocks[-1], last, strict=True)]
    b = np.array(blocks)
    return b[:, 0] / b[:, 2], b[:, 1] / b[:, 2], b[:, 2]


def isotonic_map(points: Sequence[Point]) -> CalibrationMap:
    """The isotonic map of the points, each block shrunk towards its mean judge score."""
    scores = [p.score for p in points]
    xs, ys, ws = isotonic(scores, [float(p.right) for p in points])
    shrunk = (ys * ws + PRIOR_WEIGHT * xs) / (ws + PRIOR_WEIGHT)
    probs = np.clip(np.maximum.accumulate(shrunk), 0.0, 1.0)
    # The end blocks hold from the lowest to the highest score fitted, not only to their means.
    return _knotted(
        [(min(scores), probs[0]), *zip(xs, probs, strict=True), (max(scores), probs[-1])]
    )


def _knotted(knots: Sequence[tuple[float, float]]) -> CalibrationMap:
    """Knots rounded as stored (four places), one per score: the last of those that round
    alike, the highest, as the probabilities never fall."""
    unique = dict((round(float(x), 4), round(float(y), 4)) for x, y in knots)
    return CalibrationMap(tuple(unique), tuple(unique.values()))


KEEPS_GLOBAL = "this workspace keeps the global confidence model"


def status_of(points: Sequence[Point]) -> tuple[Status, str]:
    right = sum(p.right for p in points)
    wrong = len(points) - right
    if len(points) < MIN_POINTS:
        return "too_few", (
            f"{len(points)} labelled answers (at least {MIN_POINTS} are needed): {KEEPS_GLOBAL}"
        )
    if min(right, wrong) < MIN_EACH:
        side = "right" if wrong < MIN_EACH else "wrong"
        return "one_sided", (
            f"{right} of {len(points)} answers were right: nearly all {side}, nothing to "
            f"fit a map on; {KEEPS_GLOBAL}"
        )
    return "fitted", f"fitted on {len(points)} answers ({right} right, {wrong} wrong)"


def map_logistic(
    design: np.ndarray,
    y: np.ndarray,
    prior: np.ndarray,
    precision: float | np.ndarray = PLATT_PRIOR,
) -> np.ndarray:
    """Weights of a logistic regression, maximum a posteriori under a Gaussian prior around
    ``prior`` (``precision``: one for all weights, or one each): damped Newton steps on a
    strictly convex loss. ``bench.judge_ceiling`` refits the judge's weights with it."""
    tau = np.broadcast_to(np.asarray(precision, dtype=float), prior.shape)

    def loss(w: np.ndarray) -> float:
        z = design @ w
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + np.sum(tau / 2 * (w - prior) ** 2))

    w = prior.copy()
    for _ in range(100):
        prob = sigmoid(design @ w)
        grad = design.T @ (prob - y) + tau * (w - prior)
        hess = design.T @ (design * (prob * (1 - prob))[:, None])
        step = np.linalg.solve(hess + np.diag(tau), grad)
        size, now = 1.0, loss(w)
        while loss(w - size * step) > now and size > 1e-6:
            size /= 2
        w = w - size * step
        if np.abs(size * step).max() < 1e-9:
            break
    return w


def platt(points: Sequence[Point]) -> tuple[float, float]:
    """Slope and offset of the logistic curve on the judge's log-odds (``map_logistic``). The
    slope is kept at 0 or above, so the map stays monotone: when the judge ranks this
    workspace's answers backwards the curve is flat, at the offset refitted alone (the loss is
    convex, so that is the best curve with a slope of 0 or more). The offset of the backwards
    fit is not that: it put the flat map far above the points' share right
    (docs/measurements/calibration.md)."""
    x = logit(np.array([p.score for p in points]))
    y = np.array([float(p.right) for p in points])
    slope, offset = map_logistic(np.column_stack([x, np.ones_like(x)]), y, np.array([1.0, 0.0]))
    if slope >= 0:
        return float(slope), float(offset)
    (flat,) = map_logistic(np.ones((len(y), 1)), y, np.array([0.0]))
    return 0.0, float(flat)


def platt_map(points: Sequence[Point]) -> CalibrationMap:
    """The Platt curve of the points, tabulated on ``PLATT_GRID`` from the lowest score fitted
    to the highest. Beyond them the judge's score stands (``CalibrationMap``), as for the
    isotonic map: the curve over all of 0-1 raised the held-out drafts the judge scored lowest,
    below any point fitted, towards the bar (docs/measurements/calibration.md)."""
    a, b = platt(points)
    lo, hi = min(p.score for p in points), max(p.score for p in points)
    grid = np.array([lo, *(g for g in PLATT_GRID if lo < g < hi), hi])
    return _knotted(list(zip(grid, sigmoid(a * logit(grid) + b), strict=True)))


FITTERS: dict[Method, Callable[[Sequence[Point]], CalibrationMap]] = {
    "isotonic": isotonic_map,
    "platt": platt_map,
}


def _held_out_pairs(points: Sequence[Point], method: Method) -> list[tuple[float, bool]]:
    """Each point's probability from the map fitted without it (k-fold, every k-th point by
    score held out), in score order: the in-sample figures flatter a fit, isotonic most."""
    ordered = sorted(points, key=lambda p: p.score)
    pairs: list[tuple[float, bool]] = []
    for k in range(FOLDS):
        fitted = FITTERS[method]([p for i, p in enumerate(ordered) if i % FOLDS != k])
        pairs += [(fitted(p.score), p.right) for i, p in enumerate(ordered) if i % FOLDS == k]
    return pairs


def _squared_errors(pairs: list[tuple[float, bool]]) -> np.ndarray:
    return np.array([(c - ok) ** 2 for c, ok in pairs])


def choose(points: Sequence[Point]) -> tuple[Method, dict[str, dict[str, Any]]]:
    """Platt scaling, unless isotonic regression predicts the held-out points better by more
    than chance: its mean squared error (Brier score) lower by over two standard errors of
    the paired difference. Returns the method and both maps' held-out figures.

    Why not simply the lower Brier score: on sixty points the two are often within a
    thousandth, and the winner of a tie decides the answers: on the unseen FAQ PDFs isotonic
    won such a tie and calibrated worse, held out, than Platt
    (docs/measurements/calibration.md, "Platt or isotonic by held-out Brier score"). A
    plateau the logistic curve cannot take still wins clearly."""
    methods: tuple[Method, ...] = ("platt", "isotonic")
    pairs = {m: _held_out_pairs(points, m) for m in methods}
    errors = {m: _squared_errors(pairs[m]) for m in methods}
    scores: dict[str, dict[str, Any]] = {
        m: {"ece": reliability(pairs[m])["ece"], "brier": round(float(errors[m].mean()), 4)}
        for m in methods
    }
    gain = errors["platt"] - errors["isotonic"]
    clearly = gain.mean() > 2 * gain.std(ddof=1) / np.sqrt(len(gain))
    return ("isotonic" if clearly else "platt"), scores


def with_verdicts_weighted(points: Sequence[Point]) -> list[Point]:
    """The points with each analyst's verdict counted ``VERDICT_WEIGHT`` times: a pick or a
    thumb is a real question judged by a person, where an outline point is a heading
    reworded by rule."""
    return [q for p in points for q in [p] * (VERDICT_WEIGHT if p.source == "verdict" else 1)]


def rank_auc(right: Sequence[float], wrong: Sequence[float]) -> float | None:
    """AUC: how often a right answer's score is above a wrong one's (ties count half); None
    without both. No map, being monotone, changes it: it is the judge's own ceiling."""
    if not right or not wrong:
        return None
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


def auc(points: Sequence[Point]) -> float:
    """``rank_auc`` of the points' scores (0.5, no better than chance, when one side is empty)."""
    found = rank_auc([p.score for p in points if p.right], [p.score for p in points if not p.right])
    return 0.5 if found is None else found


def not_ranking(points: Sequence[Point]) -> dict[str, Any] | None:
    """The report's verdict when the judge's score does not rank the workspace's points and
    a map would lift them over the review bar (``AnswerPolicy.min_map_auc``); None when a map
    may be fitted. A map that would send the answers to review is kept: that is safe."""
    ranks, right = auc(points), sum(p.right for p in points) / len(points)
    if ranks >= POLICY.min_map_auc or right < POLICY.low_confidence:
        return None
    return {
        "status": "not_ranking",
        "message": (
            f"not kept: on this workspace's {len(points)} answers the judge's score tells "
            f"right from wrong little better than chance (AUC {ranks:.2f}), so a map would "
            f"only lift every answer to their share right ({right:.0%}), over the review "
            f"bar, unanswerable questions included: {KEEPS_GLOBAL}"
        ),
        "auc": round(ranks, 3),
    }


def fit(points: Sequence[Point]) -> dict[str, Any]:
    """The workspace's calibration report: status and message, counts per source, the table
    (``None`` when the global model is kept), and the reliability before and after."""
    status, message = status_of(points)
    before = reliability([(p.score, p.right) for p in points])
    report: dict[str, Any] = {
        "status": status,
        "message": message,
        "engine": ENGINE,
        "judge": judge_version(),  # whose scores these are
        "points": {
            "outline": sum(p.source == "outline" for p in points),
            "verdicts": sum(p.source == "verdict" for p in points),
            "right": sum(p.right for p in points),
            "wrong": sum(not p.right for p in points),
        },
        "table": None,
        "method": None,
        "held_out": None,
        "ece_before": before["ece"],
        "ece_after": None,
        "ece_after_held_out": None,
        "reliability_before": before,
        "reliability_after": None,
    }
    if status != "fitted":
        return report
    weighted = with_verdicts_weighted(points)
    if unranked := not_ranking(weighted):
        return report | unranked
    method, scores = choose(weighted)
    held_before = reliability([(p.score, p.right) for p in weighted])["ece"]
    if scores[method]["ece"] > held_before:
        # The map, judged on points it was not fitted on, is no better than the judge's own
        # score: applying it would make the confidence worse on questions it never saw.
        report.update(
            status="not_better",
            message=(
                f"a map fitted on {len(points)} answers was no better on held-out answers "
                f"(error {scores[method]['ece']:.3f} against {held_before:.3f} without it): "
                f"{KEEPS_GLOBAL}"
            ),
            held_out=scores,
            method=method,
        )
        return report
    fitted = FITTERS[method](weighted)
    after = reliability([(fitted(p.score), p.right) for p in points])
    report.update(
        method=method,
        held_out=scores,
        table=[
            {"score": s, "calibrated": c}
            for s, c in zip(fitted.scores, fitted.probabilities, strict=True)
        ],
        ece_after=after["ece"],
        ece_after_held_out=scores[method]["ece"],
        reliability_after=after,
    )
    return report


STALE = (
    "Fitted on an earlier version of the judge, whose scores meant something else: not "
    "applied (the global model is used). Recalibrate to fit it again."
)


def stale(report: dict[str, Any] | None) -> bool:
    """A stored fit of scores from another judge (``confidence.judge_version``): the shipped
    parameters were refitted since, and the map would be read against scores it never saw."""
    return report is not None and report.get("judge") != judge_version()


def usable_fit(report: dict[str, Any] | None) -> bool:
    """A stored fit that a run would apply: fitted, of today's judge."""
    return report is not None and report.get("status") == "fitted" and not stale(report)


def map_of(report: dict[str, Any] | None, engine: str) -> CalibrationMap | None:
    """The stored map for runs of ``engine``, or None (global model; also for a stale fit)."""
    if report is None or not usable_fit(report) or report.get("engine") != engine:
        return None  # (a stale fit holds scores of another judge)
    knots = report.get("table") or []
    if not knots:
        return None
    return CalibrationMap(
        tuple(float(k["score"]) for k in knots), tuple(float(k["calibrated"]) for k in knots)
    )


def recalibrate(
    critique: dict[str, Any], cmap: CalibrationMap | None, bar: float
) -> dict[str, Any]:
    """The critic's critique with the workspace's map applied: ``confidence`` is the
    calibrated probability, ``judged_confidence`` the judge's own score, and the retry advice
    (which both engines take from the bar) is the bar's verdict on the calibrated value."""
    raw = critique.get("confidence")
    if critique.get("confidence_model") == "computed":
        return {**critique, "calibration": "computed"}  # a computation, not a judged passage
    if cmap is None or raw is None:
        return {**critique, "calibration": "global"}
    calibrated = round(cmap(float(raw)), 3)
    return {
        **critique,
        "confidence": calibrated,
        "judged_confidence": raw,
        "calibration": "workspace",
        "recommend_retry": calibrated < bar,
        # The last stage of the confidence's path (answers/confidence.STAGES).
        "confidence_stages": {**(critique.get("confidence_stages") or {}), "workspace": calibrated},
    }


# -- storing -------------------------------------------------------------------------------------
def _points_json(points: Sequence[Point]) -> str:
    return json.dumps([[p.score, int(p.right), p.source, p.question] for p in points])


class CalibrationStore:
    """One row per workspace: the outline points the job found and the latest fit (outline
    points plus the analyst's verdicts). The row goes with its workspace (``ON DELETE
    CASCADE``), and a fit is stored only while the workspace exists."""

    # Written only while the workspace row exists (a job may outlive its workspace).
    GUARDED_UPSERT = (
        "INSERT INTO calibrations (workspace_id, engine, updated_at, points, report)"
        " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?)"
        " ON CONFLICT (workspace_id) DO UPDATE SET engine = excluded.engine,"
        " updated_at = excluded.updated_at, points = excluded.points, report = excluded.report"
    )

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(
        self,
        ws_id: str,
        outline: Sequence[Point],
        verdicts: Sequence[Point],
        *,
        keep_larger_fit: bool = False,
        **extra: Any,
    ) -> dict[str, Any] | None:
        """Fit outline + verdict points and store them; None (nothing stored) when the
        workspace is gone, checked in the same transaction as the write. With
        ``keep_larger_fit`` (a calibration job), a stored fit of today's judge on more points
        stays when these are too few or one-sided."""
        report = {**fit([*outline, *verdicts]), **extra, "workspace": ws_id}
        report["updated_at"] = now_iso()
        earlier = self.get(ws_id) if keep_larger_fit and report["status"] != "fitted" else None
        points = sum(earlier["points"][k] for k in ("right", "wrong")) if earlier else 0
        if earlier is not None and usable_fit(earlier) and points > len(outline) + len(verdicts):
            # A short job (``--max-questions 5``) knows less than the stored fit: it stays,
            # and the report says so instead of replacing it. A verdict's refit always
            # stores: the analyst's change must count at once.
            report["message"] = report["message"].replace(
                KEEPS_GLOBAL,
                f"this workspace keeps its earlier fit ({points} answers, "
                f"{earlier['updated_at'][:10]})",
            )
            report["kept_earlier_fit"] = earlier["updated_at"]
            return report
        row = (ws_id, ENGINE, report["updated_at"], _points_json(outline), json.dumps(report))
        with self.db.connect() as conn:
            stored = conn.execute(self.GUARDED_UPSERT, (*row, ws_id)).rowcount
        return report if stored else None

    def _read(self, column: str, ws_id: str) -> Any:
        with self.db.connect() as conn:
            row = conn.execute(
                f"SELECT {column} FROM calibrations WHERE workspace_id = ?", (ws_id,)
            ).fetchone()
        return json.loads(row[column]) if row else None

    def outline_points(self, ws_id: str) -> list[Point]:
        return [
            Point(float(s), bool(r), src, q) for s, r, src, q in self._read("points", ws_id) or []
        ]

    def get(self, ws_id: str) -> dict[str, Any] | None:
        report: dict[str, Any] | None = self._read("report", ws_id)
        return report

    def map_for(self, ws_id: str | None, engine: str) -> CalibrationMap | None:
        """What the critic applies to a run of ``engine`` in the workspace."""
        return map_of(self.get(ws_id), engine) if ws_id else None

    def refit(self, ws_id: str, verdicts: Sequence[Point]) -> dict[str, Any] | None:
        """The analyst's verdicts changed: fit again with the stored outline points."""
        previous = self.get(ws_id) or {}
        keep = {
            k: previous[k]
            for k in ("questions", "withheld", "elsewhere", "unscored", "seconds")
            if k in previous
        }
        return self.save(ws_id, self.outline_points(ws_id), verdicts, **keep)
