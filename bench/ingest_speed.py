"""Ingest speed: our pipeline vs the LangChain-standard one vs the limit, same PDFs, same run.

    pip install -r requirements.txt -r bench/requirements.txt
    bash ../shared/scripts/fetch-pdf-corpus.sh .pdf-corpus
    python -m bench.ingest_speed [--pdfs .pdf-corpus/manuals]

- ours: ``ingest.pipeline.Ingestor`` into a fresh data dir (parse in a child process, clean,
  chunk, embed, Chroma, BM25 rows, publish);
- baseline: ``PyPDFLoader`` + ``RecursiveCharacterTextSplitter(1000, 200)`` + LangChain's Chroma
  vector store, with the *same* embedder (ours wrapped as LangChain ``Embeddings``), so only
  the pipeline differs;
- limit: text extraction alone + embedding alone + store writes alone, for our content;
- OCR alone: the pages without a usable text layer read by the OCR engine, one after the other
  (ours reads them in a second process while the batch embeds; the limit leaves them out).

Each variant runs in its own process (so peak memory is its own); the table compares them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PDFS = Path(os.environ.get("MASIS_PDF_CORPUS", ROOT / ".pdf-corpus")) / "manuals"


def find_pdfs(folder: Path) -> list[Path]:
    """The folder's PDFs, or exit with how to get them (a benchmark over nothing misleads)."""
    pdfs = sorted(folder.glob("*.pdf"))
    if not pdfs:
        sys.exit(f"no PDFs in {folder}: run ../shared/scripts/fetch-pdf-corpus.sh first")
    return pdfs


def load() -> float:
    """The machine's load average over the last minute (what else was running)."""
    return round(os.getloadavg()[0], 2)


def shown_load(r: dict[str, Any]) -> str:
    """'load 1.9–2.4': the 1-minute load when the variant started and ended."""
    first, last = r.get("load") or [load(), load()]
    return (
        f"load {first:.1f}" if f"{first:.1f}" == f"{last:.1f}" else f"load {first:.1f}–{last:.1f}"
    )


def report(results: dict[str, dict[str, Any]], n_pdfs: int, folder: Path) -> list[str]:
    """The comparison, the machine's load beside every figure: the ratio to the baseline
    swung from 3.3x to 6.0x between runs with the load of other work on the machine."""
    ours, base, limit = results["ours"], results["baseline"], results["limit"]
    lines = [
        f"{n_pdfs} PDFs from {folder}, {os.cpu_count()} cores, load now {load():.1f}",
        f"{'':10} | {'wall s':>8} | {'pages':>6} | {'pages/s':>8} | {'chunks':>7} | "
        f"{'chunks/s':>8} | {'peak MB':>8} | machine",
    ]
    for name, r in results.items():
        lines.append(
            f"{name:10} | {r['wall_s']:8.2f} | {r['pages']:6} | {r['pages'] / r['wall_s']:8.1f} | "
            f"{r['chunks']:7} | {r['chunks'] / r['wall_s']:8.1f} | {r['peak_mb']:8.0f} | "
            f"{shown_load(r)}"
        )
    if limit["ocr_pages"]:
        name = f"OCR alone ({limit['ocr_pages']} pages, {limit['ocr_engine']})"
        pages_s = limit["ocr_pages"] / max(limit["ocr_s"], 1e-9)
        lines.append(
            f"{name:10} | {limit['ocr_s']:8.2f} | {limit['ocr_pages']:6} | {pages_s:8.2f} | "
            f"{shown_load(limit)}"
        )
    speed_up = (ours["pages"] / ours["wall_s"]) / (base["pages"] / base["wall_s"])
    both = f"ours {shown_load(ours)}, baseline {shown_load(base)}"
    return [
        *lines,
        f"\nlimit = extract {limit['extract_s']:.2f} s + embed {limit['embed_s']:.2f} s + "
        f"store {limit['store_s']:.2f} s (OCR, {limit['ocr_s']:.2f} s alone, left out) "
        f"({shown_load(limit)})",
        f"speed-up over the baseline (pages/s): {speed_up:.1f}x ({both})",
        f"efficiency (limit time / our time): {limit['wall_s'] / ours['wall_s']:.2f} "
        f"(ours {shown_load(ours)}, limit {shown_load(limit)})",
    ]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(pdfs: list[Path], tmp: Path) -> dict[str, Any]:
    from ingest.pipeline import Ingestor, Source
    from masis_core.config import Settings
    from masis_core.workspaces.workbench import Workbench

    bench = Workbench(Settings.local(tmp / "data", provider="offline"))
    ws = bench.create_workspace("bench", "wordllama")
    bench.embedder("wordllama")  # model load is not ingest time
    ingestor = Ingestor(bench)
    start = time.perf_counter()
    reports = list(ingestor.ingest_each(ws, [Source.of_path(p) for p in pdfs]))
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "pages": sum(r.pages for r in reports),
        "chunks": sum(r.chunks for r in reports),
        "failed": [r.file for r in reports if r.status == "failed"],
    }


