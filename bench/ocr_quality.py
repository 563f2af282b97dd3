"""OCR against real text: scanned copies of the manuals' pages, read back, compared.

    nice python -m bench.ocr_quality [--pdfs .pdf-corpus/manuals] [--pages 30] \
        [--questions bench/data/manual-answerable.json] [--max-questions 10] \
        [--engines rapidocr,tesseract] [--json]

Pages of the manuals (spread over each manual, ones with a real text layer) are rendered at
200 dpi with pypdfium2 and assembled into an image-only PDF (no text layer), every fifth page
turned 90 degrees and every seventh 180, as a scanner feeding pages the wrong way would. Each
engine reads that PDF through the real parse child (``ingest.isolate``); the table gives,
per engine, the character error rate against the original text layer (whitespace collapsed),
the rotated pages turned back correctly, pages/s and the child's peak memory.

Page-hit@5: for the first ``--max-questions`` questions of ``manual-answerable.json`` (the
issue names ``manual-questions.json``, which does not exist; this is the 53-question file
with gold pages), each manual contributes one document made of the gold pages and their
neighbours. The original slices, and the same slices as images read by each engine, are
ingested into workspaces of their own and the questions asked of each: the baseline is the
text-layer slices, in the same run.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium
from fpdf import FPDF

from evaluation.retrieval import load_page_questions, page_hit, query_variants
from ingest.isolate import ChildCall
from ingest.ocr import OCR_DPI, OcrOptions, resolve
from ingest.parsing import ParsedDocument, clean_text, parse_bytes, usable_text
from ingest.pipeline import Ingestor, Source
from masis_core.config import Settings
from masis_core.retrieval.hybrid import retrieve
from masis_core.services import Workbench

MIN_REFERENCE_CHARS = 300  # a sampled page has this much real text
ROTATED_READ_CER = 0.05  # a turned page counts as read when its own error rate is this low


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row per character of ``a``."""
    if not a or not b:
        return max(len(a), len(b))
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    cols = np.arange(len(b) + 1)
    row = cols.copy()
    codes = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32)
    for i, code in enumerate(codes, start=1):
        cost = (bb != code).astype(np.int64)
        tmp = np.empty_like(row)
        tmp[0] = i
        tmp[1:] = np.minimum(row[1:] + 1, row[:-1] + cost)
        row = np.minimum.accumulate(tmp - cols) + cols
    return int(row[-1])


def normalise(text: str) -> str:
    return " ".join(text.split())


def page_text(pdf: pdfium.PdfDocument, index: int) -> str:
    textpage = pdf[index].get_textpage()
    try:
        return clean_text(textpage.get_text_bounded())
    finally:
        textpage.close()


