"""OCR against real text: scanned copies of the manuals' pages, read back, compared.

    nice python -m bench.ocr_quality [--pdfs .pdf-corpus/manuals] [--pages 30] \
        [--questions bench/data/manual-answerable.json] [--max-questions 10] \
        [--engines rapidocr,tesseract] [--part all|quality|pages|memory] [--worst N] \
        [--scan-pages 500] [--json]

Pages of the manuals (spread evenly over each manual and shared out round-robin; ones with a
real text layer and no picture, whose words the text layer would lack) are rendered at 200
dpi with pypdfium2 and assembled into an image-only PDF (no text layer), every fifth page
turned 90 degrees and every seventh 180, as a scanner feeding pages the wrong way would. Each
engine reads that PDF through the real parse child (``ingest.isolate``); the table gives,
per engine, the character error rate against the original text layer, the rotated pages
turned back correctly, pages/s and the child's peak memory.

Two error rates. *Raw*: edit distance between the whitespace-collapsed texts, over the
reference's length. *Normalised* (``page_errors``): both sides folded the same way
(``fold_lines``: accents, quotes and dashes, dot leaders, a line's list bullet), then the
OCR lines compared as read or put in the reference's reading order (``reading_order``: each
OCR line goes where the reference line sharing most of its character trigrams is), whichever
is closer. Reordering moves whole lines and never changes a character, so every misread,
missing or extra character still counts; only a block read before another stops counting.
``--worst N`` prints the N worst pages' line diffs to stderr.

``--part memory``: a scan of ``--scan-pages`` pages (50 real pages over and over, each copy
its own JPEG picture) ingested with OCR through the pipeline; the parse child's memory is
read from /proc every 50 pages (``memory``).

Page-hit@5: for the first ``--max-questions`` questions of ``manual-answerable.json`` (the
issue names ``manual-questions.json``, which does not exist; this is the 53-question file
with gold pages), each manual contributes one document made of the gold pages and their
neighbours. The original slices, and the same slices as images read by each engine, are
ingested into workspaces of their own and the questions asked of each: the baseline is the
text-layer slices, in the same run.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import re
import resource
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from fpdf import FPDF
from PIL import Image, ImageDraw

from evaluation.retrieval import load_page_questions, page_hit, query_variants
from ingest.isolate import ChildCall
from ingest.ocr import OCR_DPI, EngineName, OcrOptions, resolve
from ingest.parsing import ParsedDocument, clean_text, parse_bytes, usable_text
from ingest.pipeline import Ingestor, Source
from masis_core.config import Settings
from masis_core.retrieval.hybrid import retrieve
from masis_core.workspaces.workbench import Workbench

MIN_REFERENCE_CHARS = 300  # a sampled page has this much real text
ROTATED_READ_CER = 0.05  # a turned page counts as read when its own error rate is this low
# A page read in the wrong orientation comes back as noise or nothing (error rate near 1): below
# this its text was found the right way up, whatever its content's own difficulty.
ORIENTED_CER = 0.5


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
    """Whitespace collapsed: the raw CER compares this."""
    return " ".join(text.split())


# Glyph classes a scan cannot tell apart, or that the text layer spells differently from what
# is printed: typographic quotes, dashes, bullets. Both sides are mapped the same way.
_FOLD = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032`\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
# A list bullet at a line's start: the text layer has "\u2022", tesseract "+", "*", "e" or
# nothing. Dropped on both sides (a leading dash is folded to "-" first, then dropped).
# Accents: the text layer of a LaTeX manual spells "Br\u00f6ker" as "Br \u0308oker" (a spacing
# diaeresis), OCR as "Broker" or "Br\u00f6ker". Combining marks, and a space before one, go.
_ACCENT = re.compile(r"\s?[\u0300-\u036f]")
# A dot leader (". . . . 44" in a table of contents): the text layer has a hundred dots, OCR
# a few or "2... ee". Any run of three or more dots becomes one space on both sides.
_LEADER = re.compile(r"(?:\.\s?){3,}")
_BULLET = re.compile(r"^[\u2022\u25aa\u25e6\u2023\u2219\u00b7\u00a9*+oe-]\s+")


def fold_lines(text: str) -> list[str]:
    """The page's non-empty lines, each without accents, NFKC-normalised (ligatures), quotes
    and dashes folded, dot leaders and a leading list bullet dropped, whitespace collapsed."""
    out = []
    text = _ACCENT.sub("", unicodedata.normalize("NFKD", text))
    for raw in unicodedata.normalize("NFKC", text).translate(_FOLD).split("\n"):
        line = _BULLET.sub("", " ".join(_LEADER.sub(" ", raw).split()))
        if line:
            out.append(line)
    return out


def _trigrams(line: str) -> set[str]:
    s = f"  {line.lower()} "
    return {s[i : i + 3] for i in range(len(s) - 2)}


def reading_order(ocr: list[str], reference: list[str]) -> list[str]:
    """The OCR lines put in the reference's order, nothing else changed.

    Each OCR line gets the position of the reference line it shares the most character
    trigrams with (Jaccard); a line sharing none keeps its place after the line before it.
    The lines are then stably sorted by that position. No character is added, dropped or
    altered, so every misread, missing or extra character still counts: only a block read
    before another (a side-bar, a table's columns, a figure's labels) stops counting.
    """
    refs = [_trigrams(r) for r in reference]
    keyed: list[tuple[float, int, str]] = []
    last = -1.0
    for i, line in enumerate(ocr):
        grams = _trigrams(line)
        best, where = 0.0, None
        for j, ref in enumerate(refs):
            score = len(grams & ref) / len(grams | ref)
            if score > best:
                best, where = score, j
        last = float(where) if where is not None else last + 1e-3
        keyed.append((last, i, line))
    return [line for _, _, line in sorted(keyed)]


def page_errors(got: str, reference: str) -> tuple[int, int, int]:
    """(raw errors, reading-order-normalised errors, reference length) for one page.

    Raw: edit distance of the whitespace-collapsed texts, as read. Normalised: both sides
    folded the same way (``fold_lines``), joined with spaces and compared, with the OCR lines
    as read or reordered (``reading_order``), whichever is closer (a short line such as a
    lone page number can be matched to the wrong place); its denominator is the folded
    reference's length (shorter by the dot leaders).
    """
    raw = edit_distance(normalise(got), normalise(reference))
    ref_lines, got_lines = fold_lines(reference), fold_lines(got)
    folded_ref = " ".join(ref_lines)
    as_read = edit_distance(" ".join(got_lines), folded_ref)
    ordered = edit_distance(" ".join(reading_order(got_lines, ref_lines)), folded_ref)
    return raw, min(as_read, ordered), len(folded_ref)


def page_text(pdf: pdfium.PdfDocument, index: int) -> str:
    textpage = pdf[index].get_textpage()
    try:
        return clean_text(textpage.get_text_bounded())
    finally:
        textpage.close()


def _has_picture(page: pdfium.PdfPage) -> bool:
    return (
        next(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3), None) is not None
    )


def sample_pages(pdfs: list[Path], total: int) -> list[tuple[Path, int]]:
    """``total`` pages with a real text layer and no picture, spread evenly over each manual
    and shared out round-robin, so a short manual gives all it has and the long ones the rest
    (0-based indexes). A page with a picture is left out: the words in a screenshot or a
    scanned figure are read by OCR but are not in the text layer, so they would count as
    errors."""
    candidates: dict[Path, list[int]] = {}
    for path in pdfs:
        pdf = pdfium.PdfDocument(str(path))
        try:
            n = len(pdf)
            ok = []
            for index in range(0, n, max(1, n // total)):
                page = pdf[index]
                try:
                    if _has_picture(page):
                        continue
                finally:
                    page.close()
                text = page_text(pdf, index)
                if len(text) >= MIN_REFERENCE_CHARS and usable_text(text):
                    ok.append(index)
            candidates[path] = ok
        finally:
            pdf.close()
    share = dict.fromkeys(pdfs, 0)
    left = total
    while left and any(share[p] < len(candidates[p]) for p in pdfs):
        for p in pdfs:
            if left and share[p] < len(candidates[p]):
                share[p] += 1
                left -= 1
    # The middle of each of ``share`` equal stretches: not always the first page (a contents page).
    spread = {
        p: [c[(2 * k + 1) * len(c) // (2 * share[p])] for k in range(share[p])]
        for p, c in candidates.items()
    }
    out: list[tuple[Path, int]] = []
    for k in range(max(share.values(), default=0)):
        out += [(p, idx[k]) for p, idx in spread.items() if k < len(idx)]
    return out


def render(path: Path, index: int) -> tuple[Image.Image, float, float]:
    """The page as a grayscale picture at ``OCR_DPI``, and its size in points."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[index]
        width, height = page.get_size()
        return page.render(scale=OCR_DPI / 72, grayscale=True).to_pil(), width, height
    finally:
        pdf.close()


