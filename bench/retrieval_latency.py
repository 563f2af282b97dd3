"""Retrieval latency at scale: our hybrid retrieval vs the raw searches it is built from.

    python -m bench.retrieval_latency [--chunks 100000] [--workspaces 1] [--cache DIR]
    python -m bench.retrieval_latency ... --cache DIR --chroma-server   # the same, served
    python -m bench.retrieval_latency ... --cache DIR --chroma-server --postgres URL

``--chunks`` chunks of real manual text (200-word windows over the manuals' words, at the
stride that yields the count) are spread over ``--workspaces`` workspaces, each in its own
Chroma collection, through the same store and keyword index the ingest pipeline writes; the
queries go to one of them. With ``--cache`` the built data dir (and the windows' embeddings)
is kept there and reused by the next run with the same settings — the build, not the queries,
is what takes minutes. ``--postgres URL`` (an empty database, or one this option filled
before) copies the build's registry and keyword rows there and reads them from PostgreSQL, as
server mode does (docs/team.md). Per query, embedding included in every column:

- raw Chroma kNN: ``collection.query`` top-10 on the workspace's collection, no filter;
- BM25 alone: the workspace's keyword index, top-10;
- raw kNN + BM25: both of them, for the same query variants ours sends (the floor for ours);
- ours, 1 and 3 variants: dense + BM25 + soft match + fusion + filters (``hybrid.retrieve``),
  the question alone and with the planner's two rephrasings. The soft match takes the pool's
  words from the keyword index (stored at ingest, numbered once per index build like the BM25
  index itself); its per-chunk cache of split texts, used only for rows without stored
  words, is emptied before each column;
- ours, 3 variants, again: the same retrieval repeated at once (what a run's retry or a
  follow-up meets).

Before the table: the first retrieval's time, which loads the keyword index and looks the
workspace's vocabulary up in the word table (embedding the words this process has not met).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import numpy as np
from pydantic import SecretStr

from bench.ingest_speed import DEFAULT_PDFS, find_pdfs
from evaluation.retrieval import query_variants
from ingest.parsing import parse_bytes
from masis_core.config import Settings
from masis_core.llm.embeddings import Embedder
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.store import chunk_id
from masis_core.storage.db import PostgresDatabase, SqliteDatabase
from masis_core.workspaces.workbench import Workbench

WINDOW = 200
BATCH = 2000
DOC_CHUNKS = 50  # chunks per synthetic document


def windows(pdfs: list[Path], count: int) -> list[str]:
    words = []
    for p in pdfs:
        for page in parse_bytes(p.read_bytes(), p.name).pages:
            words.extend(page.text.split())
    stride = max(1, (len(words) - WINDOW) // count)
    return [" ".join(words[i : i + WINDOW]) for i in range(0, stride * count, stride)][:count]


def corpus(
    pdfs: list[Path], count: int, embedder: Embedder, cache: Path | None
) -> tuple[list[str], np.ndarray]:
    """The windows and their WordLlama embeddings, from the cache when it has them."""
    stem = cache / f"windows-{count}" if cache is not None else None
    if stem is not None and stem.with_suffix(".npy").exists():
        return json.loads(stem.with_suffix(".json").read_text()), np.load(stem.with_suffix(".npy"))
    texts = windows(pdfs, count)
    vectors = np.concatenate(
        [embedder.embed_documents(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
    ).astype(np.float32)
    if stem is not None:
        stem.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".json").write_text(json.dumps(texts))
        np.save(stem.with_suffix(".npy"), vectors)
    return texts, vectors


def build(bench: Workbench, texts: list[str], vectors: np.ndarray, n_ws: int) -> None:
    """Each workspace gets an equal share, written as ingest writes: invisible chunks,
    keyword rows, then visibility."""
    share = len(texts) // n_ws
    for w in range(n_ws):
        ws = bench.registry.create_workspace(f"w{w:02d}", "wordllama")
        for b in range(w * share, (w + 1) * share, BATCH):
            end = min(b + BATCH, (w + 1) * share)
            docs = [f"doc{i // DOC_CHUNKS:05d}" for i in range(b, end)]
            ids = [chunk_id(ws.id, d, i) for i, d in zip(range(b, end), docs, strict=True)]
            metas = [
                {
                    "workspace_id": ws.id,
                    "doc_id": d,
                    "chunk_index": i,
                    "filename": "manuals",
                    "page_start": 1,
                    "page_end": 1,
                }
                for i, d in zip(range(b, end), docs, strict=True)
            ]
            bench.store.add_chunks("wordllama", ids, vectors[b:end], texts[b:end], metas)
            bench.bm25.add(ws.id, f"batch{b}", ids, texts[b:end])
            bench.store.make_visible("wordllama", ids)
        print(f"  built workspace {ws.id} ({share} chunks)", flush=True)


@contextmanager
def chroma_server(path: Path) -> Iterator[int]:
    """``chroma run`` on a free loopback port over an existing Chroma dir."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    chroma = Path(sys.executable).parent / "chroma"
    cmd = [str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chroma run did not start") from None
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def to_postgres(data_dir: Path, url: str) -> None:
    """The cached build's workspaces and keyword rows, copied into PostgreSQL once."""
    sqlite_db = SqliteDatabase(data_dir / "masis.db")
    pg = PostgresDatabase(url)
    with pg.connect() as conn:
        if conn.execute("SELECT count(*) FROM workspaces").fetchone()[0]:
            return
    tables = ("workspaces", "bm25_versions", "bm25_chunks")
    with sqlite_db.connect() as src, pg.connect() as dst:
        for table in tables:
            rows = src.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join("?" * len(rows[0]))
            dst.executemany(f"INSERT INTO {table} VALUES ({marks})", [tuple(r) for r in rows])
            print(f"  copied {len(rows)} {table} rows to PostgreSQL", flush=True)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--workspaces", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--pool",
        type=int,
        help="distinct windows (default: --chunks); fewer are repeated across workspaces, "
        "as when one manual sits in several, and reuse a cached pool's embeddings",
    )
    parser.add_argument("--cache", type=Path, help="keep the built data dir here and reuse it")
    parser.add_argument(
        "--chroma-server",
        action="store_true",
        help="query through `chroma run` serving the cached build's Chroma dir (build first)",
    )
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="read the registry and keyword rows from PostgreSQL (the cached build's, copied)",
    )
    return parser


