"""Check a held-out set against the fetched PDFs (never runs the workbench).

usage: python check_heldout_s12.py PDF_DIR [SET]
SET names the files heldout-SET-{answerable,unanswerable}.json beside this script: s12 (the
default, session 12's set), s13, s14, s15 or s16 (sessions 13's to 16's).
Reads page text with pypdfium2 only. Text is normalised: U+FFFE (pypdfium2's mark for a
hyphen at a line end) and soft hyphens are dropped, so the two halves of the word join;
whitespace runs become one space; matching is case-insensitive.
For every answerable question: each answer_term (a regular expression) must match the
gold page, and each fragment of `answer` (split on " ... ") must occur on it. Also reports
whether the term matches within one text line, and on how many other pages it matches.
For every unanswerable question: its doc must exist. Exit 1 on any failure.
"""

import json
import re
import sys
from pathlib import Path

import pypdfium2 as pdfium

HERE = Path(__file__).resolve().parent


def clean(s: str) -> str:
    return s.replace("\ufffe", "").replace("\u00ad", "").replace("\r", "")


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", clean(s)).strip().lower()


def main() -> int:
    pdf_dir = Path(sys.argv[1] if len(sys.argv) > 1 else HERE / "pdfs")
    name = sys.argv[2] if len(sys.argv) > 2 else "s12"
    ans = json.loads((HERE / f"heldout-{name}-answerable.json").read_text())
    una = json.loads((HERE / f"heldout-{name}-unanswerable.json").read_text())
    pages: dict[str, list[str]] = {}
    lines: dict[str, list[list[str]]] = {}
    for doc in sorted({q["doc"] for q in ans + una}):
        pdf = pdfium.PdfDocument(str(pdf_dir / doc))
        raw = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
        pages[doc] = [norm(t) for t in raw]
        lines[doc] = [clean(t).split("\n") for t in raw]
    bad = 0
    for q in ans:
        doc, gp = q["doc"], q["gold_page"]
        text = pages[doc][gp - 1]
        for t in q["answer_terms"]:
            rx = re.compile(t, re.I)
            ok = bool(rx.search(text))
            one_line = any(rx.search(ln) for ln in lines[doc][gp - 1])
            elsewhere = sum(bool(rx.search(p)) for p in pages[doc]) - ok
            in_answer = bool(rx.search(norm(q["answer"])))
            bad += not ok or not in_answer
            print(
                f"{'OK ' if ok and in_answer else 'BAD'} {doc} p{gp} term={t!r} "
                f"in_answer={in_answer} on_one_line={one_line} also_on={elsewhere}"
            )
        for frag in q["answer"].split(" ... "):
            if norm(frag) not in text:
                bad += 1
                print(f"BAD answer fragment not on page: {doc} p{gp} {frag!r}")
    for q in una:
        bad += q["doc"] not in pages
    print(f"{len(ans)} answerable, {len(una)} unanswerable, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
