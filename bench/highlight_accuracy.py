"""Highlight accuracy: is a cited chunk found again on its page, so it can be drawn highlighted?

    python -m bench.highlight_accuracy [--pdfs $MASIS_PDF_CORPUS/manuals] [--n 200] [--seed 16]

Chunks are made as the ingest makes them (``parse_pdf`` then ``chunk_pages`` with the default
settings); ``--n`` of them are drawn at random over all the manuals. Per chunk, located means
that at least ``LOCATED_SHARE`` of its letters and digits were found in order on its pages:

- ours: ``ingest.highlight`` (letters and digits only, case-folded, in runs of words that may
  skip a running header or footer between them);
- naive: the chunk text, whitespace folded, searched as one string in the pages' text as PDFium
  extracts it (whitespace folded, pages joined by a space) — what a first try does.

Also printed: the share located for the chunk's first and last sentence alone (those with
at least 8 letters or digits: a cited sentence is what gets the strong highlight), and the
time per chunk.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import pypdfium2 as pdfium

from ingest.chunking import chunk_pages
from ingest.highlight import PageRun, fold
from ingest.parsing import parse_pdf
from masis_core.config import Settings
from masis_core.text.sentences import sentences

# A "sentence" of dot leaders (a table of contents) has nothing to find.
MIN_LETTERS = 8
DEFAULT_PDFS = Path(os.environ.get("MASIS_PDF_CORPUS", ".pdf-corpus")) / "manuals"


def naive_found(pdf: pdfium.PdfDocument, first: int, last: int, passage: str) -> bool:
    texts = []
    for number in range(first, last + 1):
        page = pdf[number - 1]
        textpage = page.get_textpage()
        texts.append(textpage.get_text_bounded())
        textpage.close()
        page.close()
    return " ".join(passage.split()) in " ".join(" ".join(texts).split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    pool: list[tuple[Path, int, int, str]] = []
    for path in sorted(args.pdfs.glob("*.pdf")):
        parsed = parse_pdf(path.read_bytes())
        chunks = chunk_pages(parsed.pages, settings.chunk_words, settings.chunk_overlap_words)
        pool.extend((path, c.page_start, c.page_end, c.text) for c in chunks)
    picked = random.Random(args.seed).sample(pool, min(args.n, len(pool)))
    ours = naive = first_ok = last_ok = spans = 0
    ours_s = naive_s = 0.0
    misses: list[str] = []
    for path, first, last, text in picked:
        pdf = pdfium.PdfDocument(str(path))
        try:
            t = time.perf_counter()
            run = PageRun(pdf, first, last)
            located = run.locate(text)
            parts = [s for s in sentences(text) if len(fold(s)[0]) >= MIN_LETTERS] or [text]
            first_ok += run.locate(parts[0]).found
            last_ok += run.locate(parts[-1]).found
            run.close()
            ours_s += time.perf_counter() - t
            t = time.perf_counter()
            naive += naive_found(pdf, first, last, text)
            naive_s += time.perf_counter() - t
        finally:
            pdf.close()
        ours += located.found
        spans += last > first
        if not located.found:
            misses.append(f"{path.name} p{first}-{last} share {located.share:.2f}: {text[:90]}")
    n = len(picked)
    print(f"{n} random chunks of {len(pool)} ({spans} span a page break), {args.pdfs}")
    print(f"{'method':<32}{'located':>10}{'ms/chunk':>10}")
    print(f"{'naive exact search':<32}{naive / n:>10.3f}{naive_s / n * 1000:>10.1f}")
    print(f"{'ours (ingest.highlight)':<32}{ours / n:>10.3f}{ours_s / n * 1000:>10.1f}")
    print(f"{'ours, first sentence alone':<32}{first_ok / n:>10.3f}")
    print(f"{'ours, last sentence alone':<32}{last_ok / n:>10.3f}")
    if args.show_misses:
        print("\n".join(misses))


if __name__ == "__main__":
    main()
