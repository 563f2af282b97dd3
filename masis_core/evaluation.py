"""Governance evaluation: does a run end as the case expects — answer, abstain or dispute?

Each case's contexts go into a fresh workspace of a temporary data dir, the query is asked,
and the outcome is classified: a cited answer = ``answer``; a ``no_evidence`` or
``low_confidence`` review = ``abstain``; a ``conflict`` review = ``dispute``.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from ingest.pipeline import Ingestor
from masis_core.config import Settings
from masis_core.runs import RunRecord, RunService
from masis_core.services import Workbench

MODES = ("answer", "abstain", "dispute")


def classify(rec: RunRecord) -> str:
    if rec.status == "completed" and rec.citations:
        return "answer"
    if rec.status == "needs_human" and rec.hitl and rec.hitl.get("kind") == "conflict":
        return "dispute"
    if rec.status == "failed":
        return "error"
    return "abstain"


def load_cases(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    cases = []
    with path.open() as fh:
        for line in fh:
            if line.strip():
                cases.append(json.loads(line))
            if limit is not None and len(cases) >= limit:
                break
    return cases


def run_governance(
    cases_path: Path,
    *,
    limit: int | None = None,
    engine: str = "offline",
    progress: TextIO | None = None,
) -> dict[str, Any]:
    cases = load_cases(cases_path, limit)
    confusion: dict[str, Counter] = {m: Counter() for m in MODES}
    with tempfile.TemporaryDirectory(prefix="masis-eval-") as tmp:
        bench = Workbench(Settings(data_dir=Path(tmp), provider=engine, embed_model="wordllama"))
        ingestor = Ingestor(bench)
        researcher = RunService(bench)
        for n, case in enumerate(cases, start=1):
            ws = bench.create_workspace(f"case-{n}", "wordllama")
            for i, text in enumerate(case["contexts"], start=1):
                ingestor.ingest_bytes(ws, text.encode(), f"context-{i}.txt")
            rec = researcher.ask(ws.id, case["query"], engine=engine)
            got = classify(rec)
            confusion.setdefault(case["expected_mode"], Counter())[got] += 1
            bench.delete_workspace(ws.id)
            if progress is not None and n % 50 == 0:
                print(f"{n}/{len(cases)} cases", file=progress, flush=True)
    total = sum(sum(c.values()) for c in confusion.values())
    correct = sum(confusion[m][m] for m in confusion)
    per_mode = {
        m: {
            "cases": sum(c.values()),
            "accuracy": round(c[m] / sum(c.values()), 3) if sum(c.values()) else None,
        }
        for m, c in confusion.items()
    }
    return {
        "cases": total,
        "engine": engine,
        "accuracy": round(correct / total, 3) if total else None,
        "per_mode": per_mode,
        "confusion": {m: dict(c) for m, c in confusion.items()},
    }


def format_report(report: dict[str, Any]) -> str:
    cols = [*MODES, "error"]
    lines = [
        f"{report['cases']} cases, engine {report['engine']}: "
        f"mode accuracy {report['accuracy']:.1%}",
        "",
        f"{'expected / got':>16} | " + " | ".join(f"{c:>7}" for c in cols) + " | accuracy",
    ]
    for mode, row in report["confusion"].items():
        acc = report["per_mode"][mode]["accuracy"]
        cells = " | ".join(f"{row.get(c, 0):>7}" for c in cols)
        lines.append(f"{mode:>16} | {cells} | {'' if acc is None else f'{acc:.1%}'}")
    return "\n".join(lines)
