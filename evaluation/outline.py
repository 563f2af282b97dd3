"""Evaluate a workspace's retrieval without writing a question set.

A PDF's outline is its author's map of it: each entry names a topic and the page the topic
starts on. Asked as a question, an entry has a gold page, so page-hit@k and MRR can be measured
on the analyst's own library, per retrieval mode, with nothing labelled by hand (where a PDF
has no outline, its numbered section headings stand in; an uploaded JSON or CSV question file
replaces both). The *keep rate* is the share of hits the researcher would keep as evidence
under the current thresholds (``nodes.researcher.kept_by``): a page that is found but then
filtered out never reaches an answer. Each evaluation is stored, so days can be compared.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import random
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from statistics import mean
from typing import Any

from evaluation.retrieval import query_variants
from ingest.isolate import ChildCall
from ingest.outline import Heading, document_structure
from masis_core.errors import InputError
from masis_core.graph.nodes.researcher import kept_by
from masis_core.modes import MODES, Mode
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.thresholds import threshold_for
from masis_core.storage.registry import now_iso
from masis_core.text.words import STOP_WORDS, words
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)

PER_DOC = 20  # questions per document, spread over it: a 2,400-page reference is not 95% of all
MAX_QUESTIONS = 2000
# The headings asked as they are find their own page easily (a heading's words are on it): the
# harder variant asks each heading cut to its content words, shuffled, where that leaves at
# least ``HARDER_WORDS`` of them, and is reported once ``HARDER_MIN`` headings allow it.
HARDER_WORDS = 2
HARDER_MIN = 5
HEADINGS_LABEL = "on the document's own headings"
HARDER_LABEL = "on the headings cut to their content words, shuffled"
Progress = Callable[[int, int, str], None]  # (done, total, what)


# -- questions -----------------------------------------------------------------------------------
def _spread(items: list[Any], n: int) -> list[Any]:
    """``n`` items evenly spread over the list (all of them when there are fewer)."""
    if len(items) <= n:
        return items
    return [items[i * len(items) // n] for i in range(n)]


def _askable(headings: list[Heading]) -> list[Heading]:
    """Headings that name a topic once: at least one word of three letters, and a title that
    occurs once in the document (a repeated title has no single gold page)."""
    counts = Counter(h.title.lower() for h in headings)
    return [
        h
        for h in headings
        if counts[h.title.lower()] == 1 and any(len(w) >= 3 for w in words(h.title))
    ]


def _section_end(heading: Heading, headings: list[Heading], last_page: int) -> int:
    """The last page of the heading's section: where the next heading of any level starts
    (the page itself when that heading shares it), else the document's last page."""
    later = [h.page for h in headings if h.page > heading.page]
    return min(later) if later else max(heading.page, last_page)


def selection_notes(questions: list[dict[str, Any]]) -> list[str]:
    """Per document, how many of its outline entries were asked and why not the others: an
    evaluation that used 20 of 57 had not said so."""
    notes = []
    for doc in dict.fromkeys(q["doc"] for q in questions):
        mine = [q for q in questions if q["doc"] == doc]
        used, entries, askable = len(mine), mine[0]["entries"], mine[0]["askable"]
        why = []
        if askable > used:
            why.append(f"at most {used} per document, spread evenly over it")
        if entries > askable:
            why.append(
                f"{entries - askable} repeat a title of the document or have no word of three "
                "letters, so have no single page to find"
            )
        if why:
            notes.append(f"{doc}: {used} of its {entries} outline entries asked ({'; '.join(why)})")
    return notes


def harder_question(heading: str) -> str | None:
    """The heading cut to its content words (no stop words), in a shuffled order fixed by the
    heading; None when fewer than ``HARDER_WORDS`` are left (nothing to shuffle)."""
    content = [w for w in heading.split() if w.lower().strip(".,:;()") not in STOP_WORDS]
    content = [w for w in content if words(w)]
    if len(content) < HARDER_WORDS:
        return None
    shuffled = content[:]
    random.Random(zlib.crc32(heading.encode())).shuffle(shuffled)
    if shuffled == content:
        shuffled = shuffled[1:] + shuffled[:1]
    return " ".join(shuffled)


