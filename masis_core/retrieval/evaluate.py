"""Retrieval evaluation on a BEIR-layout dataset: the researcher's own retrieval, measured.

The corpus is indexed into a temporary workspace through the same store and keyword index the
ingest pipeline writes (one chunk per corpus document), and each query goes through
``hybrid.retrieve`` exactly as the researcher calls it, query variants included.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from masis_core.config import Settings
from masis_core.llm.engine import OfflineEngine
from masis_core.retrieval.hybrid import MODES, Mode, retrieve
from masis_core.retrieval.metrics import mrr_at, ndcg_at, recall_at
from masis_core.retrieval.store import chunk_id
from masis_core.services import Workbench

INDEX_BATCH = 512


def load_beir(dataset: Path) -> tuple[dict[str, str], dict[str, dict], dict[str, set[str]]]:
    """(corpus id -> text, query id -> {text, category}, query id -> relevant corpus ids)."""
    corpus: dict[str, str] = {}
    for row in _jsonl(dataset / "corpus.jsonl"):
        title = (row.get("title") or "").strip()
        corpus[row["_id"]] = f"{title}\n{row['text']}" if title else row["text"]
    queries = {
        row["_id"]: {
            "text": row["text"],
            "category": (row.get("metadata") or {}).get("category", "all"),
        }
        for row in _jsonl(dataset / "queries.jsonl")
    }
    qrels: dict[str, set[str]] = defaultdict(set)
    with (dataset / "qrels" / "test.tsv").open() as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[2].lstrip("-").isdigit() and int(parts[2]) > 0:
                qrels[parts[0]].add(parts[1])
    return corpus, queries, dict(qrels)


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open() as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def index_corpus(bench: Workbench, ws_id: str, embed_model: str, corpus: dict[str, str]) -> None:
    embedder = bench.embedder(embed_model)
    items = list(corpus.items())
    for start in range(0, len(items), INDEX_BATCH):
        batch = items[start : start + INDEX_BATCH]
        ids = [chunk_id(ws_id, doc, 0) for doc, _ in batch]
        texts = [text for _, text in batch]
        bench.store.add_chunks(
            embed_model,
            ids,
            np.asarray(embedder.embed_documents(texts)),
            texts,
            [
                {
                    "workspace_id": ws_id,
                    "doc_id": doc,
                    "filename": doc,
                    "page_start": 1,
                    "page_end": 1,
                    "chunk_index": 0,
                }
                for doc, _ in batch
            ],
        )
        for (doc, text), cid in zip(batch, ids, strict=True):
            bench.bm25.add(ws_id, doc, [cid], [text])
        bench.store.make_visible(embed_model, ids)


def query_variants(question: str, use_variants: bool) -> list[str]:
    """The researcher's queries for a question: itself plus the planner's rephrasings."""
    if not use_variants:
        return [question]
    return [question, *(OfflineEngine().expand(question).value or [])]


def evaluate_retrieval(
    dataset: Path,
    modes: Iterable[Mode] = MODES,
    k: int = 10,
    embed_model: str = "wordllama",
    use_variants: bool = True,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    **retrieve_options: Any,
) -> dict[str, Any]:
    corpus, queries, qrels = load_beir(dataset)
    qids = [q for q in queries if q in qrels][:limit]
    depth = max(k, 10)
    with tempfile.TemporaryDirectory(prefix="masis-eval-") as tmp:
        bench = Workbench(Settings(data_dir=Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("eval", embed_model)
        if progress:
            progress(f"indexing {len(corpus)} documents")
        index_corpus(bench, ws.id, embed_model, corpus)
        report: dict[str, Any] = {
            "dataset": str(dataset),
            "queries": len(qids),
            "k": k,
            "embedder": embed_model,
            "variants": use_variants,
            "modes": {},
        }
        for mode in modes:
            if progress:
                progress(f"querying ({mode})")
            per_query = []
            for qid in qids:
                question = queries[qid]["text"]
                found = retrieve(
                    bench,
                    ws.id,
                    embed_model,
                    query_variants(question, use_variants),
                    depth,
                    mode=mode,
                    **retrieve_options,
                )
                ranked = [c.metadata.get("doc_id", "") for c in found]
                relevant = qrels[qid]
                per_query.append(
                    {
                        "category": queries[qid]["category"],
                        f"recall@{k}": recall_at(ranked, relevant, k),
                        "ndcg@10": ndcg_at(ranked, relevant, 10),
                        "mrr@10": mrr_at(ranked, relevant, 10),
                    }
                )
            report["modes"][mode] = _summarise(per_query)
    return report


def _summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    metrics = [m for m in rows[0] if m != "category"] if rows else []
    overall = {m: round(mean(r[m] for r in rows), 4) for m in metrics}
    by_category: dict[str, dict[str, float]] = {}
    for cat in sorted({r["category"] for r in rows}):
        sub = [r for r in rows if r["category"] == cat]
        by_category[cat] = {
            "queries": len(sub),
            **{m: round(mean(r[m] for r in sub), 4) for m in metrics},
        }
    return {"overall": overall, "by_category": by_category}


def format_table(report: dict[str, Any]) -> str:
    """Modes side by side: overall, then one row per category."""
    modes = list(report["modes"])
    metrics = list(next(iter(report["modes"].values()))["overall"])
    head = f"{'':24} | " + " | ".join(f"{m:>22}" for m in modes)
    sub = f"{'category (queries)':24} | " + " | ".join(
        " ".join(f"{x.split('@')[0][:6]:>6}" for x in metrics) for _ in modes
    )
    lines = [
        f"{report['queries']} queries, embedder {report['embedder']}, "
        f"query variants {'on' if report['variants'] else 'off'}; "
        f"metrics: {', '.join(metrics)}",
        head,
        sub,
        "-" * len(sub),
    ]

    def row(label: str, pick: Callable[[dict[str, Any]], dict[str, float]]) -> str:
        cells = [" ".join(f"{pick(report['modes'][m])[x]:6.3f}" for x in metrics) for m in modes]
        return f"{label:24} | " + " | ".join(f"{c:>22}" for c in cells)

    lines.append(row("overall", lambda r: r["overall"]))
    first = report["modes"][modes[0]]["by_category"]
    for cat, vals in first.items():
        lines.append(row(f"{cat} ({vals['queries']})", lambda r, c=cat: r["by_category"][c]))
    return "\n".join(lines)
