"""Offline answers from table rows, against the composer without them, same data, same run.

    python -m bench.table_answers [--corpus .office-corpus] [--data DIR]
        [--questions bench/data/table_questions_dev.json ...] [--out rows.json]

The Debian reference's web pages and every CSV and spreadsheet of the office corpus
(``tests/fixtures/fetch-office-corpus.sh``) are ingested into one offline workspace (kept in
``--data`` so a second run skips it). Each question is then asked through the whole graph
(``RunService.ask``, retries included) twice: with the table rows as candidates
(``masis_core.answers.rows``) and without (the composer before them). Per question: whether
the lead (the answer's first paragraph) holds the answer's words and cites the question's
file, and whether the draft was answered without review (completed, confidence ≥ 0.65).

``table_questions_dev.json`` was used while building the rows; ``table_questions_heldout.json``
(rows drawn at random from other chapters and files, written before any of this code) was not.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

from bench.answer_quality import lead_of
from ingest.chunking import flat
from masis_core.answers import compose, sections
from masis_core.answers.confidence import LOW_CONFIDENCE
from masis_core.config import Settings
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    ROOT / "bench/data/table_questions_dev.json",
    ROOT / "bench/data/table_questions_heldout.json",
]


def corpus_files(corpus: Path) -> list[Path]:
    web = sorted((corpus / "html").glob("debian-reference-en__*.html"))
    return web + sorted((corpus / "csv").iterdir()) + sorted((corpus / "xlsx").iterdir())


@contextmanager
def without_rows() -> Iterator[None]:
    """The composer as it was before table rows: no chunk is a table, so no row is a
    candidate and a table's chunks are read as text. The drafts it composes are not left in
    ``sections``' memory of recent drafts: keyed by the question and its evidence, they were
    read back by the run with rows that follows on the same evidence, and "with rows" had
    measured the composer without them (every set's two columns equal since 69d7b04)."""
    with patch.object(compose, "table_of", lambda ev: None), patch.dict(sections._RECENT):
        sections._RECENT.clear()
        yield


def holds(lead: str, answer: str) -> bool:
    """The answer's words stand in the lead as words: "3" is not held by "63476"."""
    pattern = r"(?<![\w.])" + re.escape(flat(answer)) + r"(?!\w|\.\d)"
    return re.search(pattern, flat(lead), re.I) is not None


def ask(research: RunService, ws_id: str, q: dict[str, Any]) -> dict[str, Any]:
    rec = research.ask(ws_id, q["question"], engine="offline")
    answer = rec.answer or ""
    lead, cited = lead_of(answer, rec.citations or [])
    confidence = None if rec.confidence is None else float(rec.confidence)
    return {
        "lead_answers": holds(lead, q["answer"])
        and any(c.get("filename") == q["file"] for c in cited),
        "answered": rec.status == "completed" and (confidence or 0) >= LOW_CONFIDENCE,
        "confidence": confidence,
        "lead": lead,
    }


def share(rows: list[dict[str, Any]], key: str) -> str:
    hits = sum(bool(r[key]) for r in rows)
    return f"{hits / len(rows):.3f} ({hits}/{len(rows)})" if rows else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / ".office-corpus")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--questions", type=Path, nargs="+", default=QUESTIONS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="masis-tables-") as tmp:
        bench = Workbench(Settings.local(args.data or Path(tmp), provider="offline"))
        ws = bench.registry.get_workspace("tables")
        if ws is None:
            from ingest.pipeline import Ingestor

            ws = bench.registry.create_workspace("tables", "wordllama")
            ingestor = Ingestor(bench)
            for path in corpus_files(args.corpus):
                ingestor.ingest_path(ws, path)
        research = RunService(bench)
        rows = []
        for path in args.questions:
            for q in json.loads(path.read_text()):
                with without_rows():
                    before = ask(research, ws.id, q)
                after = ask(research, ws.id, q)
                rows.append({"set": path.stem, **q, "before": before, "after": after})
    print(f"{'set':<26} {'measure':<28} {'without rows':>16} {'with rows':>16}")
    for name in dict.fromkeys(r["set"] for r in rows):
        part = [r for r in rows if r["set"] == name]
        for key, label in (
            ("lead_answers", "lead holds the answer"),
            ("answered", "answered, no review"),
        ):
            was = share([r["before"] for r in part], key)
            now = share([r["after"] for r in part], key)
            print(f"{name:<26} {label:<28} {was:>16} {now:>16}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