def workspace_questions(
    bench: Workbench, ws_id: str, per_doc: int = PER_DOC
) -> tuple[list[dict[str, Any]], list[str]]:
    """Questions from the workspace's PDFs (outline, else detected headings) and notes on the
    documents that gave none. Each PDF is read in a child process with the parse time limit."""
    questions: list[dict[str, Any]] = []
    notes: list[str] = []
    for doc in bench.documents(ws_id):
        if not doc.filename.lower().endswith(".pdf"):
            continue
        path = bench.file_path(doc.doc_id)
        if not path.exists():
            notes.append(f"{doc.filename}: its stored original is gone; re-upload it")
            continue
        kind, payload = ChildCall(
            document_structure, (path,), bench.settings.parse_timeout_s
        ).outcome()
        if kind != "ok":
            notes.append(f"{doc.filename}: its outline could not be read ({kind})")
            continue
        source, headings = payload
        askable = _askable(headings)
        chosen = _spread(askable, per_doc)
        if not chosen:
            notes.append(f"{doc.filename}: no outline and no numbered section headings")
        questions += [
            {
                "doc": doc.filename,
                "doc_id": doc.doc_id,
                "question": h.title,
                "gold_page": h.page,
                "section_end": _section_end(h, headings, doc.pages),
                "source": source,
                "entries": len(headings),  # how many were there to ask (``selection_notes``)
                "askable": len(askable),
            }
            for h in chosen
        ]
    return questions, notes


def load_question_file(name: str, data: bytes) -> list[dict[str, Any]]:
    """An uploaded question file: JSON ``[{"doc", "question", "gold_page"}, ...]`` or CSV with
    those three columns. Every problem is reported with the item or line it is on."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
    rows: list[Any]
    if name.lower().endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        missing = {"doc", "question", "gold_page"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(
                f"{name}: the CSV header needs the columns doc, question, gold_page "
                f"(missing: {', '.join(sorted(missing))})"
            )
        rows, where = list(reader), "line"
        offset = 2  # the header is line 1
    else:
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{name} is not valid JSON: {exc}") from exc
        if not isinstance(rows, list):
            raise InputError(f"{name} must hold a JSON list of question objects")
        where, offset = "item", 1
    out = []
    for n, row in enumerate(rows, start=offset):
        if not isinstance(row, dict) or not {"doc", "question", "gold_page"} <= set(row):
            raise InputError(f"{name}, {where} {n}: needs 'doc', 'question' and 'gold_page'")
        try:
            page = int(str(row["gold_page"]).strip())
        except ValueError:
            page = 0
        question = str(row["question"] or "").strip()
        if page < 1 or not question:
            raise InputError(
                f"{name}, {where} {n}: 'gold_page' must be a page number from 1 and "
                "'question' must not be empty"
            )
        out.append(
            {
                "doc": str(row["doc"]).strip(),
                "question": question,
                "gold_page": page,
                "source": "file",
            }
        )
    if not out:
        raise InputError(f"{name} holds no questions")
    return out[:MAX_QUESTIONS]


# -- measuring -----------------------------------------------------------------------------------
def _hit(meta: dict[str, Any], q: dict[str, Any]) -> bool:
    """A chunk of the question's document whose pages hold the gold page or the page after it
    (a heading often closes the page before its text, as in ``eval pages``)."""
    if q.get("doc_id"):
        if meta.get("doc_id") != q["doc_id"]:
            return False
    elif meta.get("filename") != q["doc"]:
        return False
    start, end = int(meta.get("page_start", 0)), int(meta.get("page_end", 0))
    gold = int(q["gold_page"])
    return start <= gold <= end or start <= gold + 1 <= end


def evaluate_workspace(
    bench: Workbench,
    ws_id: str,
    questions: list[dict[str, Any]],
    k: int = 5,
    modes: Iterable[Mode] = MODES,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """page-hit@k, MRR and keep rate per mode, with each question's rank per mode."""
    ws = bench.registry.require_workspace(ws_id)
    known = {d.filename for d in bench.documents(ws.id)}
    usable = [q for q in questions if q["doc"] in known]
    unknown = sorted({q["doc"] for q in questions} - known)
    if not usable:
        raise InputError(
            "none of the questions names a document of this workspace"
            + (f" (unknown: {', '.join(unknown[:5])})" if unknown else "")
        )
    modes = list(modes)
    threshold = threshold_for(ws.embed_model, 0)
    index = bench.index(ws.id, ws.embed_model)
    total, done = len(usable) * len(modes), 0
    results = [{**q, "ranks": {}, "kept": {}} for q in usable]
    for mode in modes:
        for row in results:
            found = retrieve(index, query_variants(row["question"], True), k, mode=mode)
            rank = next((n for n, c in enumerate(found, start=1) if _hit(c.metadata, row)), None)
            row["ranks"][mode] = rank
            row["kept"][mode] = (
                rank is not None
                and kept_by(found[rank - 1], mode, threshold, row["question"]) is not None
            )
            done += 1
            if progress and (done % 10 == 0 or done == total):
                progress(done, total, mode)
    per_mode = {}
    for mode in modes:
        ranks = [r["ranks"][mode] for r in results]
        hits = [r for r in results if r["ranks"][mode] is not None]
        per_mode[mode] = {
            f"page_hit@{k}": round(mean(x is not None for x in ranks), 4),
            "mrr": round(mean(1 / x if x else 0.0 for x in ranks), 4),
            "keep_rate": round(mean(r["kept"][mode] for r in hits), 4) if hits else 0.0,
        }
    return {
        "workspace": ws.id,
        "embedder": ws.embed_model,
        "k": k,
        "questions": len(results),
        "sources": dict(Counter(r["source"] for r in results).most_common()),
        "documents": len({r["doc"] for r in results}),
        "threshold": threshold,
        "per_mode": per_mode,
        "unknown_documents": unknown,
        "results": results,
    }


