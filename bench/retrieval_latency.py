"""Retrieval latency at scale: our hybrid retrieval vs a raw Chroma kNN, same collection.

    python -m bench.retrieval_latency [--pdfs .pdf-corpus/manuals] [--chunks 100000]

A workspace is grown to ``--chunks`` chunks of real manual text (200-word windows over the
manuals' words, at the stride that yields the count), through the same store and keyword
index the ingest pipeline writes. Then, per query (embedding included in every column):

- raw Chroma: ``collection.query`` top-10 with the workspace filter;
- ours, 1 variant: dense + BM25 + fusion + filters (``hybrid.retrieve``), the question only;
- ours, 3 variants: the same with the planner's two rephrasings.
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.ingest_speed import DEFAULT_PDFS, find_pdfs
from evaluation.retrieval import query_variants
from ingest.parsing import parse_bytes
from masis_core.config import Settings
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.store import chunk_id, workspace_where
from masis_core.services import Workbench

WINDOW = 200
BATCH = 2000


def windows(pdfs: list[Path], count: int) -> list[str]:
    words = []
    for p in pdfs:
        for page in parse_bytes(p.read_bytes(), p.name).pages:
            words.extend(page.text.split())
    stride = max(1, (len(words) - WINDOW) // count)
    return [" ".join(words[i : i + WINDOW]) for i in range(0, stride * count, stride)][:count]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    texts = windows(find_pdfs(args.pdfs), args.chunks)
    rng = random.Random(3)
    questions = [
        " ".join(rng.choice(texts).split()[s : s + rng.randint(5, 12)])
        for s in (rng.randrange(150) for _ in range(args.queries))
    ]
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        bench = Workbench(Settings(data_dir=Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("big", "wordllama")
        embedder = bench.embedder("wordllama")
        start = time.perf_counter()
        for b in range(0, len(texts), BATCH):
            batch = texts[b : b + BATCH]
            ids = [chunk_id(ws.id, f"doc{(b + i) // 50:05d}", b + i) for i in range(len(batch))]
            metas = [
                {
                    "workspace_id": ws.id,
                    "doc_id": f"doc{(b + i) // 50:05d}",
                    "chunk_index": b + i,
                    "filename": "manuals",
                    "page_start": 1,
                    "page_end": 1,
                }
                for i in range(len(batch))
            ]
            bench.store.add_chunks("wordllama", ids, embedder.embed_documents(batch), batch, metas)
            bench.bm25.add(ws.id, f"batch{b}", ids, batch)
            bench.store.make_visible("wordllama", ids)
        build_s = time.perf_counter() - start
        col = bench.store.collection("wordllama")

        def raw(q: str) -> None:
            col.query(
                query_embeddings=[embedder.embed_query(q)],
                n_results=10,
                where=workspace_where(ws.id, {"visible": True}),
                include=["documents", "metadatas", "distances"],
            )

        def ours(q: str, variants: bool) -> None:
            retrieve(bench.index(ws.id, "wordllama"), query_variants(q, variants), 10, "hybrid")

        for q in questions[:5]:  # warm caches and the keyword index once
            raw(q)
            ours(q, True)
        results = {"raw Chroma kNN": [], "ours, 1 variant": [], "ours, 3 variants": []}
        for q in questions:  # interleaved, so drift hits every column alike
            results["raw Chroma kNN"].append(timed(lambda q=q: raw(q)))
            results["ours, 1 variant"].append(timed(lambda q=q: ours(q, False)))
            results["ours, 3 variants"].append(timed(lambda q=q: ours(q, True)))
    print(f"{len(texts)} chunks (built in {build_s:.0f} s), {len(questions)} queries, top-10")
    print(f"{'':18} | {'p50 ms':>7} | {'p95 ms':>7} | {'p99 ms':>7}")
    for name, values in results.items():
        p50, p95, p99 = np.percentile(values, [50, 95, 99])
        print(f"{name:18} | {p50:7.1f} | {p95:7.1f} | {p99:7.1f}")
    raw95 = np.percentile(results["raw Chroma kNN"], 95)
    ours95 = np.percentile(results["ours, 1 variant"], 95)
    print(f"\nours (1 variant) p95 / raw p95 = {ours95 / raw95:.2f} (target <= 2.0)")


if __name__ == "__main__":
    main()
