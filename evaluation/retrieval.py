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

from masis_core.answers.engine import OfflineEngine
from masis_core.config import Settings
from masis_core.errors import InputError
from masis_core.modes import MODES, Mode
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.metrics import mrr_at, ndcg_at, recall_at
from masis_core.retrieval.store import chunk_id
from masis_core.workspaces.workbench import Workbench

INDEX_BATCH = 512


def load_beir(dataset: Path) -> tuple[dict[str, str], dict[str, dict], dict[str, set[str]]]:
    """(corpus id -> text, query id -> {text, category}, query id -> relevant corpus ids);
    a folder that is not one names what it lacks."""
    missing = [
        name
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
        if not (dataset / name).is_file()
    ]
    if missing:
        raise InputError(f"{dataset} is not a BEIR-layout folder: it has no {', '.join(missing)}")
    try:
        return _load_beir(dataset)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the data set {dataset}: {exc}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{dataset}: a row is not BEIR's ({type(exc).__name__}: {exc})") from exc


def _load_beir(dataset: Path) -> tuple[dict[str, str], dict[str, dict], dict[str, set[str]]]:
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
    return [question, *OfflineEngine().plan(question, web_enabled=False).value["alternatives"]]


def evaluate_retrieval(
    dataset: Path,
    modes: Iterable[Mode] = MODES,
    k: int = 10,
    embed_model: str = "wordllama",
    use_variants: bool = True,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    configs: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Metrics per retrieval configuration on one index; ``configs`` maps a column label to
    ``retrieve`` options (default: one column per mode)."""
    corpus, queries, qrels = load_beir(dataset)
    qids = [q for q in queries if q in qrels]
    if limit is not None and 0 < limit < len(qids):
        # Evenly spread, not the first N: datasets are often sorted by category.
        qids = [qids[i * len(qids) // limit] for i in range(limit)]
    configs = configs or {m: {"mode": m} for m in modes}
    with tempfile.TemporaryDirectory(prefix="masis-eval-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
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
        for label, options in configs.items():
            if progress:
                progress(f"querying ({label})")
            per_query = []
            for qid in qids:
                found = retrieve(
                    bench.index(ws.id, embed_model),
                    query_variants(queries[qid]["text"], use_variants),
                    max(k, 10),
                    **options,
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
            report["modes"][label] = _summarise(per_query)
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

    def category(cat: str) -> Callable[[dict[str, Any]], dict[str, float]]:
        return lambda r: r["by_category"][cat]

    lines.append(row("overall", lambda r: r["overall"]))
    first = report["modes"][modes[0]]["by_category"]
    for cat, vals in first.items():
        lines.append(row(f"{cat} ({vals['queries']})", category(cat)))
    return "\n".join(lines)


def load_page_questions(path: Path) -> list[dict[str, Any]]:
    """``[{"doc": "<pdf file name>", "question": "...", "gold_page": N}, ...]``, checked."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the question file {path}: {exc}") from exc
    if not isinstance(rows, list):
        raise InputError(f"{path} must hold a JSON list of question objects")
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not {"doc", "question", "gold_page"} <= set(row):
            raise InputError(f"{path}, item {n}: needs 'doc', 'question' and 'gold_page'")
    return rows


def page_hit(chunk_meta: dict[str, Any], doc: str, gold_page: int) -> bool:
    """A chunk of that document whose page range holds the gold page or the page after it
    (a question often names the heading that closes the page before its answer)."""
    if chunk_meta.get("filename") != doc:
        return False
    start, end = int(chunk_meta.get("page_start", 0)), int(chunk_meta.get("page_end", 0))
    return start <= gold_page <= end or start <= gold_page + 1 <= end


def _ingest_folder(bench: Workbench, ws_id: str, pdfs: Path, progress) -> list[dict[str, Any]]:
    from ingest.pipeline import Ingestor, expand_paths

    ws = bench.registry.require_workspace(ws_id)
    ingestor = Ingestor(bench)
    reports = []
    for path in expand_paths([pdfs]):
        if progress:
            progress(f"ingesting {path.name}")
        reports.append(ingestor.ingest_path(ws, path).to_json())
    return reports