def image_pdf(pages: list[tuple[Path, int, int]]) -> bytes:
    """(file, page index, degrees turned clockwise) as one image-only PDF at ``OCR_DPI``."""
    out = FPDF(unit="pt")
    for path, index, turn in pages:
        image, width, height = render(path, index)
        if turn:
            image = image.rotate(-turn, expand=True)  # PIL turns counter-clockwise
            if turn in (90, 270):
                width, height = height, width
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        out.add_page(format=(width, height))
        out.image(buf, x=0, y=0, w=width, h=height)
    return bytes(out.output())


def long_scan(pdfs: list[Path], n_pages: int, distinct: int = 50) -> bytes:
    """An image-only PDF of ``n_pages``: ``distinct`` real manual pages over and over, each
    copy stamped with its own page number (so each page is its own picture, as in a real
    scan, not one shared image) and stored as JPEG, as scanners do (about 0.3 MB a page)."""
    sources = [render(p, i) for p, i in sample_pages(pdfs, distinct)]
    out = FPDF(unit="pt")
    for n in range(n_pages):
        image, width, height = sources[n % len(sources)]
        page = image.copy()
        ImageDraw.Draw(page).text((20, page.height - 30), f"scan page {n + 1}", fill=0)
        buf = io.BytesIO()
        page.save(buf, format="JPEG", quality=85)
        out.add_page(format=(width, height))
        out.image(buf, x=0, y=0, w=width, h=height)
    return bytes(out.output())


