"""How the offline composer's relevance bar was chosen: sentence scores on development data.

    python -m bench.sentence_relevance [--dataset ../shared/eval/fitzgov-dev/retrieval]
        [--pdfs .pdf-corpus/manuals --questions bench/data/manual-answerable.json]
        [--cache /tmp/relevance.json] [--keep 0.9]

Evidence is retrieved as the researcher's first pass does (the question and the planner's
rephrasings, hybrid, top 10, the same thresholds), once, and cached. Then, per question:

- positives: the best-covering sentence of each evidence passage that is relevant (a qrels
  document of fitzgov-dev; a chunk of the manuals holding the gold page or the page after);
- negatives: every sentence of an irrelevant passage — they share words with the question,
  or retrieval would not have found them.

It prints the percentiles of ``compose``'s relevance (the share of the question's content
words a sentence covers) for both, the bar that keeps ``--keep`` of the positives with the
share of negatives it drops, and, for each bar (absolute, and relative to the best sentence)
on a grid, how often the composed answer leads with, and cites, a relevant passage, the
share of its sentences that come from relevant passages, and its length.
Development data only: the held-out half of fitz-gov is never read.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = ROOT.parent / "shared" / "eval" / "fitzgov-dev" / "retrieval"
DEFAULT_PDFS = ROOT / ".pdf-corpus" / "manuals"
DEFAULT_QUESTIONS = ROOT / "bench" / "data" / "manual-answerable.json"
GRID = (0.2, 0.25, 0.3, 1 / 3, 0.4, 0.5, 0.6, 0.7)
RHO_GRID = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8)

Relevant = Callable[[dict[str, Any]], bool]


def first_pass(bench: Any, ws_id: str, question: str) -> list[dict[str, Any]]:
    """The researcher's first-pass evidence, without running the graph."""
    from masis_core.answers.offline import alternatives
    from masis_core.retrieval.hybrid import retrieve
    from masis_core.retrieval.thresholds import threshold_for

    threshold = threshold_for("wordllama", 0)
    found = retrieve(bench.index(ws_id, "wordllama"), [question, *alternatives(question)], 10)
    return [
        {
            "chunk_id": c.chunk_id,
            "doc_id": str(c.metadata.get("doc_id", "")),
            "filename": str(c.metadata.get("filename", "")),
            "page_start": int(c.metadata.get("page_start", 0)),
            "page_end": int(c.metadata.get("page_end", 0)),
            "text": c.text,
            "score": round(c.dense, 6),
            "source": "kb",
        }
        for c in found
        if c.dense >= threshold or (c.keyword_rank is not None and c.coverage >= 0.5)
    ]


def collect_fitzgov(dataset: Path, n: int) -> list[dict[str, Any]]:
    from evaluation.retrieval import index_corpus, load_beir
    from masis_core.config import Settings
    from masis_core.workspaces.workbench import Workbench

    corpus, queries, qrels = load_beir(dataset)
    qids = sorted(q for q in queries if q in qrels)
    random.Random(5).shuffle(qids)
    rows = []
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("dev", "wordllama")
        index_corpus(bench, ws.id, "wordllama", corpus)
        for qid in qids[:n]:
            text = queries[qid]["text"]
            rows.append(
                {
                    "set": "fitzgov-dev",
                    "question": text,
                    "relevant_docs": sorted(qrels[qid]),
                    "evidence": first_pass(bench, ws.id, text),
                }
            )
    return rows


def collect_manuals(pdfs: Path, questions: Path) -> list[dict[str, Any]]:
    from ingest.pipeline import Ingestor, expand_paths
    from masis_core.config import Settings
    from masis_core.workspaces.workbench import Workbench

    rows = []
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("manuals", "wordllama")
        ingestor = Ingestor(bench)
        for path in expand_paths([pdfs]):
            ingestor.ingest_path(ws, path)
        for q in json.loads(questions.read_text()):
            rows.append(
                {
                    "set": "manuals",
                    "question": q["question"],
                    "doc": q["doc"],
                    "gold_page": int(q["gold_page"]),
                    "evidence": first_pass(bench, ws.id, q["question"]),
                }
            )
    return rows