def main() -> None:
    parser = make_parser()
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp, ExitStack() as stack:
        root = args.cache or Path(tmp)
        data_dir = root / f"data-{args.chunks}x{args.workspaces}"
        built = (data_dir / "built").exists()
        settings = backend_settings(parser, args, data_dir, built, stack)
        if not built:  # a build cut short starts over
            shutil.rmtree(data_dir, ignore_errors=True)
        bench = Workbench(settings)
        embedder = bench.embedder("wordllama")
        start = time.perf_counter()
        texts, vectors = chunk_texts(args, embedder)
        if not built:
            build(bench, texts, vectors, args.workspaces)
            (data_dir / "built").write_text("ok")
        build_s = time.perf_counter() - start
        share = len(texts) // args.workspaces
        target = args.workspaces // 2
        ws_id = f"w{target:02d}"
        questions = sample_questions(texts[target * share : (target + 1) * share], args.queries)
        first, results = measure(bench, embedder, ws_id, questions)
    where = "built" if not built else "reused"
    mode = f"Chroma server on port {settings.chroma_port}" if args.chroma_server else "embedded"
    mode += ", PostgreSQL" if args.postgres else ", SQLite"
    print(
        f"{mode}: {len(texts)} chunks over {args.workspaces} workspace(s), querying {ws_id} "
        f"({share} chunks; {where} in {build_s:.0f} s), {len(questions)} queries, top-10; "
        f"first retrieval (keyword index, word table) {first / 1000:.1f} s"
    )
    print_table(results)


def backend_settings(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    data_dir: Path,
    built: bool,
    stack: ExitStack,
) -> Settings:
    """Embedded by default; a Chroma server over the cached build's Chroma dir, and
    PostgreSQL with a copy of its rows, when asked (both need a cached build)."""
    settings = Settings(data_dir=data_dir, provider="offline")
    if args.chroma_server:
        if not built:
            parser.error("--chroma-server reads a cached build: run once with --cache only")
        port = stack.enter_context(chroma_server(data_dir / "chroma"))
        settings = Settings(
            data_dir=data_dir, provider="offline", chroma_host="127.0.0.1", chroma_port=port
        )
    if args.postgres:
        if not built:
            parser.error("--postgres reads a cached build: run once with --cache only")
        to_postgres(data_dir, args.postgres)
        settings = settings.model_copy(update={"postgres_url": SecretStr(args.postgres)})
    return settings


