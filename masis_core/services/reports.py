"""A run as a Markdown report: what an analyst pastes into a memo or files with the evidence.

Documents, web pages and model output are escaped here as on screen (``masis_core.text.markup``):
the exported file renders no link or image a document smuggled in, and its citation markers
are only those of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from masis_core.answers.offline import ALSO_RELEVANT, disagreements, lead_and_others
from masis_core.answers.rows import ROWS_PLACE, cells_of, row_line
from masis_core.answers.rows import parse as parse_table
from masis_core.answers.support import cited_sentences, sentence_support
from masis_core.services.runs import RunRecord
from masis_core.text.markup import (
    answer_markdown,
    escape_markdown,
    percent,
    quote_block,
    safe_link,
    untrusted,
)


def citation_source(c: dict[str, Any], cited: Iterable[str] = ()) -> str:
    """Where a citation points, as one line: a web page's title and URL, file and place for
    a document without pages ("report.docx, 3 Methods › 3.2 Sampling, paragraph 4"; for
    table rows, the row that ``cited`` quotes: "medals.xlsx, Medals, row 7"), or file and
    pages (marked OCR when the passage was read from a page image: it may hold misread
    words)."""
    if c.get("url"):
        return f"{c.get('filename') or c.get('title') or c['url']} — {c['url']}"
    # A followed file's version: "report.pdf, v3, page 12".
    name = f"{c.get('filename')}, v{c['version']}" if c.get("version") else c.get("filename")
    if c.get("place"):
        return f"{name}, {cited_place(c, cited)}"
    page, end = c.get("page"), c.get("page_end")
    pages = f"page {page}" if not end or end == page else f"pages {page}–{end}"
    return f"{name}, {pages}{' (OCR)' if c.get('ocr') else ''}"


def cited_by(rec: RunRecord) -> dict[int, tuple[str, ...]]:
    """Per citation number, the passage's sentences the answer rests on, found as the page
    finds them: the exports cite a sheet's row with them as the page does ("medals.xlsx,
    Medals, row 18"), where they had said the chunk's "rows 3–13"."""
    return cited_sentences(sentence_support(rec.answer or "", rec.citations))


def cited_rows(c: dict[str, Any], cited: Iterable[str]) -> list[int]:
    """The numbers of the rows of a table chunk that the cited sentences quote (a row read by
    its header, or its line), in table order; none when it is no table or none is quoted."""
    numbers = [int(n) for n in str(c.get("rows") or "").split(",") if n.strip().isdigit()]
    table = parse_table(str(c.get("text") or ""))
    if table is None or len(numbers) != len(table.rows):
        return []
    lines = {row_line(s, str(c.get("text") or "")) or " ".join(s.split()) for s in cited}
    return [n for n, line in zip(numbers, table.rows, strict=True) if line in lines]


def cited_place(c: dict[str, Any], cited: Iterable[str] = ()) -> str:
    """A place of table rows narrowed to the rows quoted: "Medals, rows 3–13" whose row 7
    answers is cited "Medals, row 7"."""
    place = str(c.get("place") or "")
    rows = cited_rows(c, cited)
    if not rows or not ROWS_PLACE.search(place):
        return place
    said = f"row {rows[0]}" if len(rows) == 1 else "rows " + ", ".join(map(str, rows))
    return ROWS_PLACE.sub(said, place)


def table_frame(
    c: dict[str, Any], cited: Iterable[str] = ()
) -> tuple[pd.DataFrame, set[str]] | None:
    """A table chunk as a table: its header's columns, a row per row line indexed by the
    row's number in its sheet or file ("row 7"), and the index labels of the rows quoted;
    None when the chunk is no table with a header."""
    text = str(c.get("text") or "")
    table = parse_table(text)
    if table is None or not table.header:
        return None
    numbers = [n for n in str(c.get("rows") or "").split(",") if n.strip().isdigit()]
    if len(numbers) != len(table.rows):
        numbers = [str(k) for k in range(1, len(table.rows) + 1)]
    width = len(table.header)
    cells = [(cells_of(line) + [""] * width)[:width] for line in table.rows]
    names = [name or f"column {k}" for k, name in enumerate(table.header, start=1)]
    names = [f"{name} ({k})" if names.count(name) > 1 else name for k, name in enumerate(names, 1)]
    labels = [f"row {n}" for n in numbers]
    frame = pd.DataFrame(cells, columns=names, index=labels)
    lines = {row_line(s, text) or " ".join(s.split()) for s in cited}
    quoted = {label for label, line in zip(labels, table.rows, strict=True) if line in lines}
    return frame, quoted