# -- storing -------------------------------------------------------------------------------------
class EvaluationStore:
    """Evaluations of a workspace, kept in the database (SQLite or PostgreSQL) to compare
    over days."""

    def __init__(self, bench: Workbench) -> None:
        self.db = bench.db

    def _conn(self) -> AbstractContextManager[Any]:
        return self.db.connect()

    def save(self, report: dict[str, Any], source: str) -> dict[str, Any]:
        report = {**report, "eval_id": uuid.uuid4().hex[:12], "created_at": now_iso()}
        report["source"] = source
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO evaluations (eval_id, workspace_id, created_at, source, k, "
                "questions, per_mode, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report["eval_id"],
                    report["workspace"],
                    report["created_at"],
                    source,
                    report["k"],
                    report["questions"],
                    json.dumps(report["per_mode"]),
                    json.dumps(report),
                ),
            )
        return report

    def list(self, ws_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Summaries, newest first: id, when, source, k, questions, per_mode."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT eval_id, created_at, source, k, questions, per_mode FROM evaluations "
                "WHERE workspace_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (ws_id, limit),
            ).fetchall()
        return [{**dict(r), "per_mode": json.loads(r["per_mode"])} for r in rows]

    def get(self, eval_id: str) -> dict[str, Any] | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT report FROM evaluations WHERE eval_id = ?", (eval_id,)
            ).fetchone()
        return json.loads(row["report"]) if row else None