def sample_pages(pdfs: list[Path], total: int) -> list[tuple[Path, int]]:
    """``total`` pages with a real text layer, round-robin over the manuals, spread evenly
    over each (0-based indexes)."""
    per = max(1, -(-total // len(pdfs)))
    picks: dict[Path, list[int]] = {}
    for path in pdfs:
        pdf = pdfium.PdfDocument(str(path))
        try:
            n = len(pdf)
            step = max(1, n // (per * 3 + 1))
            chosen = []
            for index in range(step, n, step):
                text = page_text(pdf, index)
                if len(text) >= MIN_REFERENCE_CHARS and usable_text(text):
                    chosen.append(index)
                if len(chosen) == per:
                    break
            picks[path] = chosen
        finally:
            pdf.close()
    out: list[tuple[Path, int]] = []
    for k in range(per):
        out += [(p, idx[k]) for p, idx in picks.items() if k < len(idx)]
    return out[:total]


def image_pdf(pages: list[tuple[Path, int, int]]) -> bytes:
    """(file, page index, degrees turned clockwise) as one image-only PDF at ``OCR_DPI``."""
    out = FPDF(unit="pt")
    for path, index, turn in pages:
        pdf = pdfium.PdfDocument(str(path))
        try:
            page = pdf[index]
            width, height = page.get_size()
            image = page.render(scale=OCR_DPI / 72, grayscale=True).to_pil()
        finally:
            pdf.close()
        if turn:
            image = image.rotate(-turn, expand=True)  # PIL turns counter-clockwise
            if turn in (90, 270):
                width, height = height, width
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        out.add_page(format=(width, height))
        out.image(buf, x=0, y=0, w=width, h=height)
    return bytes(out.output())


def _parse_with_peak(
    data: bytes, ocr: OcrOptions, progress: Any
) -> tuple[ParsedDocument, float, float]:
    """Parse in the child and report its own peak memory (tesseract's in its children)."""
    parsed = parse_bytes(data, "scan.pdf", ocr, progress)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sub = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return parsed, own, sub


def read_scan(data: bytes, engine: str, pages: int) -> tuple[ParsedDocument, float, float]:
    ocr = OcrOptions(engine, page_timeout_s=600)  # nice'd on a shared machine: slow, not stuck
    started = time.monotonic()
    kind, payload = ChildCall(_parse_with_peak, (data, ocr), 600, 600 + 600).outcome()
    elapsed = time.monotonic() - started
    if kind != "ok":
        raise SystemExit(f"{engine}: the parse child ended with {kind}: {payload}")
    parsed, own, sub = payload
    return parsed, pages / elapsed, max(own, sub)


def quality(pdfs: list[Path], n_pages: int, engines: list[str]) -> dict[str, Any]:
    picked = sample_pages(pdfs, n_pages)
    turns = [90 if i % 5 == 4 else 180 if i % 7 == 6 else 0 for i in range(len(picked))]
    data = image_pdf([(p, i, t) for (p, i), t in zip(picked, turns, strict=True)])
    references = []
    for path, index in picked:
        pdf = pdfium.PdfDocument(str(path))
        try:
            references.append(normalise(page_text(pdf, index)))
        finally:
            pdf.close()
    out: dict[str, Any] = {"pages": len(picked), "rotated": sum(1 for t in turns if t)}
    for engine in engines:
        parsed, rate, peak = read_scan(data, engine, len(picked))
        got = {p.number: normalise(p.text) for p in parsed.pages}
        page_errors = [
            edit_distance(got.get(n, ""), ref) for n, ref in enumerate(references, start=1)
        ]
        errors = sum(page_errors)
        # Read correctly: the page's text came back (tesseract reads a sideways page without
        # being turned; rapidocr needs the turn), judged by its own error rate.
        upright = sum(
            1
            for e, t, ref in zip(page_errors, turns, references, strict=True)
            if t and e <= ROTATED_READ_CER * len(ref)
        )
        out[engine] = {
            "cer": round(errors / sum(len(r) for r in references), 4),
            "rotated_read": upright,
            "pages_per_s": round(rate, 3),
            "peak_mb": round(peak),
            "pages_with_text": len(parsed.pages),
        }
    return out


def slices(
    pdfs: Path, questions: list[dict[str, Any]]
) -> tuple[dict[str, list[int]], list[dict[str, Any]]]:
    """Per manual, the 0-based pages kept (gold pages and neighbours); questions with their
    gold page renumbered in the slice."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for q in questions:
        gold = int(q["gold_page"]) - 1
        wanted[q["doc"]] |= {gold - 1, gold, gold + 1}
    kept: dict[str, list[int]] = {}
    for doc, indexes in wanted.items():
        pdf = pdfium.PdfDocument(str(pdfs / doc))
        try:
            kept[doc] = sorted(i for i in indexes if 0 <= i < len(pdf))
        finally:
            pdf.close()
    renumbered = [
        {**q, "gold_page": kept[q["doc"]].index(int(q["gold_page"]) - 1) + 1} for q in questions
    ]
    return kept, renumbered


def text_slice(path: Path, indexes: list[int]) -> bytes:
    src = pdfium.PdfDocument(str(path))
    out = pdfium.PdfDocument.new()
    try:
        out.import_pages(src, indexes)
        buf = io.BytesIO()
        out.save(buf)
        return buf.getvalue()
    finally:
        out.close()
        src.close()


def page_hits(pdfs: Path, questions_file: Path, limit: int, engines: list[str]) -> dict:
    questions = load_page_questions(questions_file)[:limit]
    kept, renumbered = slices(pdfs, questions)
    variants: dict[str, dict[str, bytes]] = {"text layer": {}}
    for doc, indexes in kept.items():
        variants["text layer"][doc] = text_slice(pdfs / doc, indexes)
    out: dict[str, Any] = {"questions": len(questions), "pages": sum(map(len, kept.values()))}
    with tempfile.TemporaryDirectory(prefix="masis-ocr-bench-") as tmp:
        for name in ["text layer", *engines]:
            settings = Settings(data_dir=Path(tmp) / name, provider="offline")
            settings.ocr_engine = "off" if name == "text layer" else name  # type: ignore[assignment]
            settings.ocr_page_timeout_s = 600
            bench = Workbench(settings)
            ws = bench.registry.create_workspace("pages", "wordllama")
            sources = [
                Source.of_bytes(
                    doc,
                    variants["text layer"][doc]
                    if name == "text layer"
                    else image_pdf([(pdfs / doc, i, 0) for i in kept[doc]]),
                )
                for doc in kept
            ]
            for report in Ingestor(bench).ingest_each(ws, sources):
                print(f"  {name}: {report.line()}", file=sys.stderr)
            hits = []
            for q in renumbered:
                found = retrieve(
                    bench.index(ws.id, "wordllama"), query_variants(q["question"], True), 5
                )
                hits.append(any(page_hit(c.metadata, q["doc"], q["gold_page"]) for c in found))
            out[name] = round(float(np.mean(hits)), 4)
    return out


def format_table(report: dict[str, Any]) -> str:
    q, h = report["quality"], report["page_hit"]
    engines = report["engines"]
    rows = [
        ("measure", *engines),
        (f"CER vs text layer ({q['pages']} pages)", *(f"{q[e]['cer']:.2%}" for e in engines)),
        (
            f"turned pages read, CER <= 5% (of {q['rotated']})",
            *(str(q[e]["rotated_read"]) for e in engines),
        ),
        ("pages/s (one thread, nice'd)", *(f"{q[e]['pages_per_s']:.3f}" for e in engines)),
        ("peak MB of the parse child", *(str(q[e]["peak_mb"]) for e in engines)),
        (
            f"page-hit@5, {h['questions']} questions (text layer: {h['text layer']:.3f})",
            *(f"{h[e]:.3f}" for e in engines),
        ),
    ]
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{r[0]:<{width}}  " + "  ".join(f"{c:>10}" for c in r[1:]) for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ocr_quality")
    ap.add_argument("--pdfs", type=Path, default=Path(".pdf-corpus/manuals"))
    ap.add_argument("--pages", type=int, default=30)
    ap.add_argument("--questions", type=Path, default=Path("bench/data/manual-answerable.json"))
    ap.add_argument("--max-questions", type=int, default=10)
    ap.add_argument("--engines", default="rapidocr,tesseract")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--part", choices=["all", "quality", "pages"], default="all", help="run one half only"
    )
    args = ap.parse_args(argv)
    engines = [e for e in args.engines.split(",") if resolve(e) == e]  # type: ignore[arg-type]
    if not engines:
        print("error: none of the engines is installed", file=sys.stderr)
        return 2
    pdfs = sorted(args.pdfs.glob("*.pdf"))
    report: dict[str, Any] = {"engines": engines}
    if args.part in ("all", "quality"):
        report["quality"] = quality(pdfs, args.pages, engines)
    if args.part in ("all", "pages"):
        report["page_hit"] = page_hits(args.pdfs, args.questions, args.max_questions, engines)
    print(json.dumps(report, indent=2) if args.json or args.part != "all" else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
