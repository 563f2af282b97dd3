"""The judge's features: interpretable measures of (question, answer, evidence), each
meaning the same on any document set — how much of the question the lead covers, whether what
is asked is present, the retrieval scores of the lead's chunks, and how the sources in focus
stand towards each other (``stances.py``). The fitted models read them (``confidence.py``).
"""

from __future__ import annotations

import re

from masis_core.answers.question import (
    CODE_Q,
    HOW_TO_Q,
    asked_in,
    asked_kind,
    head_stems,
    how_to,
    new_code,
    phrase_pairs,
    share,
)
from masis_core.answers.stances import (
    HEDGE,
    OPINION,
    PAIR_TOPIC,
    REPORTING,
    doc_of,
    in_focus,
    pairs_of,
)
from masis_core.llm.reader import get_reader
from masis_core.state import Evidence
from masis_core.text.figures import QUESTION_FIGURE, YEAR
from masis_core.text.sentences import (
    claims,
    content_stems,
    defang,
    markers,
    names,
    segment,
    strip_markers,
)


def lead_of(answer: str) -> str:
    """The answer's lead: its first paragraph (the offline engine's lead passage; the opening
    of a model's answer). The confidence speaks about it alone: the "Also relevant" passages
    after it do not raise it."""
    return answer.split("\n\n", 1)[0]


def features(
    question: str,
    answer: str,
    evidence: list[Evidence],
    section: dict[str, float] | None = None,
) -> dict[str, float]:
    """Interpretable features of a draft; every one means the same on any document set. What
    is read of the answer is its lead (``lead_of``) and the passages it cites; the sources'
    stances are read from the passages the whole answer cites and the best-scored ones
    (``in_focus``). ``section``: how clearly the lead's section won (``answers.sections``),
    when the composer chose one; the best keyword match of any passage stands beside it
    (BM25's top score alone tells answerable from unanswerable FAQ questions well;
    docs/measurements/passages.md)."""
    lead = lead_of(answer)
    return {
        **(section or {}),
        "top_keywords": max((float(ev.get("coverage") or 0.0) for ev in evidence), default=0.0),
        "answered": float(bool(strip_markers(answer))),
        **_form_features(question),
        **_lead_features(question, lead, evidence),
        **_evidence_features(question, evidence, in_focus(lead, evidence)),
        **_source_features(question, evidence, in_focus(answer, evidence)),
    }


def _form_features(question: str) -> dict[str, float]:
    kind = asked_kind(question)
    return {
        "how_to": float(bool(HOW_TO_Q.search(question))),
        "asks_for_code": float(bool(CODE_Q.search(question))),
        "asked_specific": float(kind not in ("open", "yes_no")),
        "yes_no": float(kind == "yes_no"),
    }


def _lead_features(question: str, lead: str, evidence: list[Evidence]) -> dict[str, float]:
    """How well the lead passage answers: its coverage of the question, its first sentence's
    (where the match sits), the question's head words and what it asks for in the lead and in
    the passages the lead cites."""
    wanted = content_stems(question)
    said = strip_markers(lead)
    cited_n = {m for m in markers(lead) if 1 <= m <= len(evidence)}
    cited = " ".join(evidence[m - 1].get("text", "") for m in sorted(cited_n))
    first = claims(" ".join(lead.split()))[:1] if said else []
    kind = asked_kind(question)
    specific = kind not in ("open", "yes_no")
    phrases = phrase_pairs(question)
    return {
        **_lead_chunk_scores([evidence[m - 1] for m in sorted(cited_n)]),
        **_lead_meaning(question, lead, evidence, cited_n),
        "lead_coverage": (
            share(wanted, content_stems(strip_markers(first[0]))) if first and wanted else 0.0
        ),
        "answer_coverage": share(wanted, content_stems(said)) if said else 0.0,
        "head_missing_cited": 1.0 - share(head_stems(question), content_stems(cited)),
        "asked_missing_cited": float(specific and not asked_in(kind, question, said)),
        "lead_phrases": len(phrases & phrase_pairs(said)) / len(phrases) if phrases else 0.0,
        "lead_code": float(how_to(question) and new_code(question, said)),
    }


def _lead_meaning(
    question: str, lead: str, evidence: list[Evidence], cited: set[int]
) -> dict[str, float]:
    """How close the lead comes to the question's meaning, as the reader reads it
    (``masis_core.llm.reader``): its closest sentence, and how much closer that is than any
    sentence of the passages it does not cite (a lead that only ties with the rest of the
    evidence was one guess among several). No reader, no measure: read as the fitted mean."""
    reader = get_reader()
    said = [strip_markers(c) for c in claims(" ".join(lead.split()))]
    said = [t for t in said if t.strip()]
    if reader is None or not said:
        return {}
    others = [
        seg.text
        for m, ev in enumerate(evidence, start=1)
        if m not in cited
        for seg in segment(defang(ev.get("text", "")), cut_start=True, cut_end=True)
        if seg.kind == "sentence"
    ]
    near = reader.similarities(question, said + others)
    best = max(near[t] for t in said)
    return {
        "lead_meaning": best,
        "lead_meaning_gap": best - max((near[t] for t in others), default=0.0),
    }


