"""How far the judge's features can take the confidence on one workspace: issue 28 asks for
0.75 of answerable questions answered without review (0.95 of them on the right page) while
0.90 of unanswerable ones abstain. A monotone map (the workspace calibration) cannot reorder
drafts, so what bounds it is how well the judge's score ranks them; this script measures that
bound for the shipped judge, for its features refitted to the workspace, and for a judge
that already knows the answer.

    python -m bench.judge_ceiling --data-dir DIR --workspace unseen --pdfs .unseen-pdfs \\
        --held-out bench/data/unseen-answerable.json bench/data/unseen-unanswerable.json \\
        [--out rows.pkl] [--json]

It records what the critic was given for the calibration job's outline drafts (each over its
own document, every third with its section withheld, ``evaluation.calibration``) and for each
held-out question asked through the whole graph with the workspace map off
(``bench.workspace_calibration.run_rows``), and scores every draft by:

- the shipped judge (``confidence.json``'s document model);
- its features refitted to the workspace's outline drafts, no label written by hand: a
  logistic regression pulled towards the shipped weights by a Gaussian prior whose strength
  is chosen by 5-fold log-loss on those drafts;
- its features refitted to the held-out questions themselves, labelled by whether the lead
  answers or by whether the gold page is cited: what an analyst's verdicts on every question
  could teach. Each draft is scored by fits without it (``held_out_scores``), and, as a ceiling
  no honest fit reaches, in sample;
- the label itself: a judge that knows whether the lead answers (or the gold page is cited).

For each: the AUC of answerable against unanswerable questions and of right leads against
wrong; the bar that abstains on 90% of the unanswerable questions, and how many answerable
ones it lets through (how many of those cite the gold page); at the review bar itself (0.65),
answered, right page and abstained; the calibration error against "the lead answers".
Needs scikit-learn (``bench/requirements.txt``).
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from bench.fit_confidence import recording_judge
from bench.manual_abstain import workspace
from bench.workspace_calibration import run_rows
from evaluation.calibration import calibration_questions, outline_point, tasks_of
from masis_core.answers import confidence
from masis_core.answers.engine import OfflineEngine
from masis_core.answers.features import features as draft_features
from masis_core.config import Settings
from masis_core.graph.build import first_draft_graph
from masis_core.graph.context import RunContext
from masis_core.workspaces.calibration import Point, map_logistic, reliability
from masis_core.workspaces.workbench import Workbench

Draft = dict[str, Any]  # what the critic was given: question, answer, evidence
PRIORS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def record(bench: Workbench, ws_id: str, held: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """The outline drafts (with their label: the lead in the heading's section) and the
    held-out questions' final drafts, each with what the critic was given."""
    ws = bench.registry.require_workspace(ws_id)
    graph, context = first_draft_graph(), RunContext(bench, OfflineEngine())
    outline: list[dict[str, Any]] = []
    with recording_judge() as seen:
        questions, _ = calibration_questions(bench, ws_id)
        for q, withheld in tasks_of(questions):
            seen.clear()
            try:
                point = outline_point(graph, context, ws, q, withheld)
            except Exception as exc:  # one question's failure, as the job itself skips it
                print(f"outline question {q['question'][:60]!r} failed: {exc}", file=sys.stderr)
                continue
            if isinstance(point, Point) and seen:
                outline.append({"draft": seen[-1], "right": point.right, "withheld": withheld})
        seen.clear()

        def judged(row: dict[str, Any]) -> None:
            row["draft"] = seen[-1] if seen else None
            seen.clear()

        bench.settings = bench.settings.model_copy(update={"calibrate_workspaces": False})
        rows = run_rows(bench, ws_id, held, after=judged)
    return {
        "outline": outline,
        "held": [r for r in rows if r["draft"]],
        "no_draft": [r["question"] for r in rows if not r["draft"]],
    }


def design(feats: list[dict[str, float]]) -> np.ndarray:
    """The document model's features of each draft, standardised as the model reads them."""
    model = confidence.load_params()["documents"]
    mean, scale = np.array(model["mean"]), np.array(model["scale"])
    rows = [
        [float(f.get(n, m)) for n, m in zip(model["features"], mean, strict=True)] for f in feats
    ]
    return (np.array(rows) - mean) / scale


def features(drafts: list[Draft]) -> list[dict[str, float]]:
    """The judge's features of each draft, computed once (the reader reads every sentence)."""
    return [draft_features(d["question"], d["answer"], d["evidence"]) for d in drafts]


def refit(x: np.ndarray, y: np.ndarray, strength: float) -> tuple[np.ndarray, float]:
    """The shipped weights moved towards ``(x, y)``: a Gaussian prior of precision
    ``strength`` on each weight (a tenth of it on the intercept) centred on the shipped one,
    fitted as the workspace map's Platt curve is (``map_logistic``)."""
    model = confidence.load_params()["documents"]
    prior = np.r_[model["coef"], model["intercept"]]
    precision = np.r_[np.full(len(model["coef"]), strength), 0.1 * strength]
    v = map_logistic(np.column_stack([x, np.ones(len(x))]), y, prior, precision)
    return v[:-1], float(v[-1])


def chosen_strength(x: np.ndarray, y: np.ndarray) -> float:
    """The prior strength of the lowest 5-fold log-loss on the outline drafts."""
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(x, y))

    def held_loss(strength: float) -> float:
        total = 0.0
        for train, test in folds:
            w, b = refit(x[train], y[train], strength)
            total += log_loss(y[test], expit(x[test] @ w + b), normalize=False, labels=[0, 1])
        return total

    return min(PRIORS, key=held_loss)


def _auc(score: np.ndarray, positive: np.ndarray) -> float:
    """How well a score ranks (ties count half), which no monotone map changes."""
    return round(float(roc_auc_score(positive, score)), 3)


