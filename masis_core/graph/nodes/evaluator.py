"""Evaluator (citation engine): deterministic checks of every citation in the draft.

Markers outside the evidence list are fabricated: counted, reported, and removed from the
answer. Sentences without a citation, and sentences whose numbers or names do not appear in
the passages they cite, are flagged; a figure computed over the cited table's rows
(``answers.aggregate``) is backed by that computation.
"""

from __future__ import annotations

from typing import Any

from masis_core.answers.aggregate import stated
from masis_core.answers.support import NO_CITATION, issue_of
from masis_core.graph.context import timed
from masis_core.state import Evidence, ResearchState, all_evidence
from masis_core.text.sentences import claims, markers, strip_markers


def check(draft: str, evidence: list[Evidence]) -> dict[str, Any]:
    valid = set(range(1, len(evidence) + 1))
    violations: list[str] = []
    flagged: list[dict[str, Any]] = []
    used: dict[int, int] = {}  # evidence number -> citation number in the final answer
    paragraphs_out: list[str] = []
    for paragraph in draft.split("\n\n"):
        out_sentences = []
        for sentence in claims(paragraph):
            cited = markers(sentence)
            good = [m for m in cited if m in valid]
            violations.extend(f"[{m}]" for m in cited if m not in valid)
            text = strip_markers(sentence)
            issue = (
                None
                if any(stated(evidence[m - 1], text) for m in good)
                else issue_of(text, (evidence[m - 1].get("text", "") for m in good))
            )
            if issue is not None:
                flagged.append({"sentence": text, "issue": issue})
            for m in good:
                used.setdefault(m, len(used) + 1)
            cites = "".join(f"[{used[m]}]" for m in dict.fromkeys(good))
            out_sentences.append(f"{text} {cites}".strip())
        if out_sentences:
            paragraphs_out.append(" ".join(out_sentences))
    citations = []
    for m, number in sorted(used.items(), key=lambda kv: kv[1]):
        ev = evidence[m - 1]
        citations.append(
            {
                "n": number,
                "chunk_id": ev.get("chunk_id"),
                "doc_id": ev.get("doc_id"),
                "filename": ev.get("filename"),
                "version": ev.get("version") or None,  # "report.pdf, v3, p. 12"
                "page": ev.get("page_start"),
                "page_end": ev.get("page_end"),
                "place": ev.get("place") or "",
                "rows": ev.get("rows") or "",
                "ocr": bool(ev.get("ocr")),
                "url": ev.get("url"),
                "source": ev.get("source", "kb"),
                "score": ev.get("score"),
                "kept_by": ev.get("kept_by"),
                "keyword_rank": ev.get("keyword_rank"),
                "coverage": ev.get("coverage"),
                "text": ev.get("text", ""),
            }
        )
    return {
        "answer": "\n\n".join(paragraphs_out),
        "citations": citations,
        "violations": violations,
        "flagged": flagged,
    }


def node(state: ResearchState) -> dict[str, Any]:
    with timed() as t:
        result = check(state.get("draft_answer") or "", all_evidence(state))
    unsupported = [f for f in result["flagged"] if f["issue"] != NO_CITATION]
    entry = {
        "node": "evaluator",
        "citations": len(result["citations"]),
        "citation_violations": result["violations"],
        "flagged": len(result["flagged"]),
        "duration_ms": t["ms"],
    }
    metrics: dict[str, Any] = {
        "citation_violations": result["violations"],
        "unsupported_claims": len(unsupported),
        "flagged_sentences": result["flagged"],
    }
    if any(e.get("prompt_cut") for e in state.get("trace") or []):
        metrics["prompt_cut"] = True  # the model read less than it was sent: the run says so
    return {
        "answer": result["answer"],
        "citations": result["citations"],
        "metrics": metrics,
        "trace": [entry],
    }
