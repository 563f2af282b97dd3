"""Where a research run's time goes: the whole offline graph on 50 real questions.

    python -m bench.graph_overhead [--dataset ../shared/eval/fitzgov-dev/retrieval] [--n 50]

The development set's corpus is indexed into a workspace (one chunk per document) and 50 of
its questions go through the real graph (SQLite checkpoints included). Per node: p50/p95 of
the node's own time; per run: p50/p95 of the wall time, and the share spent outside the nodes
(LangGraph, checkpointing, the run store).
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.retrieval_quality import DEFAULT_DATASET
from evaluation.retrieval import index_corpus, load_beir
from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--n", type=int, default=50)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    corpus, queries, qrels = load_beir(args.dataset)
    qids = sorted(q for q in queries if q in qrels)
    random.Random(5).shuffle(qids)
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("bench", "wordllama")
        index_corpus(bench, ws.id, "wordllama", corpus)
        research = RunService(bench)
        research.ask(ws.id, "warm-up question about cells")  # model and index loads
        per_node: dict[str, list[float]] = defaultdict(list)
        walls, inside = [], []
        statuses: dict[str, int] = defaultdict(int)
        for qid in qids[: args.n]:
            start = time.perf_counter()
            rec = research.ask(ws.id, queries[qid]["text"])
            walls.append((time.perf_counter() - start) * 1000)
            statuses[rec.status] += 1
            spent = 0.0
            for entry in rec.trace:
                if "duration_ms" in entry:
                    per_node[entry["node"]].append(float(entry["duration_ms"]))
                    spent += float(entry["duration_ms"])
            inside.append(spent)
    total = sum(walls)
    print(f"{len(walls)} runs on {len(corpus)} chunks; outcomes: {dict(statuses)}")
    print(f"{'node':14} | {'calls':>5} | {'p50 ms':>7} | {'p95 ms':>7} | {'share of wall':>13}")
    for node, values in sorted(per_node.items(), key=lambda kv: -sum(kv[1])):
        print(
            f"{node:14} | {len(values):5} | {pct(values, 50):7.1f} | {pct(values, 95):7.1f} | "
            f"{sum(values) / total:13.1%}"
        )
    outside = [w - i for w, i in zip(walls, inside, strict=True)]
    print(
        f"{'outside nodes':14} | {len(outside):5} | {pct(outside, 50):7.1f} | "
        f"{pct(outside, 95):7.1f} | {sum(outside) / total:13.1%}"
    )
    print(f"{'run (wall)':14} | {len(walls):5} | {pct(walls, 50):7.1f} | {pct(walls, 95):7.1f} |")


if __name__ == "__main__":
    main()