def _source_markdown(c: dict[str, Any], cited: Iterable[str] = ()) -> str:
    """``citation_source`` as Markdown: a web page's address becomes a link only if http(s)."""
    if c.get("url"):
        title = c.get("filename") or c.get("title") or c["url"]
        return f"{untrusted(title)} — {safe_link(c['url'], c['url'])}"
    return untrusted(citation_source(c, cited))


DRAFT_TITLES = {
    "needs_human": "Draft answer — awaiting review",
    "running": "Draft answer — the run is still working",
    "failed": "Draft answer — the run failed before it was final",
    "cancelled": "Draft answer — the run was cancelled at review",
}


def is_final(rec: RunRecord) -> bool:
    """Only a completed run's answer is final: verdicts and follow-ups are for it alone."""
    return rec.status == "completed"


def answer_title(rec: RunRecord, yours: bool = False) -> str:
    """ "Answer", or what kind of draft it is: a paused run's draft exported as "Answer" read
    as a final one. A paused run awaits the review of whoever asked it (or an editor's):
    ``yours`` when that is the one looking, else it names them; a viewer of another account's
    run, and an export, read "awaiting your review" of a review that was not theirs."""
    if is_final(rec):
        return "Answer"
    title = DRAFT_TITLES.get(rec.status, "Draft answer")
    if rec.status != "needs_human":
        return title
    if yours:
        return "Draft answer — awaiting your review"
    return f"{title} by {rec.asked_by}" if rec.asked_by else title


def asked_by(rec: RunRecord) -> str:
    """ "asked by ann", or "" for a run asked without accounts (MASIS_AUTH=none)."""
    return f"asked by {rec.asked_by}" if rec.asked_by else ""


def run_facts(
    rec: RunRecord, name: Callable[[str], str] = str, quote: Callable[[str], str] = str
) -> list[str]:
    """The run's header lines, shared by the exports; ``name`` formats the run, workspace and
    thread ids (as code in Markdown), ``quote`` the analyst's own words (escaped there)."""
    facts = [
        f"Run: {name(rec.run_id)} · workspace {name(rec.workspace_id)} · engine {rec.engine}",
        f"Status: {rec.shown_status} · {rec.created_at}",
    ]
    if rec.asked_by:
        facts.append(f"Asked by {quote(rec.asked_by)}")
    if rec.follow_up:
        facts.append(
            f"Follow-up in thread {name(rec.thread_id)}, asked as “{quote(rec.follow_up)}”"
        )
    facts += review_facts(rec, quote)
    if rec.confirmed_by:
        model = "" if rec.confidence is None else f" (the model's: {percent(rec.confidence)})"
        facts.append(f"Confidence: confirmed by {quote(rec.confirmed_by)}{model}")
    elif rec.confidence is not None:
        facts.append(f"Confidence: {percent(rec.confidence)}")
    if rec.feedback is not None:
        facts.append(f"Analyst's verdict: {'right' if rec.feedback else 'wrong'}")
    retries = rec.metrics.get("retry_reasons") or []
    if retries:
        facts.append(f"Retries: {len(retries)} ({', '.join(r['reason'] for r in retries)})")
    return facts


# How each review action reads in an export (the trace's ``human_review`` entries).
_REVIEWED = {
    "accept": "Accepted by the analyst at review",
    "rephrase": "Rephrased by the analyst at review",
    "retry_lower_threshold": "Retried at review with a lower similarity threshold",
    "choose_source": "A source chosen by the analyst at review",
    "cancel": "Cancelled by the analyst at review",
}


