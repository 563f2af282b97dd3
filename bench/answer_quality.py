"""Answer composition on real manuals: cited gold pages and structure debris in the answers.

    python -m bench.answer_quality [--pdfs .pdf-corpus/manuals]
        [--questions bench/data/manual-answerable.json ...] [--out FILE] [--compare FILE]
        [--data DIR (keep the ingested manuals there and reuse them)]

The manuals are ingested into a fresh offline workspace and every question goes through the
real graph (retries included). Per answer we record whether a cited page is the gold page (or
the page after it, as ``eval pages`` counts), and we check each answer sentence against the
*page layout* the parser saw — which the chunks no longer have, so the check does not share
the composer's guesses:

- heading: the sentence holds a whole numbered heading line ("5.2 How can add-on packages be
  installed?", "6.3 Installing packages") or a table caption ("Table 6.9: ...") of a cited
  page, or starts with an admonition line ("Note") glued to the next sentence; unnumbered
  headings ("Canvas size") cannot be told from a wrapped line by layout alone and are not
  counted;
- toc / header: it holds a table-of-contents line (dot leaders), a revision-table line or a
  running header line ("Chapter 2: Installing R under Unix-alikes 7");
- fragment: it does not start like a sentence (lower case, a comma) or end like one, or in
  the document's own text it follows a word that cannot end a clause ("the", "of", ",").

To measure another checkout (the code before a change), run this file with that checkout
first on the path: ``git worktree add /tmp/before <rev>`` then
``PYTHONPATH=/tmp/before python bench/answer_quality.py --out before.json --label before``,
and ``python -m bench.answer_quality --compare before.json`` prints both side by side.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PDFS = ROOT / ".pdf-corpus" / "manuals"
DEFAULT_QUESTIONS = [ROOT / "bench" / "data" / "manual-answerable.json"]

_HEADING_LINE = re.compile(
    r"^(?:(?:\d{1,2}|[A-Z])(?:\.\d{1,3})+\.?\s+[A-Za-z\"“]|\d{1,2}\s+[A-Z][a-z]+(?:\s|$))"
)
_CAPTION_LINE = re.compile(r"^(?:Table|Figure)\s+[0-9A-Z]{1,2}(?:\.\d{1,3})*:")
_RUNNING_LINE = re.compile(r"^(?:(?:Chapter|Appendix)\s+[0-9A-Z]{1,2}:|\d+(?:\.\d+)*\.\s.*\s\d+$)")
_TOC_LINE = re.compile(r"(?:\.\s?){5,}\s*\d+\s*$")
_LABEL_LINE = re.compile(r"^(?:Note|Tip|Caution|Warning|Important)$")
_ITEM_LINE = re.compile(r"^(\d{1,2}\.)\s+\S")
_CLAUSE_WORDS = {
    *("the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and"),
    *("or", "but", "as", "that", "which", "whose", "its", "their", "this", "these", "is"),
    *("are", "was", "were", "be", "been", "can", "may", "will", "would", "should", "must"),
}
_TERMINAL = re.compile(r"[.!?][\"'”’)\]]*$")
_MARKERS = re.compile(r"\s*(?:\[\d+\])+\s*$")


def _heading_line(flat: str) -> bool:
    """A numbered heading line: "6.3 Installing packages", "3.2.1 if", "8.3 on.exit"; not a
    wrapped line of prose that starts with a figure ("3.6.0 the first two kinds were ...")."""
    n = len(flat.split())
    return bool(
        _HEADING_LINE.match(flat)
        and n <= 12
        and not re.search(r"[.,;:)]$", flat)
        and (n <= 6 or not re.match(r"\S+\s+[a-z]", flat))
    )


def structure_lines(text: str) -> list[tuple[str, str]]:
    """(kind, normalised line) for the structural lines of one page as the parser gave it."""
    out = []
    for line in text.split("\n"):
        flat = " ".join(line.split())
        n = len(flat.split())
        if not flat:
            continue
        if _TOC_LINE.search(flat) or flat.startswith(("REVISION HISTORY", "NUMBER DATE")):
            out.append(("toc", flat))
        elif _RUNNING_LINE.match(flat) and n <= 12:
            out.append(("header", flat))
        elif _CAPTION_LINE.match(flat) or _LABEL_LINE.match(flat) or _heading_line(flat):
            out.append(("heading", flat))
        elif item := _ITEM_LINE.match(flat):
            out.append(("item", item.group(1)))  # a numbered item's marker: "5."
    return out


def sentence_problems(
    sentence: str, lines: list[tuple[str, str]], context: str | None
) -> list[str]:
    """What is wrong with one answer sentence (markers already stripped): structure lines
    glued into it, or a fragment. ``context`` is the flattened text of the cited pages."""
    from masis_core.text.sentences import ends_as_promised

    problems: list[str] = []
    padded = f" {sentence} "
    words = sentence.split()
    for kind, line in lines:
        if kind == "item":
            # "Unpack fetched binary packages 5.": the next item's number, quoted as if it
            # ended the sentence (a list whose items carry no full stop).
            if words[-1] == line and len(words) > 1 and not words[-2][-1].isdigit():
                problems.append(f"{kind}: ends in the next item's number {line}")
        elif kind == "heading" and len(line.split()) == 1:
            # A label line ("Note") counts where it is glued to the sentence's first word:
            # "Note Sort order ...", not "Note that ...".
            if words[0] == line and len(words) > 1 and words[1][:1].isupper():
                problems.append(f"{kind}: {line}")
        elif f" {line} " in padded:  # glued to prose, or quoted as if it were a sentence
            problems.append(f"{kind}: {line}")
    problems = list(dict.fromkeys(problems))
    first = sentence.lstrip("\"'“‘([`")
    if not first or not (first[0].isupper() or first[0].isdigit()):
        problems.append("fragment: starts mid-sentence")
    elif not _TERMINAL.search(sentence) and not ends_as_promised(sentence):
        problems.append("fragment: no end")
    elif context is not None:
        at = context.find(sentence[:80])
        before = context[max(0, at - 100) : at].split()[-1:] if at > 0 else []
        if before and (before[0].lower() in _CLAUSE_WORDS or before[0].endswith(",")):
            problems.append(f"fragment: follows '{before[0]}'")
    return problems


def answer_sentences(answer: str) -> list[str]:
    """The answer's cited claims, markers removed (the evaluator's own split)."""
    from masis_core.text.sentences import claims

    out: list[str] = []
    for paragraph in answer.split("\n\n"):
        out.extend(_MARKERS.sub("", c).strip() for c in claims(paragraph))
    return [s for s in out if s]


def cited_hit(citations: list[dict[str, Any]], doc: str, gold: int) -> bool:
    for c in citations:
        if c.get("filename") != doc:
            continue
        start, end = int(c.get("page") or 0), int(c.get("page_end") or c.get("page") or 0)
        if start <= gold <= end or start <= gold + 1 <= end:
            return True
    return False


def lead_of(answer: str, citations: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The answer's lead (its first paragraph, markers removed) and the citations it holds."""
    from masis_core.text.sentences import markers, strip_markers

    lead = answer.split("\n\n", maxsplit=1)[0]
    numbers = set(markers(lead))
    return " ".join(strip_markers(c) for c in answer_sentences(lead)), [
        c for c in citations if c.get("n") in numbers
    ]