def relevance_of(row: dict[str, Any]) -> Relevant:
    """Whether one evidence item is relevant to the row's question."""
    if row["set"] == "fitzgov-dev":
        docs = set(row["relevant_docs"])
        return lambda ev: ev["doc_id"] in docs
    gold = row["gold_page"]
    return lambda ev: (
        ev["filename"] == row["doc"]
        and (
            ev["page_start"] <= gold <= ev["page_end"]
            or ev["page_start"] <= gold + 1 <= ev["page_end"]
        )
    )


def score_rows(rows: list[dict[str, Any]], keep: float) -> None:
    from masis_core.answers.compose import RELATIVE_RELEVANCE, RELEVANCE, candidates, compose

    for name in sorted({r["set"] for r in rows}):
        subset = [r for r in rows if r["set"] == name and r["evidence"]]
        pos: list[float] = []
        neg: list[float] = []
        for row in subset:
            relevant = relevance_of(row)
            evidence = row["evidence"]
            _, found = candidates(row["question"], evidence)
            best: dict[int, float] = {}
            for c in found:
                if any(relevant(evidence[m - 1]) for m in c.markers):
                    best[c.passage] = max(best.get(c.passage, 0.0), c.coverage)
                else:
                    neg.append(c.coverage)
            pos.extend(best.values())
        if not pos:
            continue
        print(
            f"\n{name}: {len(subset)} questions, {len(pos)} relevant passages, {len(neg)} "
            "sentences of irrelevant passages"
        )
        print(f"{'percentile':>10} | {'best sentence, relevant':>23} | {'irrelevant':>10}")
        for p in (5, 10, 25, 50, 75, 90):
            print(f"{p:>10} | {np.percentile(pos, p):23.3f} | {np.percentile(neg, p):10.3f}")
        bar = float(np.percentile(pos, (1 - keep) * 100))
        dropped = float(np.mean(np.asarray(neg) < bar))
        print(
            f"bar keeping {keep:.0%} of relevant passages: {bar:.3f} "
            f"(drops {dropped:.1%} of irrelevant sentences)"
        )
        print(
            f"{'bar':>5} | {'relative':>8} | {'lead relevant':>13} | {'cites relevant':>14} | "
            f"{'precision':>9} | {'sentences':>9}"
        )
        settings = [(bar, RELATIVE_RELEVANCE) for bar in GRID]
        settings += [(RELEVANCE, rho) for rho in RHO_GRID if rho != RELATIVE_RELEVANCE]
        for bar, rho in settings:
            lead = cites = precise = total = 0
            for row in subset:
                relevant = relevance_of(row)
                parts = compose(row["question"], row["evidence"], relevance=bar, relative=rho)
                flags = [
                    any(relevant(row["evidence"][m - 1]) for m in p["citations"]) for p in parts
                ]
                lead += bool(flags and flags[0])
                cites += any(flags)
                precise += sum(flags)
                total += len(flags)
            n = len(subset)
            print(
                f"{bar:5.2f} | {rho:8.2f} | {lead / n:13.3f} | {cites / n:14.3f} | "
                f"{precise / max(total, 1):9.3f} | {total / n:9.2f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--cache", type=Path, help="evidence cache (written once, then read)")
    parser.add_argument("--keep", type=float, default=0.9)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.cache and args.cache.exists():
        rows = json.loads(args.cache.read_text())
    else:
        rows = collect_fitzgov(args.dataset, args.queries)
        if args.pdfs.is_dir() and args.questions.exists():
            rows += collect_manuals(args.pdfs, args.questions)
        if args.cache:
            args.cache.write_text(json.dumps(rows))
    score_rows(rows, args.keep)


if __name__ == "__main__":
    main()
