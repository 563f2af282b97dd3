"""Governance evaluation: does a run end as the case expects — answer, abstain or dispute?

Each case's contexts go into a workspace of its own, the query is asked, and the outcome is
classified: a cited answer = ``answer``; a ``no_evidence`` or ``low_confidence`` review =
``abstain``; a ``conflict`` review = ``dispute``. Every case also reports the critic's
confidence, so the report can say how well that confidence is calibrated.

All cases share one Workbench, one RunService and one data dir (on ``/dev/shm`` when there
is one: the run store and checkpoints write to SQLite at every node).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from ingest.isolate import die_with_parent
from ingest.pipeline import Ingestor, Source
from masis_core.answers.confidence import DECISIONS
from masis_core.config import Settings
from masis_core.errors import InputError
from masis_core.services.runs import RunRecord, RunService
from masis_core.workspaces.calibration import reliability
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)

HEADLINE = (
    "every answered case; an answer where the right call was 'dispute' or 'abstain' counts as wrong"
)
WITHOUT_DISPUTES = "answered cases whose right call was 'answer' or 'abstain' (disputes left out)"
FAST_TMP = Path("/dev/shm")


def classify(rec: RunRecord) -> str:
    if rec.status == "completed" and rec.citations:
        return "answer"
    if rec.status == "needs_human" and rec.hitl and rec.hitl.get("kind") == "conflict":
        return "dispute"
    if rec.status == "failed":
        return "error"
    return "abstain"


def load_cases(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The cases; with ``limit``, an even spread over the file (every n-th case), so a quick
    run sees every category rather than the file's first one."""
    cases = []
    try:
        with path.open() as fh:
            for n, line in enumerate(fh, start=1):
                if line.strip():
                    cases.append(_case(json.loads(line), path, n))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the cases file {path}: {exc}") from exc
    except ValueError as exc:
        raise InputError(f"{path}, line {n}: not a JSON object ({exc})") from exc
    if not cases:
        raise InputError(f"{path} holds no cases")
    if limit is not None and limit < len(cases):
        step = len(cases) / limit
        cases = [cases[int(i * step)] for i in range(limit)]
    return cases


def _case(row: Any, path: Path, line: int) -> dict[str, Any]:
    """A case as ``run_governance`` needs it; a bad one names its line."""
    if not isinstance(row, dict) or not {"query", "contexts", "expected_mode"} <= set(row):
        raise InputError(f"{path}, line {line}: needs 'query', 'contexts' and 'expected_mode'")
    if row["expected_mode"] not in DECISIONS:
        raise InputError(
            f"{path}, line {line}: expected_mode {row['expected_mode']!r} is not one of "
            + ", ".join(DECISIONS)
        )
    return row


def temp_root() -> str | None:
    """A RAM-backed temp dir when the machine has one (SQLite commits cost no disk sync)."""
    return str(FAST_TMP) if FAST_TMP.is_dir() and os.access(FAST_TMP, os.W_OK) else None


def governance_runs(
    cases: list[dict[str, Any]],
    *,
    engine: str = "offline",
    max_retries: int | None = None,
    progress: TextIO | None = None,
) -> Iterator[tuple[dict[str, Any], RunRecord]]:
    """Run every case in a workspace of its own; yield (case, record) as each ends."""
    with tempfile.TemporaryDirectory(prefix="masis-eval-", dir=temp_root()) as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider=engine, embed_model="wordllama"))
        ingestor = Ingestor(bench)
        researcher = RunService(bench)
        for n, case in enumerate(cases, start=1):
            ws = bench.create_workspace(f"case-{n}", "wordllama")
            # One batch: the next context is parsed in its child while this one is stored.
            sources = [
                Source.of_bytes(f"context-{i}.txt", text.encode())
                for i, text in enumerate(case["contexts"], start=1)
            ]
            for _ in ingestor.ingest_each(ws, sources):
                pass
            rec = researcher.ask(ws.id, case["query"], engine=engine, max_retries=max_retries)
            yield case, rec
            bench.delete_workspace(ws.id)
            if progress is not None and n % 100 == 0:
                print(f"{n}/{len(cases)} cases", file=progress, flush=True)