def chunk_texts(args: argparse.Namespace, embedder: Embedder) -> tuple[list[str], np.ndarray]:
    """``--chunks`` texts and their vectors: the pool of distinct windows, cycled."""
    pool = min(args.pool or args.chunks, args.chunks)
    texts, vectors = corpus(find_pdfs(args.pdfs), pool, embedder, args.cache)
    if pool < args.chunks:  # cycled: workspace w gets slice w of the pool, wrapping
        repeat = -(-args.chunks // pool)
        texts, vectors = (texts * repeat)[: args.chunks], np.tile(vectors, (repeat, 1))
        vectors = vectors[: args.chunks]
    return texts, vectors


def sample_questions(mine: list[str], count: int) -> list[str]:
    """Runs of 5-12 words from the queried workspace's own chunks (seeded)."""
    rng = random.Random(3)
    return [
        " ".join(rng.choice(mine).split()[s : s + rng.randint(5, 12)])
        for s in (rng.randrange(150) for _ in range(count))
    ]


def measure(
    bench: Workbench, embedder: Embedder, ws_id: str, questions: list[str]
) -> tuple[float, dict[str, list[float]]]:
    """The first retrieval's time, then each column's time per question."""
    col = bench.store.collection("wordllama", ws_id)
    keywords = bench.keyword_index(ws_id)

    def raw(q: str) -> None:
        col.query(
            query_embeddings=[embedder.embed_query(q)],
            n_results=10,
            include=["documents", "metadatas", "distances"],
        )

    def bm25(q: str) -> None:
        scores = keywords.scores(ws_id, q)
        if scores is not None:
            scores.top(10)

    def floor(q: str, variants: bool) -> None:
        qs = query_variants(q, variants)
        col.query(
            query_embeddings=[embedder.embed_query(v) for v in qs],
            n_results=10,
            include=["documents", "metadatas", "distances"],
        )
        for v in qs:
            bm25(v)

    def ours(q: str, variants: bool) -> None:
        retrieve(bench.index(ws_id, "wordllama"), query_variants(q, variants), 10, "hybrid")

    first = timed(lambda: ours(questions[0], True))
    for q in questions[:5]:  # warm caches and the keyword index once
        raw(q)
        ours(q, True)
    columns: dict[str, Callable[[str], None]] = {
        "raw Chroma kNN": raw,
        "BM25 alone": bm25,
        "raw kNN + BM25, 1 variant": lambda q: floor(q, False),
        "ours, 1 variant": lambda q: ours(q, False),
        "raw kNN + BM25, 3 variants": lambda q: floor(q, True),
        "ours, 3 variants": lambda q: ours(q, True),
        "ours, 3 variants, again": lambda q: ours(q, True),
    }
    results: dict[str, list[float]] = {name: [] for name in columns}
    for q in questions:  # interleaved, so drift hits every column alike
        for name, fn in columns.items():
            if not name.endswith("again"):
                bench.chunk_words.clear()
            results[name].append(timed(partial(fn, q)))
    return first, results


def print_table(results: dict[str, list[float]]) -> None:
    print(f"| {'':30} | {'p50 ms':>7} | {'p95 ms':>7} | {'p99 ms':>7} |")
    print(f"|{'-' * 32}|{'-' * 9}|{'-' * 9}|{'-' * 9}|")
    p95 = {}
    for name, values in results.items():
        p50, p95[name], p99 = np.percentile(values, [50, 95, 99])
        print(f"| {name:30} | {p50:7.1f} | {p95[name]:7.1f} | {p99:7.1f} |")
    for n in ("1 variant", "3 variants"):
        ratio = p95[f"ours, {n}"] / p95[f"raw kNN + BM25, {n}"]
        print(f"ours ({n}) p95 / (raw kNN + BM25) p95 = {ratio:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
