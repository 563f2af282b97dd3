"""Answers and abstentions on real manuals, and whether the confidence means what it says.

    python -m bench.manual_abstain [--pdfs .pdf-corpus/manuals] \
        [--questions bench/data/manual-unanswerable.json] \
        [--answerable bench/data/manual-answerable.json] \
        [--howto bench/data/manual-howto.json bench/data/manual-howto-validation.json] \
        [--data-dir /tmp/manuals-ws] [--json]

The manuals are ingested once into one workspace (kept in ``--data-dir`` when given, so a
second run skips the ingest); each question is asked through the whole offline graph, and
the run's outcome is classified as in ``eval governance``. The unanswerable questions (each
names the manual whose topic it is about, which does not hold what is asked) should end in a
review (abstain). The answerable ones name the page that answers them (``gold_page``: the
answer is right when it cites it); the how-to sets were written as a user asks, without the
page at hand, and name what a right answer contains (``answer_terms``, regular expressions:
"read\\.fwf", "dpkg -S"). Calibration pairs each run's confidence with whether its lead
answers (``answer_quality.lead_answers``), what the confidence is the probability of.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.answer_quality import cited_hit, lead_answers
from evaluation.governance import classify, format_reliability, temp_root
from ingest.pipeline import Ingestor, Source, expand_paths
from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.calibration import reliability
from masis_core.workspaces.workbench import Workbench

WORKSPACE = "manuals"


def workspace(bench: Workbench, pdfs: Path, name: str = WORKSPACE) -> str:
    """The PDFs' workspace, ingested unless an earlier run left it in the data dir."""
    ws = bench.open_workspace(name, "wordllama", create=True)
    if not bench.documents(ws.id):
        ingestor = Ingestor(bench)
        sources = [Source.of_path(p) for p in expand_paths([pdfs])]
        for report in ingestor.ingest_each(ws, sources):
            print(report.line(), file=sys.stderr)
    return ws.id


def right(q: dict[str, Any], answer: str, citations: list[dict[str, Any]]) -> bool:
    """Whether an answer to a manual question is right: it cites the gold page
    (``answer_quality.cited_hit``) or holds one of the answer's terms; an answer to an
    unanswerable question never is."""
    if "answer_terms" in q:
        return any(re.search(t, answer, re.I) for t in q["answer_terms"])
    if "gold_page" in q:
        return cited_hit(citations, q["doc"], int(q["gold_page"]))
    return False


def ask_all(researcher: RunService, ws_id: str, questions: list[dict[str, Any]]) -> list[dict]:
    rows = []
    for q in questions:
        rec = researcher.ask(ws_id, q["question"], engine="offline")
        rows.append(
            {
                **q,
                "got": classify(rec),
                "confidence": rec.confidence,
                "right": right(q, rec.answer or "", rec.citations or []),
                "lead_right": lead_answers(q, rec.answer or "", rec.citations or []),
                "review": (rec.hitl or {}).get("kind"),
            }
        )
    return rows


def measure(pdfs: Path, files: dict[str, Path], data_dir: Path) -> dict[str, Any]:
    bench = Workbench(Settings.local(data_dir, provider="offline", embed_model="wordllama"))
    ws_id = workspace(bench, pdfs)
    researcher = RunService(bench)
    report: dict[str, Any] = {}
    for name, path in files.items():
        rows = ask_all(researcher, ws_id, json.loads(path.read_text()))
        abstained = sum(r["got"] == "abstain" for r in rows)
        answered = [r for r in rows if r["got"] == "answer"]
        report[name] = {
            "questions": len(rows),
            "abstained": round(abstained / len(rows), 3) if rows else None,
            "answered": round(len(answered) / len(rows), 3) if rows else None,
            "right": round(sum(r["right"] for r in rows) / len(rows), 3) if rows else None,
            "lead_right": (
                round(sum(r["lead_right"] for r in rows) / len(rows), 3) if rows else None
            ),
            "right_when_answered": (
                round(sum(r["right"] for r in answered) / len(answered), 3) if answered else None
            ),
            "rows": rows,
        }
    # Does the confidence mean on real manuals what it means on the development cases? Each
    # run's confidence against whether its lead answers (``answer_quality.lead_answers``: the
    # confidence is the probability that it does; never, for the unanswerable).
    judged = [
        (float(r["confidence"]), bool(r["lead_right"]), r["got"] == "answer")
        for part in report.values()
        for r in part["rows"]
        if r["confidence"] is not None
    ]
    if len(files) > 1:
        report["calibration"] = reliability([(c, ok) for c, ok, _ in judged])
        report["calibration_answered"] = reliability([(c, ok) for c, ok, said in judged if said])
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.manual_abstain")
    ap.add_argument("--pdfs", type=Path, default=Path(".pdf-corpus/manuals"))
    ap.add_argument("--questions", type=Path, default=Path("bench/data/manual-unanswerable.json"))
    ap.add_argument("--answerable", type=Path, default=None)
    ap.add_argument("--howto", type=Path, nargs="*", default=[], help="sets with answer_terms")
    ap.add_argument("--data-dir", type=Path, default=None, help="keep the ingested manuals here")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    files = {"unanswerable": args.questions}
    if args.answerable:
        files["answerable"] = args.answerable
    for path in args.howto:
        files[path.stem] = path
    if args.data_dir:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        report = measure(args.pdfs, files, args.data_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="masis-manuals-", dir=temp_root()) as tmp:
            report = measure(args.pdfs, files, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    calibration = report.pop("calibration", None)
    answered = report.pop("calibration_answered", None)
    for name, part in report.items():
        when = part["right_when_answered"]
        print(
            f"{name}: {part['questions']} questions, abstained {part['abstained']:.0%}, "
            f"answered {part['answered']:.0%}, right {part['right']:.0%}"
            + ("" if when is None else f" ({when:.0%} of the answered)")
        )
        for r in part["rows"]:
            conf = "—" if r["confidence"] is None else f"{r['confidence']:.2f}"
            mark = "right" if r["right"] else "     "
            print(f"  {r['got']:>8} {conf:>5} {mark}  {r['doc']}: {r['question']}")
    if calibration is not None and answered is not None:
        print(
            f"calibration (confidence against a right answer): ECE {calibration['ece']} over "
            f"{calibration['count']} judged questions, {answered['ece']} over the "
            f"{answered['count']} answered"
        )
        print("\n".join(format_reliability(calibration)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