def _lead_chunk_scores(cited: list[Evidence]) -> dict[str, float]:
    """How well the lead's own chunks matched the question when they were retrieved (their
    dense, keyword-coverage and soft-match scores, ``retrieval/hybrid.py``): the whole passage
    around the lead, read by meaning as well as by words; 0 for a lead that cites nothing.

    Only the documents' chunks have these scores: a web result's ``score`` is the search
    service's own and it has no coverage or soft match. A lead citing web results alone gets
    none of the three, and ``model_probability`` reads each as its fitted mean (it says
    nothing), not as a chunk that matched no word of the question."""
    scored = [ev for ev in cited if ev.get("source") != "web"]
    if cited and not scored:
        return {}
    chunks = scored or [{}]
    return {
        "lead_chunk_dense": max(float(ev.get("score") or 0.0) for ev in chunks),
        "lead_chunk_keywords": max(float(ev.get("coverage") or 0.0) for ev in chunks),
        "lead_chunk_soft": max(float(ev.get("soft") or 0.0) for ev in chunks),
    }


def _evidence_features(
    question: str, evidence: list[Evidence], focus: list[Evidence]
) -> dict[str, float]:
    """What the evidence holds of the question, whatever the answer quotes of it."""
    wanted = content_stems(question)
    texts = [ev.get("text", "") for ev in evidence]
    every = " ".join(texts)
    passage_stems = [content_stems(t) for t in texts]
    # Names after the question's first word ("What", "How" are capitalised, not names).
    q_names = {n.lower() for n in names(question)}
    return {
        "passage_words": (sum(len(t.split()) for t in texts) / len(texts) if texts else 0.0),
        "best_passage_coverage": max((share(wanted, s) for s in passage_stems), default=0.0),
        "max_dense": max((float(ev.get("score") or 0.0) for ev in evidence), default=0.0),
        "max_soft": max((float(ev.get("soft") or 0.0) for ev in evidence), default=0.0),
        "question_figures_missing": float(
            any(n not in every for n in re.findall(QUESTION_FIGURE, question))
        ),
        "question_names_missing": (
            sum(n not in every.lower() for n in q_names) / len(q_names) if q_names else 0.0
        ),
    }


def _by_doc(focus: list[Evidence]) -> dict[str, str]:
    by_doc: dict[str, str] = {}
    for ev in focus:
        by_doc[doc_of(ev)] = by_doc.get(doc_of(ev), "") + " " + defang(ev.get("text", ""))
    return by_doc


def _source_features(
    question: str, evidence: list[Evidence], focus: list[Evidence]
) -> dict[str, float]:
    """How the sources in focus stand towards each other: the dispute model's inputs."""
    pairs = pairs_of(question, focus)
    focus_texts = [ev.get("text", "") for ev in focus]
    by_doc = _by_doc(focus)
    on_topic = [p for p in pairs if p.shared >= PAIR_TOPIC]
    return {
        "sources": float(min(len({doc_of(ev) for ev in evidence}), 4)),
        "opposed_pair": float(any(p.opposed for p in pairs)),
        "topic_pair": float(bool(on_topic)),
        "figure_clash": float(any(p.figures for p in on_topic)),
        "opinion_sources": float(sum(bool(OPINION.search(t)) for t in focus_texts)),
        "hedged": float(any(len(HEDGE.findall(t)) >= 2 for t in focus_texts)),
        "reporting_sources": float(min(3, sum(bool(REPORTING.search(t)) for t in focus_texts))),
        "years_differ": float(
            len({frozenset(YEAR.findall(t)) for t in focus_texts if YEAR.search(t)}) >= 2
        ),
        "asked_clash": float(any(p.asked for p in pairs)),  # not fitted: ``disputed``
        "hedge_words": float(min(6, sum(len(HEDGE.findall(t)) for t in by_doc.values()))),
    }


# What the dispute model may look at: how the sources stand, never how well they cover the
# question (that is the answer model's business, and it shifts between document sets).
DISPUTE_FEATURES = (
    "opposed_pair",
    "figure_clash",
    "opinion_sources",
    "reporting_sources",
    "years_differ",
    "hedged",
    "yes_no",
    "sources",
    "hedge_words",
)


# What the answer model may look at: the draft, its cited passages and the best-matching
# passage — not counts over the whole result list, which doubles on a retry (20 results).
ANSWER_FEATURES = (
    "answer_coverage",
    "best_passage_coverage",
    "max_dense",
    "max_soft",
    "head_missing_cited",
    "asked_specific",
    "asked_missing_cited",
    "yes_no",
    "question_figures_missing",
    "question_names_missing",
    "hedged",
    "sources",
    "hedge_words",
)
