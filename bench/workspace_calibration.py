"""The workspace calibration on the manuals: the job's wall time, and the calibration error
before and after the fitted map on questions the map was not fitted on.

    python -m bench.workspace_calibration --data-dir DIR [--workspace manuals] \
        [--pdfs .pdf-corpus/manuals] [--held-out bench/data/manual-answerable.json ...] \
        [--runs] [--out rows.json] [--json]

With ``--runs`` each held-out question is also asked as a user asks it, through the whole
graph (``RunService.ask``), once with the map off (before the job) and once with it on
(after): answerable questions (those naming a gold page or answer terms) answered without
review (final status completed, confidence at least 0.65), the share of those answered that
cite the gold page, unanswerable ones abstained (``eval governance``'s classes), and the
calibration error over every draft (confidence against a right answer; and against "the
lead answers", ``answer_quality.lead_answers``) and how well the confidence ranks them
(AUC, both readings), with counts. On PDFs no part of the
engine was fitted on (``bench/data/fetch-unseen-pdfs.sh``):

    python -m bench.workspace_calibration --data-dir /tmp/unseen --workspace unseen \
        --pdfs .unseen-pdfs --held-out bench/data/unseen-answerable.json \
        bench/data/unseen-unanswerable.json --runs

The manuals are ingested once into ``--data-dir`` (kept, so a second run skips it). The job
(``evaluation.calibration.calibrate_workspace``: the outline questions, the fit, stored) is
timed; then each held-out question is asked through the same first pass, and its judge score
(before) and mapped score (after) are paired with whether the answer was right
(``bench.manual_abstain.right``: the gold page cited, an answer term held; an answer to an
unanswerable question never is). "Reviewed" is the share under the 0.65 bar.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.answer_quality import lead_answers
from bench.manual_abstain import right, workspace
from evaluation.calibration import ask, calibrate_workspace
from evaluation.governance import classify
from masis_core.answers.confidence import LOW_CONFIDENCE
from masis_core.answers.engine import OfflineEngine
from masis_core.config import Settings
from masis_core.graph.build import first_draft_graph
from masis_core.graph.context import RunContext
from masis_core.services.runs import RunService
from masis_core.workspaces.calibration import CalibrationMap, map_of, rank_auc, reliability
from masis_core.workspaces.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HELD_OUT = [
    ROOT / "bench/data/manual-answerable.json",
    ROOT / "bench/data/manual-unanswerable.json",
    ROOT / "bench/data/manual-howto-validation.json",
]


def held_out(
    bench: Workbench, ws_id: str, paths: list[Path], cmap: CalibrationMap | None
) -> list[dict[str, Any]]:
    """Each question's judge score, mapped score (the fitted ``cmap``, whether or not the
    critic applies it) and verdict (questions without a draft: no score, left out)."""
    graph, context = first_draft_graph(), RunContext(bench, OfflineEngine())
    ws = bench.registry.require_workspace(ws_id)
    rows = []
    for path in paths:
        for q in json.loads(path.read_text()):
            state = ask(graph, context, ws, q["question"])
            critique = state.get("critique") or {}
            if not state.get("draft_answer") or critique.get("confidence") is None:
                continue
            ok = right(q, state.get("answer") or "", state.get("citations") or [])
            judged = float(critique.get("judged_confidence", critique["confidence"]))
            mapped = judged if cmap is None else cmap(judged)
            rows.append({"set": path.stem, "judged": judged, "mapped": mapped, "right": bool(ok)})
    return rows


def auc(rows: list[dict[str, Any]], key: str) -> float | None:
    """How well the score ranks right drafts above wrong ones: the chance that a right draft
    scores higher than a wrong one (ties count half). No map, being monotone, changes it much:
    it is the judge's own ceiling."""
    found = rank_auc([r[key] for r in rows if r["right"]], [r[key] for r in rows if not r["right"]])
    return None if found is None else round(found, 3)


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    cal = reliability([(r[key], r["right"]) for r in rows])
    reviewed = sum(r[key] < LOW_CONFIDENCE for r in rows)
    answered = [r for r in rows if r[key] >= LOW_CONFIDENCE]
    return {
        "ece": cal["ece"],
        "auc": auc(rows, key),
        "drafts": len(rows),
        "reviewed": reviewed,
        "right_of_answered": round(sum(r["right"] for r in answered) / len(answered), 3)
        if answered
        else None,
    }


