"""The workspace calibration on the manuals: the job's wall time, and the calibration error
before and after the fitted map on questions the map was not fitted on.

    python -m bench.workspace_calibration --data-dir DIR [--workspace manuals] \
        [--pdfs .pdf-corpus/manuals] [--held-out bench/data/manual-answerable.json ...] [--json]

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
from pathlib import Path
from typing import Any

from bench.manual_abstain import right, workspace
from evaluation.calibration import ask, calibrate_workspace
from masis_core.answers.engine import OfflineEngine
from masis_core.answers.judgement import LOW_CONFIDENCE, reliability
from masis_core.config import Settings
from masis_core.graph.build import first_draft_graph
from masis_core.graph.context import RunContext
from masis_core.workspaces.calibration import Table, table_of
from masis_core.workspaces.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HELD_OUT = [
    ROOT / "bench/data/manual-answerable.json",
    ROOT / "bench/data/manual-unanswerable.json",
    ROOT / "bench/data/manual-howto-validation.json",
]


def held_out(
    bench: Workbench, ws_id: str, paths: list[Path], table: Table | None
) -> list[dict[str, Any]]:
    """Each question's judge score, mapped score (the fitted ``table``, whether or not the
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
            mapped = judged if table is None else table(judged)
            rows.append({"set": path.stem, "judged": judged, "mapped": mapped, "right": bool(ok)})
    return rows


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    cal = reliability([(r[key], r["right"]) for r in rows])
    reviewed = sum(r[key] < LOW_CONFIDENCE for r in rows)
    answered = [r for r in rows if r[key] >= LOW_CONFIDENCE]
    return {
        "ece": cal["ece"],
        "drafts": len(rows),
        "reviewed": reviewed,
        "right_of_answered": round(sum(r["right"] for r in answered) / len(answered), 3)
        if answered
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--workspace", default="manuals", help="an ingested workspace to use")
    parser.add_argument("--pdfs", type=Path, default=ROOT / ".pdf-corpus/manuals")
    parser.add_argument("--held-out", type=Path, nargs="*", default=DEFAULT_HELD_OUT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bench = Workbench(Settings.local(args.data_dir, provider="offline", embed_model="wordllama"))
    ws = bench.registry.get_workspace(args.workspace)
    ws_id = ws.id if ws and bench.documents(ws.id) else workspace(bench, args.pdfs)
    started = time.perf_counter()
    report = calibrate_workspace(bench, ws_id)
    seconds = round(time.perf_counter() - started, 1)
    table = table_of(report, "offline")
    rows = held_out(bench, ws_id, args.held_out, table)
    if table is None:
        print(f"note: {report.get('message')}", file=sys.stderr)
    out = {
        "job_seconds": seconds,
        "documents": len(bench.documents(ws_id)),
        "fit": {k: report.get(k) for k in ("status", "message", "points", "table", "questions")}
        | {k: report.get(k) for k in ("ece_before", "ece_after", "ece_after_held_out")},
        "held_out_before": summary(rows, "judged"),
        "held_out_after": summary(rows, "mapped"),
        "held_out_per_set": {
            s: {"before": summary(part, "judged"), "after": summary(part, "mapped")}
            for s in sorted({r["set"] for r in rows})
            if (part := [r for r in rows if r["set"] == s])
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