def case_record(case: dict[str, Any], rec: RunRecord) -> dict[str, Any]:
    """What the JSON report keeps of one case."""
    confidence = rec.confidence
    return {
        "id": case.get("id"),
        "category": case.get("category"),
        "expected": case["expected_mode"],
        "got": classify(rec),
        "confidence": None if confidence is None else round(float(confidence), 4),
        **({"error": rec.error} if rec.status == "failed" else {}),
    }


def _errors_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A run that failed (Ollama down, a model missing) is no verdict on the engine: its
    reason is kept, so a run of errors reads as one, not as a low accuracy."""
    failed = [r.get("error") or "unknown" for r in records if r["got"] == "error"]
    return {"count": len(failed), "reasons": dict(Counter(failed).most_common(3))}


def summarise(records: list[dict[str, Any]], engine: str) -> dict[str, Any]:
    """Confusion, per-mode and per-category accuracy, and the confidence's calibration.

    The headline, ``calibration_error``, is over every answered case: the confidence an
    answer was shown with against whether answering was right, so an answer given where the
    right call was "dispute" (or "abstain") counts as wrong. That is what an analyst reading
    an answer's confidence meets. ``calibration_error_without_disputes`` leaves out the cases
    whose right call was a dispute, labelled as such. ``calibration`` pairs each judged case's
    confidence with whether answering was right over the answer and abstain cases (the
    question the answer model speaks to); the ``calibration_*`` blocks hold the reliability
    bins. Cases that stopped before the critic (no evidence) have no confidence."""
    confusion: dict[str, Counter] = {m: Counter() for m in DECISIONS}
    categories: dict[str, Counter] = {}
    for r in records:
        confusion.setdefault(r["expected"], Counter())[r["got"]] += 1
        cat = categories.setdefault(str(r["category"]), Counter())
        cat["cases"] += 1
        cat["correct"] += r["got"] == r["expected"]
    total = len(records)
    correct = sum(r["got"] == r["expected"] for r in records)
    per_mode = {
        m: {
            "cases": sum(c.values()),
            "accuracy": round(c[m] / sum(c.values()), 3) if sum(c.values()) else None,
        }
        for m, c in confusion.items()
    }
    scored = [r for r in records if r["confidence"] is not None]
    in_domain = [r for r in scored if r["expected"] != "dispute"]
    judged = [(r["confidence"], r["expected"] == "answer") for r in in_domain]
    answered = [
        (r["confidence"], r["expected"] == "answer") for r in in_domain if r["got"] == "answer"
    ]
    answered_all = [
        (r["confidence"], r["expected"] == "answer") for r in scored if r["got"] == "answer"
    ]
    strict, lenient = reliability(answered_all), reliability(answered)
    return {
        "cases": total,
        "engine": engine,
        "accuracy": round(correct / total, 3) if total else None,
        "calibration_error": {"ece": strict["ece"], "count": strict["count"], "over": HEADLINE},
        "calibration_error_without_disputes": {
            "ece": lenient["ece"],
            "count": lenient["count"],
            "over": WITHOUT_DISPUTES,
        },
        "per_mode": per_mode,
        "per_category": {
            k: {"cases": c["cases"], "accuracy": round(c["correct"] / c["cases"], 3)}
            for k, c in sorted(categories.items())
        },
        "confusion": {m: dict(c) for m, c in confusion.items()},
        "errors": _errors_summary(records),
        "calibration": reliability(judged),
        "calibration_answered": lenient,
        "calibration_answered_with_disputes": strict,
        "records": records,
    }


def _run_shard(cases: list[dict[str, Any]], engine: str, progress: bool) -> list[dict[str, Any]]:
    """One worker process's share of the cases (its own Workbench and data dir)."""
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    out = sys.stderr if progress else None
    return [case_record(c, r) for c, r in governance_runs(cases, engine=engine, progress=out)]


def default_workers() -> int:
    """One worker per core, at most two: each holds its own embedder and Chroma client."""
    return max(1, min(2, os.cpu_count() or 1))