def run_evaluation(
    bench: Workbench,
    ws_id: str,
    k: int = 5,
    questions: list[dict[str, Any]] | None = None,
    per_doc: int = PER_DOC,
    progress: Progress | None = None,
    modes: Iterable[Mode] | None = None,
) -> dict[str, Any]:
    """Make the questions (from the outlines unless given), measure each mode (every one
    unless given), store it."""
    if k < 1:
        raise InputError("k must be at least 1")
    notes: list[str] = []
    source = "file"
    if questions is None:
        if progress:
            progress(0, 0, "reading outlines")
        questions, notes = workspace_questions(bench, ws_id, per_doc)
        notes = [*selection_notes(questions), *notes]
        source = "outline"
        if not questions:
            raise InputError(
                "no questions could be made: the workspace has no PDF with an outline or "
                "numbered section headings; upload a JSON or CSV question file instead"
                + (f" ({'; '.join(notes[:3])})" if notes else "")
            )
    modes = list(modes or MODES)
    report = evaluate_workspace(bench, ws_id, questions, k=k, modes=modes, progress=progress)
    report["notes"] = notes
    if source == "outline":
        report["label"] = HEADINGS_LABEL
        asked = {r["doc_id"]: r.get("entries", 0) for r in report["results"]}
        report["outline_entries"] = sum(asked.values())
        report["harder"] = harder_variant(bench, ws_id, report["results"], k, modes, progress)
    return EvaluationStore(bench).save(report, source)


def harder_variant(
    bench: Workbench,
    ws_id: str,
    questions: list[dict[str, Any]],
    k: int,
    modes: list[Mode],
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The same measure on the headings cut to their content words and shuffled
    (``harder_question``): a heading asked verbatim is its page's own words, and its
    page-hit@k overstates what a question typed by an analyst gets."""
    variants = [
        {
            "doc": q["doc"],
            "doc_id": q.get("doc_id"),
            "gold_page": q["gold_page"],
            "source": q["source"],
            "heading": q["question"],
            "question": hard,
        }
        for q in questions
        if (hard := harder_question(q["question"])) is not None
    ]
    if len(variants) < HARDER_MIN:
        return {
            "label": HARDER_LABEL,
            "questions": len(variants),
            "skipped": f"only {len(variants)} headings keep {HARDER_WORDS} or more content "
            f"words; the harder variant needs {HARDER_MIN}",
        }

    def step(done: int, total: int, what: str) -> None:
        if progress:
            progress(done, total, f"harder variant, {what}")

    measured = evaluate_workspace(bench, ws_id, variants, k=k, modes=modes, progress=step)
    return {
        "label": HARDER_LABEL,
        "questions": measured["questions"],
        "per_mode": measured["per_mode"],
        "results": measured["results"],
    }


def summary_json(report: dict[str, Any]) -> dict[str, Any]:
    """What ``eval outline --json`` prints: everything but the per-question rows."""
    summary = {key: value for key, value in report.items() if key != "results"}
    if isinstance(report.get("harder"), dict):
        summary["harder"] = {k: v for k, v in report["harder"].items() if k != "results"}
    return summary


def _mode_table(report: dict[str, Any], per_mode: dict[str, Any], label: str) -> list[str]:
    k = report["k"]
    lines = [
        "",
        label,
        f"{'mode':8} | page-hit@{k} |   MRR | keep rate (threshold {report['threshold']})",
    ]
    for mode, m in per_mode.items():
        lines.append(
            f"{mode:8} | {m[f'page_hit@{k}']:10.3f} | {m['mrr']:.3f} | {m['keep_rate']:.3f}"
        )
    return lines


def format_summary(report: dict[str, Any]) -> str:
    sources = ", ".join(f"{n} from {s}" for s, n in report["sources"].items())
    lines = [
        f"workspace {report['workspace']} ({report['embedder']}): {report['questions']} "
        f"questions ({sources}) over {report['documents']} documents; evaluation "
        f"{report['eval_id']} stored",
    ]
    if report.get("outline_entries"):
        lines.append(
            f"{report['questions']} of {report['outline_entries']} outline entries asked "
            "(the notes say why)"
        )
    lines += _mode_table(report, report["per_mode"], report.get("label") or "")
    harder = report.get("harder") or {}
    if harder.get("per_mode"):
        label = f"harder, {harder['questions']} questions {harder['label']}"
        lines += _mode_table(report, harder["per_mode"], label)
    elif harder.get("skipped"):
        lines.append(f"harder variant not run: {harder['skipped']}")
    lines += [f"note: {n}" for n in report.get("notes") or []]
    if report.get("unknown_documents"):
        lines.append(f"skipped (not in the workspace): {', '.join(report['unknown_documents'])}")
    return "\n".join(lines)