def run_rows(
    bench: Workbench,
    ws_id: str,
    paths: list[Path],
    after: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Each question asked through the whole graph, as the CLI asks: its final status and
    confidence, whether it was answered without review, is right (``manual_abstain.right``)
    and whether its lead answers. ``after`` sees each row as it is made (``judge_ceiling``
    adds what the critic was given)."""
    researcher, rows = RunService(bench), []
    for path in paths:
        for q in json.loads(path.read_text()):
            rec = researcher.ask(ws_id, q["question"], engine="offline")
            answer, cites = rec.answer or "", rec.citations or []
            confidence = None if rec.confidence is None else float(rec.confidence)
            rows.append(
                {
                    "set": path.stem,
                    "doc": q.get("doc"),
                    "question": q["question"],
                    "answerable": "gold_page" in q or "answer_terms" in q,
                    "got": classify(rec),
                    "review": (rec.hitl or {}).get("kind"),
                    "confidence": confidence,
                    "answered": rec.status == "completed" and (confidence or 0) >= LOW_CONFIDENCE,
                    "right": right(q, answer, cites),
                    "lead_right": lead_answers(q, answer, cites),
                    "answer": answer,
                    "cited": [f"{c.get('filename')} p{c.get('page')}" for c in cites],
                }
            )
            if after:
                after(rows[-1])
    return rows


def share(part: int, whole: int) -> dict[str, Any]:
    return {"share": round(part / whole, 3) if whole else None, "count": f"{part}/{whole}"}


def run_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets on one pass: answered without review, right page of those
    answered, unanswerable abstained, calibration error over every draft."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in answerable if r["answered"]]
    drafts = [r for r in rows if r["confidence"] is not None]
    return {
        "answered_without_review": share(len(answered), len(answerable)),
        "right_page_of_answered": share(sum(r["right"] for r in answered), len(answered)),
        "right_page_of_answerable": share(sum(r["right"] for r in answerable), len(answerable)),
        "unanswerable_abstained": share(
            sum(r["got"] == "abstain" for r in unanswerable), len(unanswerable)
        ),
        "unanswerable_answered": share(sum(r["answered"] for r in unanswerable), len(unanswerable)),
        "ece_drafts": reliability([(r["confidence"], r["right"]) for r in drafts])["ece"],
        "ece_drafts_lead": reliability([(r["confidence"], r["lead_right"]) for r in drafts])["ece"],
        # How well the final confidence ranks right drafts above wrong ones: the map cannot
        # raise it (it is monotone), the judge can.
        "auc_drafts": auc(drafts, "confidence"),
        "auc_drafts_lead": auc([{**r, "right": r["lead_right"]} for r in drafts], "confidence"),
        "drafts": len(drafts),
    }


def runs_before_after(
    bench: Workbench, ws_id: str, paths: list[Path]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The held-out questions through the whole graph with the workspace map off, then the
    calibration job (timed), then the same questions with the map on."""
    applied = bench.settings
    bench.settings = applied.model_copy(update={"calibrate_workspaces": False})
    try:
        before = run_rows(bench, ws_id, paths)
    finally:
        bench.settings = applied.model_copy(update={"calibrate_workspaces": True})
    started = time.perf_counter()
    report = calibrate_workspace(bench, ws_id)
    report["job_seconds"] = round(time.perf_counter() - started, 1)
    return report, before, run_rows(bench, ws_id, paths)


def print_runs(out: dict[str, Any]) -> None:
    """The before/after table of ``--runs``."""
    before, after = out["runs_before"], out["runs_after"]
    print(f"{'':30} {'before map':>16} {'after map':>16}")
    for key in before:
        b, a = before[key], after[key]
        show = (lambda v: f"{v['share']} ({v['count']})") if isinstance(b, dict) else str
        print(f"{key:30} {show(b):>16} {show(a):>16}")
    fit = out["fit"]
    print(
        f"job {out['job_seconds']} s, {out['documents']} documents, fit {fit.get('status')}: "
        f"{fit.get('message')}; ECE on its points {fit.get('ece_before')} -> "
        f"{fit.get('ece_after')} (held out {fit.get('ece_after_held_out')})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--workspace", default="manuals", help="an ingested workspace to use")
    parser.add_argument("--pdfs", type=Path, default=ROOT / ".pdf-corpus/manuals")
    parser.add_argument("--held-out", type=Path, nargs="*", default=DEFAULT_HELD_OUT)
    parser.add_argument("--runs", action="store_true", help="also ask through the whole graph")
    parser.add_argument("--out", type=Path, help="write every question's rows here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bench = Workbench(Settings.local(args.data_dir, provider="offline", embed_model="wordllama"))
    ws = bench.registry.get_workspace(args.workspace)
    ws_id = ws.id if ws and bench.documents(ws.id) else workspace(bench, args.pdfs, args.workspace)
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    if args.runs:
        report, before, after = runs_before_after(bench, ws_id, args.held_out)
        seconds = report["job_seconds"]
    else:
        started = time.perf_counter()
        report = calibrate_workspace(bench, ws_id)
        seconds = round(time.perf_counter() - started, 1)
    cmap = map_of(report, "offline")
    rows = held_out(bench, ws_id, args.held_out, cmap)
    if cmap is None:
        print(f"note: {report.get('message')}", file=sys.stderr)
    out = {
        "job_seconds": seconds,
        "documents": len(bench.documents(ws_id)),
        "fit": {
            k: report.get(k)
            for k in ("status", "message", "points", "table", "questions", "method", "held_out")
        }
        | {k: report.get(k) for k in ("ece_before", "ece_after", "ece_after_held_out")},
        "held_out_before": summary(rows, "judged"),
        "held_out_after": summary(rows, "mapped"),
        "held_out_per_set": {
            s: {"before": summary(part, "judged"), "after": summary(part, "mapped")}
            for s in sorted({r["set"] for r in rows})
            if (part := [r for r in rows if r["set"] == s])
        },
    }
    if args.runs:
        out |= {"runs_before": run_summary(before), "runs_after": run_summary(after)}
    if args.out:
        args.out.write_text(json.dumps({**out, "before": before, "after": after}, indent=1))
    if args.runs and not args.json:
        print_runs(out)
        return
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