def run_governance(
    cases_path: Path,
    *,
    limit: int | None = None,
    engine: str = "offline",
    progress: TextIO | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Run the cases, split over ``workers`` processes (default: one per core, at most 2).

    The 1,481 development cases on this 2-core machine, shared with other jobs: before, one
    process on disk, 10 min 41 s (load ~4); now 2 workers on /dev/shm, 3 min 17 s (load ~3)
    to 5 min 14 s (load ~5.5). Single process, 60 cases: ingest 49% (a forked parse per
    context, Chroma writes), graph 43%, workspace deletion 6%."""
    cases = load_cases(cases_path, limit)
    workers = default_workers() if workers is None else max(1, workers)
    if workers == 1 or len(cases) < 2 * workers:
        records = [
            case_record(c, r) for c, r in governance_runs(cases, engine=engine, progress=progress)
        ]
        return summarise(records, engine)
    shards = [cases[k::workers] for k in range(workers)]
    with ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        done = list(
            pool.map(
                _run_shard,
                shards,
                [engine] * workers,
                [progress is not None] * workers,
            )
        )
    records = [done[n % workers][n // workers] for n in range(len(cases))]
    return summarise(records, engine)


def format_reliability(calibration: dict[str, Any]) -> list[str]:
    """The reliability table: per confidence bin, how often answering was right."""
    lines = [f"{'confidence':>12} | {'cases':>5} | {'mean conf':>9} | {'accuracy':>8} | gap"]
    for b in calibration["bins"]:
        if not b["count"]:
            continue
        gap = b["accuracy"] - b["mean_confidence"]
        lines.append(
            f"{b['lo']:.1f} – {b['hi']:.1f} | {b['count']:>5} | {b['mean_confidence']:>9.3f} | "
            f"{b['accuracy']:>8.3f} | {gap:+.3f}"
        )
    return lines


def _headline(report: dict[str, Any]) -> list[str]:
    """The calibration error over every answered case, then the figure without disputes."""
    out = []
    for key, label in (
        (
            "calibration_error",
            "calibration error (ECE) over every answered case, disputes "
            "included (answered = wrong)",
        ),
        ("calibration_error_without_disputes", "without the disputes' cases"),
    ):
        block = report.get(key) or {}
        if block.get("ece") is not None:
            out.append(f"{label}: {block['ece']:.3f} ({block['count']} answered)")
    return out


def _errors(report: dict[str, Any]) -> list[str]:
    errors = report.get("errors") or {}
    if not errors.get("count"):
        return []
    lines = [f"{errors['count']} of {report['cases']} cases failed to run; the reasons:"]
    return lines + [f"  {n} × {reason}" for reason, n in errors["reasons"].items()]


def format_report(report: dict[str, Any]) -> str:
    cols = [*DECISIONS, "error"]
    lines = [
        f"{report['cases']} cases, engine {report['engine']}: "
        f"mode accuracy {report['accuracy']:.1%}",
        *_headline(report),
        *_errors(report),
        "",
        f"{'expected / got':>16} | " + " | ".join(f"{c:>7}" for c in cols) + " | accuracy",
    ]
    for mode, row in report["confusion"].items():
        acc = report["per_mode"][mode]["accuracy"]
        cells = " | ".join(f"{row.get(c, 0):>7}" for c in cols)
        lines.append(f"{mode:>16} | {cells} | {'' if acc is None else f'{acc:.1%}'}")
    lines += ["", "per category:"]
    lines += [
        f"  {cat:<20} {v['cases']:>5} cases  {v['accuracy']:.1%}"
        for cat, v in report["per_category"].items()
    ]
    for key, title in (
        ("calibration_answered_with_disputes", "every answered case, missed disputes wrong"),
        ("calibration_answered", "answered cases, disputes left out"),
        ("calibration", "judged answer and abstain cases"),
    ):
        cal = report[key]
        if not cal["count"]:
            continue
        lines += [
            "",
            f"confidence vs 'an answer was right' — {title} ({cal['count']}): "
            f"expected calibration error {cal['ece']:.3f}",
            *format_reliability(cal),
        ]
    return "\n".join(lines)
