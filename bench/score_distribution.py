"""Similarity-score distributions of an embedder on the BEIR-layout development set.

Used to choose the researcher's per-model similarity threshold: for each query, the cosine
similarity to its relevant documents (positives) and to the best-scoring irrelevant ones
(hard negatives). Prints percentiles side by side and the threshold that keeps a given share
of the positives.

    python -m bench.score_distribution --dataset ../shared/eval/fitzgov-dev/retrieval \
        [--embedder wordllama|ollama:nomic-embed-text] [--queries 400] [--keep 0.9]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np

from evaluation.retrieval import load_beir
from masis_core.config import get_settings
from masis_core.llm.embeddings import get_embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--keep", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    corpus, query_rows, qrels = load_beir(args.dataset)
    queries = {q: row["text"] for q, row in query_rows.items()}
    embedder = get_embedder(args.embedder, get_settings())
    ids = list(corpus)
    doc_vecs = embedder.embed_documents([corpus[i] for i in ids])
    index = {d: n for n, d in enumerate(ids)}
    qids = sorted(q for q in qrels if q in queries)
    random.Random(args.seed).shuffle(qids)
    qids = qids[: args.queries]
    q_vecs = np.stack([embedder.embed_query(queries[q]) for q in qids])
    sims = q_vecs @ doc_vecs.T
    pos: list[float] = []
    neg: list[float] = []
    top1: list[float] = []
    for row, qid in zip(sims, qids, strict=True):
        relevant = {index[d] for d in qrels[qid] if d in index}
        pos.extend(float(row[i]) for i in relevant)
        order = np.argsort(-row)
        hard = [i for i in order[:20] if i not in relevant][:10]
        neg.extend(float(row[i]) for i in hard)
        top1.append(float(row[order[0]]))
    pct = [5, 10, 25, 50, 75, 90]
    print(f"embedder {embedder.name}, {len(qids)} queries, {len(pos)} positives")
    print(f"{'percentile':>10} | {'relevant':>8} | {'hard negative (top-10)':>22}")
    for p in pct:
        print(f"{p:>10} | {np.percentile(pos, p):8.3f} | {np.percentile(neg, p):22.3f}")
    threshold = float(np.percentile(pos, (1 - args.keep) * 100))
    kept_neg = float(np.mean(np.asarray(neg) >= threshold))
    print(
        f"threshold keeping {args.keep:.0%} of relevant chunks: {threshold:.3f} "
        f"(hard negatives above it: {kept_neg:.0%})"
    )


if __name__ == "__main__":
    main()
