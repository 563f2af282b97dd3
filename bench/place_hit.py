"""Place-hit@5 over real Word, PowerPoint, Excel, CSV, HTML, EPUB and e-mail files, and ingest
throughput per kind.

    python -m bench.place_hit [--corpus .office-corpus] [--questions QUESTIONS.json]

The corpus is tests/fixtures/fetch-office-corpus.sh's. Every file of each kind is ingested
(CLI path: parse in a child, embed, store), timed per kind; then each question is retrieved
as the researcher does (hybrid, query variants) and counts as a hit when one of the top 5
passages is from its file, at a place whose label starts with the question's ``place`` and
holding its ``answer`` words: the citation would point at the right place.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from evaluation.retrieval import query_variants
from ingest.pipeline import Ingestor
from masis_core.config import Settings
from masis_core.retrieval.hybrid import retrieve
from masis_core.workspaces.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("docx", "pptx", "xlsx", "csv", "html", "epub", "eml")


def ingest_kinds(bench: Workbench, ws_id: str, corpus: Path) -> dict[str, dict[str, Any]]:
    ws = bench.registry.get_workspace(ws_id)
    assert ws is not None
    ingestor = Ingestor(bench)
    speed: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        paths = sorted(p for p in (corpus / kind).iterdir() if p.is_file())
        started = time.perf_counter()
        reports = [ingestor.ingest_path(ws, p) for p in paths]
        seconds = time.perf_counter() - started
        size = sum(p.stat().st_size for p in paths)
        by_status: dict[str, int] = defaultdict(int)
        for r in reports:
            by_status[r.status] += 1
        speed[kind] = {
            "files": len(paths),
            **by_status,
            "chunks": sum(r.chunks for r in reports),
            "MB": round(size / 2**20, 2),
            "seconds": round(seconds, 2),
            "files_per_s": round(len(paths) / seconds, 2),
            "MB_per_s": round(size / 2**20 / seconds, 3),
            "failures": sorted({(r.error or "").split(" (")[0] for r in reports if r.error}),
        }
    return speed


def place_hits(bench: Workbench, ws_id: str, questions: list[dict[str, str]]) -> list[dict]:
    rows = []
    for q in questions:
        found = retrieve(
            bench.index(ws_id, "wordllama"), query_variants(q["question"], True), 5, mode="hybrid"
        )
        rank = next(
            (
                n
                for n, c in enumerate(found, start=1)
                if c.metadata.get("filename") == q["file"]
                and str(c.metadata.get("place", "")).startswith(q["place"])
                and q["answer"] in c.text
            ),
            None,
        )
        rows.append(
            {
                **q,
                "hit": rank is not None,
                "rank": rank,
                "retrieved": [
                    f"{c.metadata.get('filename')}: {c.metadata.get('place')}" for c in found
                ],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / ".office-corpus")
    parser.add_argument("--questions", type=Path, default=ROOT / "bench/data/place_questions.json")
    args = parser.parse_args()
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="masis-place-") as tmp:
        bench = Workbench(Settings.local(Path(tmp), provider="offline"))
        ws = bench.registry.create_workspace("places", "wordllama")
        speed = ingest_kinds(bench, ws.id, args.corpus)
        rows = place_hits(bench, ws.id, questions)
    hits = [r["hit"] for r in rows]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by_kind[r["file"].rsplit(".", 1)[-1]].append(r["hit"])
    result = {
        "questions": len(rows),
        "place_hit@5": round(sum(hits) / len(hits), 3),
        "by_kind": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())},
        "ingest": speed,
        "misses": [r for r in rows if not r["hit"]],
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
