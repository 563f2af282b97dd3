"""A run as a Markdown report: what an analyst pastes into a memo or files with the evidence."""

from __future__ import annotations

from typing import Any

from masis_core.runs import RunRecord


def citation_source(c: dict[str, Any]) -> str:
    """Where a citation points, as one line: a web page's title and URL, or file and pages."""
    if c.get("url"):
        return f"{c.get('filename') or c.get('title') or c['url']} — {c['url']}"
    page, end = c.get("page"), c.get("page_end")
    pages = f"page {page}" if not end or end == page else f"pages {page}–{end}"
    return f"{c.get('filename')}, {pages}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.strip().splitlines())


def run_markdown(rec: RunRecord) -> str:
    lines = [
        f"# {rec.question}",
        "",
        f"- Run: `{rec.run_id}` · workspace `{rec.workspace_id}` · engine {rec.engine}",
        f"- Status: {rec.status} · {rec.created_at}",
    ]
    if rec.confidence is not None:
        lines.append(f"- Confidence: {round(rec.confidence * 100)}%")
    retries = rec.metrics.get("retry_reasons") or []
    if retries:
        lines.append(f"- Retries: {len(retries)} ({', '.join(r['reason'] for r in retries)})")
    lines += ["", "## Answer", ""]
    if rec.answer:
        lines.append(rec.answer)
    elif rec.hitl:
        lines.append(f"_Waiting for review ({rec.hitl.get('kind')}): {rec.hitl.get('message')}_")
    else:
        lines.append(f"_No answer ({rec.status}{': ' + rec.error if rec.error else ''})._")
    if rec.citations:
        lines += ["", "## Citations", ""]
        lines += [f"{c['n']}. {citation_source(c)}" for c in rec.citations]
    flagged = rec.metrics.get("flagged_sentences") or []
    violations = rec.metrics.get("citation_violations") or []
    if flagged or violations:
        lines += ["", "## Checks", ""]
        lines += [f"- Removed fabricated citation {v}" for v in violations]
        lines += [f"- Flagged: “{f['sentence']}” — {f['issue']}" for f in flagged]
    if rec.citations:
        lines += ["", "## Evidence appendix", ""]
        for c in rec.citations:
            lines += [f"### [{c['n']}] {citation_source(c)}", "", _quote(c.get("text") or ""), ""]
    return "\n".join(lines).rstrip() + "\n"


def report_filename(rec: RunRecord) -> str:
    return f"masis-run-{rec.run_id}.md"