def measures(score: np.ndarray, held: list[dict[str, Any]]) -> dict[str, Any]:
    """One scoring's row. The bar at 90% abstained is the score that at least 90% of the
    unanswerable questions do not pass; answerable ones at the bar are held back too, so the
    count errs low. The 0.65 figures read the raw score, as if no workspace map applied."""
    answerable = np.array([r["answerable"] for r in held])
    lead = np.array([bool(r["lead_right"]) for r in held])
    page = np.array([bool(r["right"]) for r in held])
    unanswerable = np.sort(score[~answerable])
    bar = unanswerable[math.ceil(0.9 * len(unanswerable)) - 1]  # abstains on 90% or more
    through = answerable & (score > bar)
    shown = answerable & (score >= confidence.LOW_CONFIDENCE)
    return {
        "auc_answerable": _auc(score, answerable),
        "auc_lead": _auc(score, lead),
        "answered_at_90_abstained": f"{int(through.sum())}/{int(answerable.sum())}",
        "right_page_of_those": f"{int((through & page).sum())}/{int(through.sum())}",
        "answered_at_065": f"{int(shown.sum())}/{int(answerable.sum())}",
        "right_page_at_065": f"{int((shown & page).sum())}/{int(shown.sum())}",
        "abstained_at_065": f"{int((score[~answerable] < confidence.LOW_CONFIDENCE).sum())}"
        f"/{int((~answerable).sum())}",
        "ece_lead": reliability(list(zip(score.tolist(), lead.tolist(), strict=True)))["ece"],
    }


def held_out_scores(x: np.ndarray, y: np.ndarray, repeats: int = 20) -> np.ndarray:
    """Each draft scored by fits without it: stratified 5-fold, repeated over ``repeats``
    shuffles and averaged. Pooled leave-one-out scores rank worse than the fits do (each
    fold's class balance tilts its intercept); one 5-fold split is noisy (on the unseen PDFs
    the answerable questions let through at 90% abstained ranged 17-38 over 20 splits)."""
    total = np.zeros(len(y))
    for seed in range(repeats):
        for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(x, y):
            fitted = LogisticRegression(max_iter=5000).fit(x[train], y[train])
            total[test] += fitted.predict_proba(x[test])[:, 1]
    return total / repeats


def scorings(data: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Every scoring of the held-out drafts, by name."""
    held = data["held"]
    feats = features([r["draft"] for r in held])
    x_held = design(feats)
    x_out = design(features([o["draft"] for o in data["outline"]]))
    y_out = np.array([float(o["right"]) for o in data["outline"]])
    # As ``judgement.judge`` scores a draft: an empty answer 0, short passages the
    # development model's way.
    shipped = np.array(
        [
            confidence.probabilities(f)["answer"] if r["draft"]["answer"] else 0.0
            for f, r in zip(feats, held, strict=True)
        ]
    )
    strength = chosen_strength(x_out, y_out)
    w, b = refit(x_out, y_out, strength)
    out = {
        "shipped judge": shipped,
        f"refitted to the outline drafts (prior {strength:g})": expit(x_held @ w + b),
    }
    labels: dict[str, Callable[[dict[str, Any]], bool]] = {
        "the lead answers": lambda r: bool(r["lead_right"]),
        "gold page cited": lambda r: bool(r["answerable"] and r["right"]),
    }
    for name, label in labels.items():
        y = np.array([label(r) for r in held])
        fitted = LogisticRegression(max_iter=5000)
        out[f"refitted to the questions, held out ({name})"] = held_out_scores(x_held, y)
        out[f"refitted to the questions, in sample ({name})"] = fitted.fit(x_held, y).predict_proba(
            x_held
        )[:, 1]
        out[f"knows whether {name}"] = y.astype(float)
    return {name: measures(score, held) for name, score in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--workspace", default="manuals")
    parser.add_argument("--pdfs", type=Path, help="ingested into --workspace when it is empty")
    parser.add_argument("--held-out", type=Path, nargs="+", default=[])
    parser.add_argument("--out", type=Path, help="keep the recorded drafts here (pickle)")
    parser.add_argument("--drafts", type=Path, help="score drafts recorded earlier (--out)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.drafts:
        data = pickle.loads(args.drafts.read_bytes())
    else:
        if not (args.data_dir and args.held_out):
            parser.error("recording needs --data-dir and --held-out (or --drafts)")
        bench = Workbench(
            Settings.local(args.data_dir, provider="offline", embed_model="wordllama")
        )
        ws = bench.registry.get_workspace(args.workspace)
        if ws and bench.documents(ws.id):
            ws_id = ws.id
        elif args.pdfs:
            ws_id = workspace(bench, args.pdfs, args.workspace)
        else:
            parser.error(f"workspace {args.workspace!r} has no documents: give --pdfs")
        data = record(bench, ws_id, args.held_out)
        if args.out:
            args.out.write_bytes(pickle.dumps(data))
    if {r["answerable"] for r in data["held"]} != {True, False}:
        parser.error("the held-out questions need answerable and unanswerable ones")
    table = scorings(data)
    if args.json:
        print(json.dumps(table, indent=2))
        return
    missing = len(data.get("no_draft", []))
    print(
        f"{len(data['outline'])} outline drafts, {len(data['held'])} held-out drafts; "
        f"left out, with no draft: {missing} question{'' if missing == 1 else 's'}",
        file=sys.stderr,
    )
    keys = list(next(iter(table.values())))
    print(" | ".join(["scoring", *keys]))
    for name, row in table.items():
        print(" | ".join([name, *(str(row[k]) for k in keys)]))


if __name__ == "__main__":
    main()