def run_baseline(pdfs: list[Path], tmp: Path) -> dict[str, Any]:
    import chromadb
    from langchain_chroma import Chroma
    from langchain_community.document_loaders import PyPDFLoader
    from langchain_core.embeddings import Embeddings
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from masis_core.config import Settings
    from masis_core.llm.embeddings import get_embedder

    embedder = get_embedder("wordllama", Settings())

    class SameEmbedder(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_query(text).tolist()

    client = chromadb.PersistentClient(
        path=str(tmp / "chroma"),
        settings=chromadb.config.Settings(anonymized_telemetry=False),
    )
    store = Chroma("baseline", embedding_function=SameEmbedder(), client=client)
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    start = time.perf_counter()
    pages = chunks = 0
    for path in pdfs:
        docs = PyPDFLoader(str(path)).load()
        pieces = splitter.split_documents(docs)
        for i in range(0, len(pieces), 1000):
            store.add_documents(pieces[i : i + 1000])
        pages += len(docs)
        chunks += len(pieces)
    return {"wall_s": time.perf_counter() - start, "pages": pages, "chunks": chunks, "failed": []}


def run_limit(pdfs: list[Path], tmp: Path) -> dict[str, Any]:
    """The three unavoidable costs, each measured alone on our own content."""
    import numpy as np

    from ingest.chunking import chunk_pages
    from ingest.ocr import OcrOptions
    from ingest.parsing import no_progress, parse_bytes, read_scans, with_scans
    from masis_core.config import Settings
    from masis_core.retrieval.store import VectorStore

    settings = Settings.local(tmp / "data", provider="offline")
    from masis_core.llm.embeddings import get_embedder

    embedder = get_embedder("wordllama", settings)
    datas = [(p.name, p.read_bytes()) for p in pdfs]
    t0 = time.perf_counter()
    parsed = [parse_bytes(data, name, OcrOptions(), no_progress, True) for name, data in datas]
    scanned = {name: doc.ocr_pending for (name, _), doc in zip(datas, parsed, strict=True)}
    parsed = [with_scans(doc) if doc.ocr_pending else doc for doc in parsed]
    t_extract = time.perf_counter() - t0
    t0 = time.perf_counter()
    read = [
        read_scans(data, name, scanned[name], OcrOptions()) for name, data in datas if scanned[name]
    ]
    t_ocr = time.perf_counter() - t0
    texts = [
        c.text
        for doc in parsed
        for c in chunk_pages(doc.pages, settings.chunk_words, settings.chunk_overlap_words)
    ]
    t0 = time.perf_counter()
    vectors = np.concatenate(
        [embedder.embed_documents(texts[i : i + 256]) for i in range(0, len(texts), 256)]
    )
    t_embed = time.perf_counter() - t0
    store = VectorStore(settings)
    ids = [f"limit/{i:08d}" for i in range(len(texts))]
    metas = [{"workspace_id": "limit", "doc_id": "d", "chunk_index": i} for i in range(len(ids))]
    t0 = time.perf_counter()
    store.add_chunks("wordllama", ids, vectors, texts, metas)
    t_store = time.perf_counter() - t0
    return {
        "wall_s": t_extract + t_embed + t_store,
        "extract_s": t_extract,
        "embed_s": t_embed,
        "store_s": t_store,
        "ocr_s": t_ocr,
        "ocr_pages": sum(len(r.ocr_pages) for r in read),
        "ocr_engine": ", ".join(sorted({r.ocr_engine or "none" for r in read})),
        "pages": sum(d.page_count for d in parsed),
        "chunks": len(texts),
        "failed": [],
    }


VARIANTS = {"ours": run_ours, "baseline": run_baseline, "limit": run_limit}


def child(variant: str, pdfs: list[Path]) -> None:
    import logging

    logging.basicConfig(level=logging.ERROR)
    before = load()
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        result = VARIANTS[variant](pdfs, Path(tmp))
    result["peak_mb"] = peak_mb()
    # The machine's 1-minute load before and after the variant ran: a figure measured on a
    # busy machine (another user's job) reads slower, and a ratio swings with it.
    result["load"] = [before, load()]
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--variant", choices=list(VARIANTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    pdfs = find_pdfs(args.pdfs)
    if args.variant:
        child(args.variant, pdfs)
        return
    results = {}
    for variant in VARIANTS:
        print(f"running {variant} …", file=sys.stderr)
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.ingest_speed",
                "--pdfs",
                str(args.pdfs),
                "--variant",
                variant,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        results[variant] = json.loads(out.stdout.strip().splitlines()[-1])
    print("\n".join(report(results, len(pdfs), args.pdfs)))


if __name__ == "__main__":
    main()