def review_facts(rec: RunRecord, quote: Callable[[str], str] = str) -> list[str]:
    """What the analyst did at review, as the screen says it: an export of an answer accepted
    at 5% and marked right, or of a rephrased question, had said nothing of either."""
    facts, asked = [], str((rec.input or {}).get("question") or "")
    for e in rec.trace:
        if e.get("node") != "human_review" or e.get("action") not in _REVIEWED:
            continue
        fact = _REVIEWED[e["action"]]
        if e.get("action") == "rephrase" and e.get("question"):
            fact += f" (asked before as “{quote(asked)}”)" if asked else ""
            asked = str(e["question"])
        if e.get("action") == "accept" and e.get("lead"):
            fact += f", leading with “Also relevant” passage {e['lead']}"
        if e.get("action") == "retry_lower_threshold" and e.get("threshold") is not None:
            fact += f" ({e['threshold']})"
        facts.append(fact)
    return facts


def run_markdown(rec: RunRecord, depth: int = 0) -> str:
    """One run; ``depth`` pushes every heading down (a turn inside a thread's report)."""
    h = "#" * depth
    lines = [f"{h}# {untrusted(rec.question)}", ""]
    lines += [f"- {fact}" for fact in run_facts(rec, lambda n: f"`{n}`", untrusted)]
    lines += ["", f"{h}## {untrusted(answer_title(rec))}", ""]
    if rec.answer:
        numbers = [c["n"] for c in rec.citations]
        lead, others = lead_and_others(rec.answer, rec.engine)
        lines.append(answer_markdown(lead, numbers))
        if others is not None:  # as on screen: the confidence speaks of the lead alone
            notes = [f"_⚖️ {untrusted(n)}_" for n in disagreements(rec.question, lead, others)]
            lines += ["", f"**{ALSO_RELEVANT}**", "", *notes, *([""] if notes else [])]
            lines.append(answer_markdown(others, numbers))
    elif rec.hitl:
        message = untrusted(rec.hitl.get("message"))
        lines.append(f"_Waiting for review ({rec.hitl.get('kind')}): {message}_")
    else:
        error = f": {untrusted(rec.error)}" if rec.error else ""
        lines.append(f"_No answer ({rec.shown_status}{error})._")
    cited = cited_by(rec)
    if rec.citations:
        lines += ["", f"{h}## Citations", ""]
        lines += [f"{c['n']}. {_source_markdown(c, cited.get(c['n'], ()))}" for c in rec.citations]
    flagged = rec.metrics.get("flagged_sentences") or []
    violations = rec.metrics.get("citation_violations") or []
    if flagged or violations:
        lines += ["", f"{h}## Checks", ""]
        lines += [f"- Removed fabricated citation {escape_markdown(str(v))}" for v in violations]
        lines += [
            f"- Flagged: “{untrusted(f['sentence'])}” — {untrusted(f['issue'])}" for f in flagged
        ]
    if rec.citations:
        lines += ["", f"{h}## Evidence appendix", ""]
        for c in rec.citations:
            heading = f"{h}### [{c['n']}] {_source_markdown(c, cited.get(c['n'], ()))}"
            lines += [heading, "", quote_block(c.get("text") or ""), ""]
    return "\n".join(lines).rstrip() + "\n"


def report_filename(rec: RunRecord) -> str:
    return f"masis-run-{rec.run_id}.md"


def thread_markdown(turns: list[RunRecord]) -> str:
    """A thread's runs in one report, in the order they were asked: each turn as its own run
    report one heading level down, so every answer keeps its own citations and appendix."""
    first = turns[0]
    lines = [
        f"# Thread: {untrusted(first.question)}",
        "",
        f"- Thread `{first.thread_id}` · workspace `{first.workspace_id}` · {len(turns)} turn(s)",
        "",
    ]
    parts = ["\n".join(lines)]
    parts += [run_markdown(rec, depth=1) for rec in turns]
    return "\n".join(parts).rstrip() + "\n"


def thread_filename(turns: list[RunRecord]) -> str:
    return f"masis-thread-{turns[0].thread_id}.md"