def _status_mb(pid: int) -> dict[str, float]:
    """A process's memory in MB, from /proc: VmRSS and VmHWM (its peak) count the pages it
    shares with the parent it was forked from (the scan's bytes, the parent's models);
    Private (Private_Clean + Private_Dirty of smaps_rollup) is what it holds alone."""
    out: dict[str, float] = {}
    for name, keys in (
        ("status", ("VmRSS", "VmHWM")),
        ("smaps_rollup", ("Private_Clean", "Private_Dirty")),
    ):
        with open(f"/proc/{pid}/{name}") as lines:
            for line in lines:
                key, _, value = line.partition(":")
                if key in keys:
                    out[key] = int(value.split()[0]) / 1024
    if "Private_Clean" in out:
        out["Private"] = out.pop("Private_Clean") + out.pop("Private_Dirty", 0.0)
    return out


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def memory(pdfs: list[Path], n_pages: int, engine: EngineName, every: int = 50) -> dict[str, Any]:
    """Ingest a ``long_scan`` of ``n_pages`` with OCR through the real pipeline (one parse
    child for the file, as in the app); at every ``every`` pages OCRed, the child's resident
    and peak memory (VmRSS, VmHWM from /proc: the parse child itself, not the short-lived
    tesseract process it runs per page). Printed to stderr as it goes."""
    data = long_scan(pdfs, n_pages)
    samples: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="masis-ocr-memory-") as tmp:
        settings = Settings.local(Path(tmp), provider="offline")
        settings.ocr_engine = engine
        settings.ocr_page_timeout_s = 600
        settings.max_upload_mb = max(settings.max_upload_mb, len(data) // 2**20 + 1)
        bench = Workbench(settings)
        ws = bench.registry.create_workspace("scan", "wordllama")

        def on_start(_i: int, _source: Source) -> Any:
            def progress(stage: str, done: int, total: int) -> None:
                # Not at the very end: the child is then sending its result and exiting.
                if stage != "OCR pages" or not (done % every == 0 or done == total - 1):
                    return
                for pid in _children():
                    try:
                        mb = _status_mb(pid)
                    except OSError:  # the child has just ended
                        continue
                    if not mb:
                        continue
                    row = {"pages": done, "s": round(time.monotonic() - started)}
                    row |= {k: round(v) for k, v in mb.items()}
                    samples.append(row)
                    print(f"  memory: {row}", file=sys.stderr, flush=True)

            return progress

        (report,) = Ingestor(bench).ingest_each(ws, [Source.of_bytes("scan.pdf", data)], on_start)
    return {
        "engine": engine,
        "pages": n_pages,
        "scan_mb": round(len(data) / 2**20, 1),
        "status": report.status,
        "ocr_pages": len(report.ocr_pages),
        "chunks": report.chunks,
        "seconds": round(time.monotonic() - started),
        "child": samples,
        "parent_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _parse_with_peak(
    data: bytes, ocr: OcrOptions, progress: Any
) -> tuple[ParsedDocument, float, float]:
    """Parse in the child and report its own peak memory (tesseract's in its children)."""
    parsed = parse_bytes(data, "scan.pdf", ocr, progress)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sub = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return parsed, own, sub


def read_scan(data: bytes, engine: EngineName, pages: int) -> tuple[ParsedDocument, float, float]:
    # nice'd on a shared machine: slow, not stuck
    ocr = OcrOptions(engine, page_timeout_s=600)
    started = time.monotonic()
    kind, payload = ChildCall(_parse_with_peak, (data, ocr), 600, 600 + 600).outcome()
    elapsed = time.monotonic() - started
    if kind != "ok":
        raise SystemExit(f"{engine}: the parse child ended with {kind}: {payload}")
    parsed, own, sub = payload
    return parsed, pages / elapsed, max(own, sub)


def show_worst(engine: str, rows: list[tuple[float, str, int, str, str]], n: int) -> None:
    """The ``n`` pages with the highest normalised error rate, with a line diff (folded and
    reordered OCR against the folded reference), on stderr."""
    for rate, name, index, got, ref in sorted(rows, reverse=True)[:n]:
        print(f"--- {engine}: {name} page {index + 1}, normalised CER {rate:.2%}", file=sys.stderr)
        ref_lines = fold_lines(ref)
        ours = reading_order(fold_lines(got), ref_lines)
        for line in difflib.unified_diff(ref_lines, ours, "text layer", engine, n=0, lineterm=""):
            print("   " + line, file=sys.stderr)


def quality(
    pdfs: list[Path], n_pages: int, engines: list[EngineName], worst: int = 0
) -> dict[str, Any]:
    picked = sample_pages(pdfs, n_pages)
    turns = [90 if i % 5 == 4 else 180 if i % 7 == 6 else 0 for i in range(len(picked))]
    data = image_pdf([(p, i, t) for (p, i), t in zip(picked, turns, strict=True)])
    references = []
    for path, index in picked:
        pdf = pdfium.PdfDocument(str(path))
        try:
            references.append(page_text(pdf, index))
        finally:
            pdf.close()
    out: dict[str, Any] = {
        "pages": len(picked),
        "manuals": len({p for p, _ in picked}),
        "rotated": sum(1 for t in turns if t),
        "scan_mb": round(len(data) / 2**20, 1),
    }
    for engine in engines:
        parsed, rate, peak = read_scan(data, engine, len(picked))
        got = {p.number: p.text for p in parsed.pages}
        raw = norm = raw_len = norm_len = 0
        rotated_read = rotated_oriented = upright_read = 0
        rows = []
        for n, (ref, turn, (path, index)) in enumerate(
            zip(references, turns, picked, strict=True), start=1
        ):
            e_raw, e_norm, length = page_errors(got.get(n, ""), ref)
            raw, norm = raw + e_raw, norm + e_norm
            raw_len, norm_len = raw_len + len(normalise(ref)), norm_len + length
            rows.append((e_norm / length, path.name, index, got.get(n, ""), ref))
            # Read correctly: the page's text came back in the right orientation, judged by
            # its own (normalised) error rate.
            rotated_read += bool(turn) and e_norm <= ROTATED_READ_CER * length
            rotated_oriented += bool(turn) and e_norm <= ORIENTED_CER * length
            upright_read += not turn and e_norm <= ROTATED_READ_CER * length
        show_worst(engine, rows, worst)
        out[engine] = {
            "cer_raw": round(raw / raw_len, 4),
            "cer": round(norm / norm_len, 4),
            "rotated_read": rotated_read,
            "rotated_oriented": rotated_oriented,
            "upright_read": upright_read,
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


def page_hits(pdfs: Path, questions_file: Path, limit: int, engines: list[EngineName]) -> dict:
    questions = load_page_questions(questions_file)[:limit]
    kept, renumbered = slices(pdfs, questions)
    variants: dict[str, dict[str, bytes]] = {"text layer": {}}
    for doc, indexes in kept.items():
        variants["text layer"][doc] = text_slice(pdfs / doc, indexes)
    out: dict[str, Any] = {"questions": len(questions), "pages": sum(map(len, kept.values()))}
    with tempfile.TemporaryDirectory(prefix="masis-ocr-bench-") as tmp:
        for name in ["text layer", *engines]:
            settings = Settings.local(Path(tmp) / name, provider="offline")
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
    engines = report["engines"]
    rows: list[tuple[str, ...]] = [("measure", *engines)]
    if "quality" in report:
        q = report["quality"]
        pages = f"{q['pages']} pages of {q['manuals']} manuals"
        rows += [
            (f"CER raw vs text layer ({pages})", *(f"{q[e]['cer_raw']:.2%}" for e in engines)),
            ("CER, reading order and glyphs normalised", *(f"{q[e]['cer']:.2%}" for e in engines)),
            (
                f"turned pages read, CER <= 5% (of {q['rotated']})",
                *(str(q[e]["rotated_read"]) for e in engines),
            ),
            (
                f"turned pages found the right way up, CER <= 50% (of {q['rotated']})",
                *(str(q[e]["rotated_oriented"]) for e in engines),
            ),
            (
                f"upright pages, CER <= 5% (of {q['pages'] - q['rotated']})",
                *(str(q[e]["upright_read"]) for e in engines),
            ),
            ("pages/s (one thread, nice'd)", *(f"{q[e]['pages_per_s']:.3f}" for e in engines)),
            ("peak MB of the parse child", *(str(q[e]["peak_mb"]) for e in engines)),
        ]
    if "page_hit" in report:
        h = report["page_hit"]
        rows.append(
            (
                f"page-hit@5, {h['questions']} questions (text layer: {h['text layer']:.3f})",
                *(f"{h[e]:.3f}" for e in engines),
            )
        )
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
    ap.add_argument("--worst", type=int, default=0, help="diff this many worst pages to stderr")
    ap.add_argument(
        "--part",
        choices=["all", "quality", "pages", "memory"],
        default="all",
        help="one part only (memory: not part of all)",
    )
    ap.add_argument("--scan-pages", type=int, default=500, help="pages of --part memory's scan")
    args = ap.parse_args(argv)
    # resolve() is the identity on an installed engine's name only: the rest are dropped.
    engines: list[EngineName] = [e for e in args.engines.split(",") if resolve(e) == e]
    if not engines:
        print("error: none of the engines is installed", file=sys.stderr)
        return 2
    pdfs = sorted(args.pdfs.glob("*.pdf"))
    report: dict[str, Any] = {"engines": engines}
    if args.part == "memory":
        print(json.dumps(memory(pdfs, args.scan_pages, engines[0]), indent=2))
        return 0
    if args.part in ("all", "quality"):
        report["quality"] = quality(pdfs, args.pages, engines, args.worst)
    if args.part in ("all", "pages"):
        report["page_hit"] = page_hits(args.pdfs, args.questions, args.max_questions, engines)
    print(json.dumps(report, indent=2) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