def evaluate_pages(
    pdfs: Path,
    questions_file: Path,
    k: int = 5,
    mode: Mode = "hybrid",
    embed_model: str = "wordllama",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Ingest a folder of real PDFs, then page-hit@k for each labelled question."""
    if not pdfs.is_dir():
        raise InputError(f"{pdfs} is not a folder: give the folder that holds the PDFs")
    questions = load_page_questions(questions_file)
    with tempfile.TemporaryDirectory(prefix="masis-eval-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("pages", embed_model)
        files = _ingest_folder(bench, ws.id, pdfs, progress)
        ingested = {f["file"] for f in files if f["status"] in ("ingested", "duplicate")}
        if not ingested:
            raise InputError(
                f"no file under {pdfs} could be ingested"
                + (f" ({files[0]['file']}: {files[0].get('error')})" if files else "")
            )
        index = bench.index(ws.id, embed_model)
        rows = [
            {**_page_row(index, q, k, mode), "doc_ingested": q["doc"] in ingested}
            for q in questions
        ]
    per_doc: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        per_doc[r["doc"]].append(r["hit"])
    return {
        "pdfs": str(pdfs),
        "k": k,
        "mode": mode,
        "files": files,
        "questions": len(rows),
        f"page_hit@{k}": round(mean(r["hit"] for r in rows), 4) if rows else 0.0,
        "mrr": round(mean(1 / r["rank"] if r["rank"] else 0 for r in rows), 4) if rows else 0.0,
        "by_doc": {
            d: {"questions": len(v), f"page_hit@{k}": round(mean(v), 4)}
            for d, v in sorted(per_doc.items())
        },
        "results": rows,
    }


def _page_row(index: Any, q: dict[str, Any], k: int, mode: Mode) -> dict[str, Any]:
    """One labelled question: where its gold page ranked, and what was retrieved."""
    found = retrieve(index, query_variants(q["question"], True), k, mode=mode)
    hit_rank = next(
        (
            n
            for n, c in enumerate(found, start=1)
            if page_hit(c.metadata, q["doc"], int(q["gold_page"]))
        ),
        None,
    )
    return {
        **q,
        "hit": hit_rank is not None,
        "rank": hit_rank,
        "retrieved": [
            f"{c.metadata.get('filename')} p.{c.metadata.get('page_start')}"
            f"-{c.metadata.get('page_end')}"
            for c in found
        ],
    }


def calibrate(
    bench: Workbench,
    ws_id: str,
    questions_file: Path,
    keep: float = 0.85,
    depth: int = 20,
) -> dict[str, Any]:
    """Score distributions of relevant vs irrelevant candidates in a real workspace, and the
    similarity threshold that keeps ``keep`` of the relevant ones."""
    from masis_core.retrieval.thresholds import threshold_for

    ws = bench.registry.require_workspace(ws_id)
    questions = load_page_questions(questions_file)
    dense: dict[bool, list[float]] = {True: [], False: []}
    coverage: dict[bool, list[float]] = {True: [], False: []}
    for q in questions:
        for c in retrieve(
            bench.index(ws.id, ws.embed_model),
            query_variants(q["question"], True),
            depth,
            mode="hybrid",
        ):
            relevant = page_hit(c.metadata, q["doc"], int(q["gold_page"]))
            dense[relevant].append(c.dense)
            coverage[relevant].append(c.coverage)
    if not dense[True]:
        raise InputError(
            "no relevant passage was retrieved for any question: check the 'doc' names and "
            "'gold_page' numbers against the workspace's documents"
        )
    pct = (5, 10, 25, 50, 75, 90)

    def dist(values: list[float]) -> dict[str, float]:
        return {f"p{p}": round(float(np.percentile(values, p)), 4) for p in pct} if values else {}

    threshold = round(float(np.percentile(dense[True], (1 - keep) * 100)), 3)
    current = threshold_for(ws.embed_model, 0)
    return {
        "workspace": ws.id,
        "embedder": ws.embed_model,
        "questions": len(questions),
        "relevant": len(dense[True]),
        "irrelevant": len(dense[False]),
        "similarity": {"relevant": dist(dense[True]), "irrelevant": dist(dense[False])},
        "keyword_coverage": {"relevant": dist(coverage[True]), "irrelevant": dist(coverage[False])},
        "keep": keep,
        "suggested_threshold": threshold,
        "irrelevant_kept_at_suggested": round(
            float(np.mean(np.asarray(dense[False]) >= threshold)), 4
        )
        if dense[False]
        else 0.0,
        "current_threshold": current,
        "relevant_kept_at_current": round(float(np.mean(np.asarray(dense[True]) >= current)), 4),
    }


def format_pages(report: dict[str, Any]) -> str:
    k = report["k"]
    failed = [f for f in report["files"] if f["status"] == "failed"]
    lines = [
        f"{len(report['files'])} files ingested from {report['pdfs']} ({len(failed)} failed), "
        f"{report['questions']} questions, mode {report['mode']}",
        f"page-hit@{k}: {report[f'page_hit@{k}']:.3f}   MRR: {report['mrr']:.3f}",
        "",
        f"{'document':40} | questions | page-hit@{k}",
    ]
    for doc, v in report["by_doc"].items():
        lines.append(f"{doc[:40]:40} | {v['questions']:9} | {v[f'page_hit@{k}']:.3f}")
    misses = [r for r in report["results"] if not r["hit"]]
    if misses:
        lines += ["", "misses:"]
        lines += [f"  {r['doc']} p.{r['gold_page']}: {r['question'][:70]}" for r in misses]
    return "\n".join(lines)


def format_calibration(report: dict[str, Any]) -> str:
    lines = [
        f"workspace {report['workspace']} ({report['embedder']}), {report['questions']} "
        f"questions: {report['relevant']} relevant and {report['irrelevant']} irrelevant "
        "candidates",
        "",
        f"{'percentile':>10} | {'similarity: relevant':>20} | {'irrelevant':>10} | "
        f"{'keyword coverage: relevant':>26} | {'irrelevant':>10}",
    ]
    sim, cov = report["similarity"], report["keyword_coverage"]
    for p in sim["relevant"]:
        lines.append(
            f"{p:>10} | {sim['relevant'][p]:20.3f} | {sim['irrelevant'].get(p, 0):10.3f} | "
            f"{cov['relevant'].get(p, 0):26.3f} | {cov['irrelevant'].get(p, 0):10.3f}"
        )
    lines += [
        "",
        f"threshold keeping {report['keep']:.0%} of relevant chunks: "
        f"{report['suggested_threshold']} (irrelevant kept: "
        f"{report['irrelevant_kept_at_suggested']:.0%})",
        f"current first-pass threshold: {report['current_threshold']} (relevant kept: "
        f"{report['relevant_kept_at_current']:.0%})",
    ]
    return "\n".join(lines)