def lead_answers(q: dict[str, Any], answer: str, citations: list[dict[str, Any]]) -> bool:
    """The check of a lead that answers the question: for a how-to question, the lead holds
    one of its answer terms ("read\\.fwf"); for a question with a gold page, the lead cites
    that page and, when the question asks for a figure, a date, a version or a name
    (``question.asked_kind``), holds one."""
    from masis_core.answers.question import asked_kind, kind_present

    lead, cited = lead_of(answer, citations)
    if "answer_terms" in q:
        return any(re.search(t, lead, re.I) for t in q["answer_terms"])
    if "gold_page" not in q:
        return False  # an unanswerable question: no lead answers it
    kind = asked_kind(q["question"])
    hit = cited_hit(cited, q["doc"], int(q["gold_page"]))
    return hit and (kind in ("open", "yes_no") or kind_present(kind, lead, q["question"]))


def gold_hit(q: dict[str, Any], answer: str, citations: list[dict[str, Any]]) -> bool:
    """The answer cites the gold page, or (a how-to question) holds one of its terms."""
    if "answer_terms" in q:
        return any(re.search(t, answer, re.I) for t in q["answer_terms"])
    return cited_hit(citations, q["doc"], int(q["gold_page"]))


def load_questions(paths: list[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        if path.exists():
            rows.extend({**q, "set": path.stem} for q in json.loads(path.read_text()))
        else:
            print(f"(skipped: {path} does not exist)", file=sys.stderr)
    return rows


def measure(
    pdfs: Path, questions: list[dict[str, Any]], data: Path | None = None
) -> dict[str, Any]:
    from ingest.parsing import parse_bytes
    from ingest.pipeline import Ingestor, expand_paths
    from masis_core.config import Settings
    from masis_core.services.runs import RunService
    from masis_core.workspaces.workbench import Workbench

    pages: dict[str, dict[int, str]] = {}
    with tempfile.TemporaryDirectory(prefix="masis-bench-") as tmp:
        bench = Workbench(Settings.local(data or Path(tmp), provider="offline"))
        ws = bench.registry.get_workspace("manuals")
        fresh = ws is None
        if ws is None:
            ws = bench.registry.create_workspace("manuals", "wordllama")
        ingestor = Ingestor(bench)
        for path in expand_paths([pdfs]):
            if fresh:
                ingestor.ingest_path(ws, path)
            parsed = parse_bytes(path.read_bytes(), path.name)
            pages[path.name] = {p.number: p.text for p in parsed.pages}
        research = RunService(bench)
        rows = []
        for q in questions:
            start = time.perf_counter()
            rec = research.ask(ws.id, q["question"], engine="offline")
            ms = (time.perf_counter() - start) * 1000
            answer = rec.answer or ""
            problems = []
            cited = [
                pages.get(c.get("filename") or "", {}).get(p, "")
                for c in rec.citations
                for p in range(int(c.get("page") or 0), int(c.get("page_end") or 0) + 1)
            ]
            lines = [line for text in cited for line in structure_lines(text)]
            context = " ".join(" ".join(text.split()) for text in cited)
            for sentence in answer_sentences(answer):
                for problem in sentence_problems(sentence, lines, context):
                    problems.append({"sentence": sentence, "problem": problem})
            rows.append(
                {
                    **q,
                    "status": rec.status,
                    "answered": bool(answer),
                    "hit": gold_hit(q, answer, rec.citations),
                    "lead_hit": "gold_page" in q
                    and cited_hit(lead_of(answer, rec.citations)[1], q["doc"], int(q["gold_page"])),
                    "lead_answers": lead_answers(q, answer, rec.citations),
                    "lead_sentences": len(answer_sentences(answer.split("\n\n")[0])),
                    "sentences": len(answer_sentences(answer)),
                    "problems": problems,
                    "ms": round(ms, 1),
                    "answer": answer,
                }
            )
    return summarise(rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kinds: Counter[str] = Counter(p["problem"].split(":")[0] for r in rows for p in r["problems"])
    ms = sorted(r["ms"] for r in rows)
    paged = [r for r in rows if "gold_page" in r]
    sets: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        sets.setdefault(r.get("set", ""), []).append(r)
    return {
        "gold_in_lead": round(sum(r.get("lead_hit", False) for r in paged) / len(paged), 3)
        if paged
        else None,
        "leads_answer": round(sum(r.get("lead_answers", False) for r in rows) / len(rows), 3)
        if rows
        else 0.0,
        "leads_answer_by_set": {
            k: round(sum(r.get("lead_answers", False) for r in v) / len(v), 3)
            for k, v in sets.items()
        },
        "questions": len(rows),
        "answered": sum(r["answered"] for r in rows),
        "gold_cited": round(sum(r["hit"] for r in rows) / len(rows), 3) if rows else 0.0,
        "answers_with_debris": sum(1 for r in rows if r["problems"]),
        "debris_sentences": {k: kinds[k] for k in ("heading", "toc", "header", "fragment", "item")},
        "sentences_per_answer": round(sum(r["sentences"] for r in rows) / len(rows), 2)
        if rows
        else 0.0,
        "statuses": dict(Counter(r["status"] for r in rows)),
        "run_ms_p50": ms[len(ms) // 2] if ms else 0.0,
        "rows": rows,
    }


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    lines = [f"{'':34} | " + " | ".join(f"{n:>12}" for n in names)]
    fields = [
        ("questions", "questions"),
        ("answered", "answered"),
        ("gold page cited (how-to: a term)", "gold_cited"),
        ("gold page in the lead", "gold_in_lead"),
        ("leads that answer", "leads_answer"),
        ("answers with debris", "answers_with_debris"),
        ("  heading sentences", ("debris_sentences", "heading")),
        ("  toc / revision sentences", ("debris_sentences", "toc")),
        ("  running-header sentences", ("debris_sentences", "header")),
        ("  fragment sentences", ("debris_sentences", "fragment")),
        ("  ending in the next item's number", ("debris_sentences", "item")),
        ("sentences per answer", "sentences_per_answer"),
        ("run p50 ms", "run_ms_p50"),
    ]
    for label, key in fields:
        cells = []
        for n in names:
            value = results[n]
            for part in key if isinstance(key, tuple) else (key,):
                value = value.get(part, "") if isinstance(value, dict) else ""
            cells.append(f"{value:>12}")
        lines.append(f"{label:34} | " + " | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS)
    parser.add_argument("--questions", type=Path, nargs="+", default=DEFAULT_QUESTIONS)
    parser.add_argument("--out", type=Path, help="write the full results (every answer) here")
    parser.add_argument("--compare", type=Path, help="a --out file of another checkout")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument(
        "--data", type=Path, help="keep the ingested manuals here and reuse them next time"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if not args.pdfs.is_dir() or not any(args.pdfs.glob("*.pdf")):
        sys.exit(f"no PDFs in {args.pdfs}: fetch them with ../shared/scripts/fetch-pdf-corpus.sh")
    result = measure(args.pdfs, load_questions(args.questions), args.data)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    results = {args.label: result}
    if args.compare:
        results = {args.compare.stem: json.loads(args.compare.read_text()), **results}
    print(table(results))
    for name, res in results.items():
        print(f"{name}: leads that answer, by set: {res.get('leads_answer_by_set')}")
    for r in result["rows"]:
        for p in r["problems"]:
            print(f"  {r['doc']} | {r['question'][:50]} | {p['problem'][:60]}")


if __name__ == "__main__":
    main()
