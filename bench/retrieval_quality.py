"""Dense vs BM25 vs hybrid retrieval, side by side, on one index in one run.

    python -m bench.retrieval_quality [--dataset ../shared/eval/fitzgov-dev/retrieval]
        [--no-variants] [--limit N (an even spread of N queries)] [--pdfs DIR --questions FILE]

Columns: our three modes, plus hybrid with equal-weight Reciprocal Rank Fusion instead of our
min-max score fusion, for reference. With ``--pdfs``, also page-hit@5 over real PDFs per mode.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from evaluation.retrieval import evaluate_pages, evaluate_retrieval, format_table

DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared/eval/fitzgov-dev/retrieval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--no-variants", action="store_true")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--pdfs", type=Path)
    parser.add_argument("--questions", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr)

    report = evaluate_retrieval(
        args.dataset,
        use_variants=not args.no_variants,
        limit=args.limit,
        progress=progress,
        configs={
            "dense": {"mode": "dense"},
            "bm25": {"mode": "bm25"},
            "hybrid": {"mode": "hybrid"},
            "hybrid (RRF)": {"mode": "hybrid", "fusion": "rrf"},
        },
    )
    print(format_table(report))
    overall = {m: r["overall"]["ndcg@10"] for m, r in report["modes"].items()}
    best_single = max(overall["dense"], overall["bm25"])
    print(
        f"\nhybrid nDCG@10 {overall['hybrid']:.3f} vs the better single mode "
        f"{best_single:.3f}: {overall['hybrid'] - best_single:+.3f}"
    )
    if args.pdfs and args.questions:
        print(f"\nreal PDFs: {args.pdfs}")
        print(f"{'mode':8} | page-hit@5 | MRR")
        for mode in ("dense", "bm25", "hybrid"):
            pages = evaluate_pages(args.pdfs, args.questions, k=5, mode=mode)
            print(f"{mode:8} | {pages['page_hit@5']:10.3f} | {pages['mrr']:.3f}")


if __name__ == "__main__":
    main()
