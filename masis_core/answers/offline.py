"""The offline engine: planner, extractive synthesizer and rule-based critic, no model at all.

Deterministic by design: the same evidence always gives the same answer, so an analyst can
trust that nothing was invented — every sentence of an answer is a sentence of a document.
"""

from __future__ import annotations

from typing import Any

from masis_core.answers import aggregate, judgement, sections
from masis_core.answers.confidence import LOW_CONFIDENCE, rounded
from masis_core.answers.followup import standalone, subject_queries
from masis_core.answers.questions import MAX_ALTERNATIVE_CHARS, MAX_QUERY_CHARS
from masis_core.answers.stances import passage_clash
from masis_core.retrieval.quality import keywords
from masis_core.state import Critique, Evidence
from masis_core.text.sentences import content_stems, defang, strip_markers

ALSO_RELEVANT = "Also relevant"


def lead_and_others(answer: str, engine: str) -> tuple[str, str | None]:
    """An offline answer's lead passage, and apart from it the "Also relevant" passages (None
    when there are none), as the screen and the exports lay them out. A model's answer is one
    piece: its paragraphs are prose, not passages."""
    if engine != "offline" or "\n\n" not in answer:
        return answer, None
    lead, others = answer.split("\n\n", 1)
    return lead, others


def disagreements(question: str, lead: str, others: str) -> list[str]:
    """Each "Also relevant" passage that disagrees with the lead (``stances.passage_clash``),
    named as the screen and the exports say it, above the passages: read as a plain answer,
    "only one host can monitor the UPS" had stood beside the entry that says any number can."""
    said = strip_markers(lead)
    return [
        f"“{ALSO_RELEVANT}” passage {n} and the lead disagree ({why}): read both before "
        "relying on either."
        for n, other in enumerate(others.split("\n\n"), start=1)
        if (why := passage_clash(question, said, strip_markers(other)))
    ]


def alternatives(question: str) -> list[str]:
    """Rule-based expansion: the question's content words, then the same without question form;
    for a follow-up that leans on the thread, its subject (``followup.subject_queries``)."""
    if subject := subject_queries(question):
        return [q[:MAX_ALTERNATIVE_CHARS] for q in subject]
    q = question[:MAX_QUERY_CHARS]
    terms = sorted(keywords(q), key=q.lower().find)
    alts = []
    if terms:
        alts.append(" ".join(terms)[:MAX_ALTERNATIVE_CHARS])
    statement = q.rstrip("?").strip()
    first, _, rest = statement.partition(" ")
    if first.lower() in {"what", "which", "who", "when", "where", "why", "how"} and rest:
        alts.append(rest[:MAX_ALTERNATIVE_CHARS])
    return [a for a in dict.fromkeys(alts) if a and a.lower() != q.lower()][:2]


def extract_answer(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """Evidence sentences that answer the question, each with its marker(s) and passage: the
    lead passage first, then the two options beside it (``masis_core.answers.sections``); a
    ranking or a total computed over a whole table instead (``masis_core.answers.aggregate``),
    and for such a question no retrieved row alone."""
    computed = aggregate.parts(question, evidence)
    if computed is not None:
        return computed
    if not aggregate.rows_allowed(question, evidence):
        evidence = aggregate.without_rows(evidence)
    return sections.compose(question, evidence)


def render_answer(parts: list[dict[str, Any]]) -> str:
    """Sentences with their markers; a new paragraph for each passage (the lead first, then
    the "Also relevant" ones), so no paragraph joins sentences from different places.

    The markers are the only "[n]" of the draft: a sentence that writes "[2]" itself (a model
    quoting a document, or any escaped or entity form of it) is defanged to "［2］", so the
    evaluator never reads it as a citation."""
    out: list[str] = []
    previous: object = None
    for part in said_once(parts):
        cites = "".join(f"[{m}]" for m in part["citations"])
        sentence = f"{defang(part['text']).rstrip()} {cites}".strip()
        place = part.get("passage", part["citations"])
        if out and place != previous:
            out.append("\n\n")
        elif out:
            out.append(" ")
        out.append(sentence)
        previous = place
    return "".join(out)


def paragraph_headings(parts: list[dict[str, Any]]) -> list[str]:
    """The section heading of each paragraph ``render_answer`` writes, in order: a passage
    whose every sentence was said before writes none, and counting it had titled each card
    after it with the heading of the passage before."""
    out: list[str] = []
    previous: object = None
    for part in said_once(parts):
        place = part.get("passage", part["citations"])
        if not out or place != previous:
            out.append(str(part.get("heading") or ""))
        previous = place
    return out


def said_once(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts without a sentence said before in the same answer (spacing, case and
    markers aside): the NUT FAQ's contents line had led and come again under "Also
    relevant"."""
    seen: set[str] = set()
    out = []
    for part in parts:
        key = " ".join(strip_markers(str(part["text"])).casefold().split())
        if key and key in seen:
            continue
        seen.add(key)
        out.append(part)
    return out


def critique(question: str, answer: str, evidence: list[Evidence]) -> Critique:
    """The calibrated judgement of the draft (``masis_core.answers.judgement``): confidence is
    the estimated probability that the lead passage answers the question, supported by its
    citations (``judgement.judge``); conflicts name two sources that take opposite positions
    on it."""
    verdict = judgement.judge(
        question, answer, evidence, section=sections.ranking(question, evidence)
    )
    said = content_stems(strip_markers(answer))
    # The analyst's own words: a follow-up's added "(Follow-up to: …)" had listed "follow-up".
    missing = sorted(
        {
            w
            for w in keywords(standalone(question))
            if content_stems(w) and not content_stems(w) <= said
        }
    )
    computed = aggregate.confidence(question, answer, evidence)
    confidence = round(verdict.confidence if computed is None else computed, 3)
    return Critique(
        confidence=confidence,
        unsupported_claims=[],
        logical_gaps=missing,
        hallucination=False,
        conflicts=verdict.conflicts,
        recommend_retry=confidence < LOW_CONFIDENCE,
        confidence_model=verdict.model if computed is None else "computed",
        confidence_stages=rounded(verdict.stages),
    )
