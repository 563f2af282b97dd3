"""Extractive answer composition for the offline engine.

An answer is built from the evidence's own sentences, so what it can get wrong is *which* text
it quotes. Stitching the top-scoring "sentences" of 3-5 chunks quoted headings glued to prose,
table-of-contents lines, sentences cut in half by a chunk boundary and sentences that shared
one word with the question. Here:

1. Evidence chunks of one document with consecutive ``chunk_index`` (in the chunk id) are
   joined into one passage over their 40-word overlap, so a sentence a boundary cut is read
   whole from its neighbour; one still cut at a passage's edge is dropped.
2. Each passage is segmented with its structure (``masis_core.text.sentences.segment``): only prose
   sentences are quotable; a heading is kept as context for the sentences under it.
3. A sentence bears on the question when it covers enough of the question's content words —
   in absolute terms and against the best sentence (``RELEVANCE``, ``RELATIVE_RELEVANCE``,
   chosen on development data); words of its section heading count half.
4. The answer leads with the best sentence together with its neighbours of the same passage
   that bear on the question or continue it ("This ...", "It ..."), in document order; then
   the other passages' distinct supporting points, each passage's sentences together.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from masis_core.answers.judgement import asked_in, asked_kind, calendar_date
from masis_core.state import Evidence
from masis_core.text.sentences import Segment, content_stems, defang, segment

log = logging.getLogger(__name__)

MAX_ANSWER_SENTENCES = 5
MAX_LEAD_SENTENCES = 3
MAX_PER_PASSAGE = 2
MIN_SENTENCE_WORDS = 4
MAX_SENTENCE_WORDS = 90
PLAIN_SENTENCE_WORDS = 35
LENGTH_PENALTY = 0.005
DUPLICATE_JACCARD = 0.6
# A sentence adding fewer new content words than this share of its own repeats a point.
MIN_NOVELTY = 0.25
# Question words found only in a sentence's section heading count this much.
HEADING_WEIGHT = 0.5
# Share of the question's content words (those the evidence has at all) a sentence must
# cover to bear on the question: the 10th percentile of the best sentence of relevant passages
# on fitzgov-dev (0.333 on 598 questions; 0.403 on the 53 manual questions), which drops 78%
# (90%) of the sentences of irrelevant passages (bench/sentence_relevance.py). Weighting the
# words by their IDF across the evidence measured worse (answers cite the gold page for 89%
# of the manual questions against 92.5%, relevant passages for 59% of fitzgov-dev questions
# against 62%): every retrieved passage shares the question's topic word, so IDF lifts
# generic ones ("keep", "affect", "use") above it.
RELEVANCE = 1 / 3
# ... and this share of the best sentence's coverage: where one sentence covers the whole
# question, one that shares a single word with it ("use" in "How much memory does R use?")
# does not bear on it. The largest share that still cites the gold page for as many manual
# questions as no such bar (0.925; relevant ones for 0.617 vs 0.629 of fitzgov-dev); answers
# shrink from 4.7 to 3.8 sentences.
RELATIVE_RELEVANCE = 0.6
# The researcher's ranking (fused dense, BM25 and soft match) knows which passage is best far
# better than word overlap does: its top passage holds the gold page for 76% of the manual
# questions. A sentence of the passage ranked r gets RANK_WEIGHT / r, and the lead cites the
# gold page for 81% of the manual questions (47% relevant on fitzgov-dev, whose labels are
# sparse) against 75% (40%) with 0.25 x the dense similarity as the prior, as before.
RANK_WEIGHT = 0.5
# Chunks overlap by 40 words (ingest.chunking); a longer search costs nothing that matters.
MAX_OVERLAP_WORDS = 120

_CHUNK_INDEX = re.compile(r"/(\d+)$")
# An enumeration's items: "(2) Lifestyle analysis ...", "3. Fetch ...", "Second, military
# spending ...", and an opener whose tail starts one ("... five key factors: First, the ...").
_ITEM_MARKER = re.compile(r"^\(?(\d{1,2})[.)]$")
_ORDINALS = {
    word: n
    for n, word in enumerate(
        ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"),
        start=1,
    )
}
_ORDINAL_START = re.compile(r"^(?:.*:\s+)?(" + "|".join(_ORDINALS) + r"),\s", re.I)
# What a list of more items than the lead's usual three may fill: the whole answer.
MAX_LIST_SENTENCES = 5
# A sentence that starts like this continues the one before it.
_CONTINUES = re.compile(
    r"^(?:This|These|That|Those|It|Its|They|Their|Such|Here|However|Otherwise|Also|Then|Thus|"
    r"Hence|Therefore|Instead|In this|In that|For example|For instance|In addition|Moreover|"
    r"Furthermore)\b"
)


@dataclass
class Passage:
    """Contiguous text of one document made of one or more evidence chunks."""

    words: list[str]
    owners: list[tuple[int, ...]]  # per word: the evidence markers whose chunk holds it
    cut_start: bool
    cut_end: bool
    segments: list[Segment] = field(default_factory=list)
    word_starts: list[int] = field(default_factory=list)


@dataclass
class Candidate:
    text: str
    passage: int
    order: int  # position among the passage's segments
    markers: list[int]
    stems: set[str]
    context: set[str]  # content stems of the section heading above it
    rank: int  # the best retrieval rank among its chunks (1 = the researcher's top passage)
    item: int | None = None  # its number in an enumeration ("(2) ...", "Second, ...")
    coverage: float = 0.0
    score: float = 0.0


def chunk_index(ev: Evidence) -> int | None:
    """The chunk's position in its document, from ``workspace/doc/000042`` ids."""
    if ev.get("source", "kb") != "kb" or not ev.get("doc_id"):
        return None
    m = _CHUNK_INDEX.search(str(ev.get("chunk_id") or ""))
    return int(m.group(1)) if m else None


def _stems(text: str) -> set[str]:
    """Content stems, with the plural "s" the shared stemmer leaves on short words ("uses",
    "fits", "runs") taken off, so "How much memory does R use?" meets "the memory R uses"."""
    return {
        w[:-1] if len(w) >= 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")) else w
        for w in content_stems(text)
    }


def _overlap(left: list[str], right: list[str]) -> int:
    """Words the end of ``left`` shares with the start of ``right`` (0 when none)."""
    for k in range(min(len(left), len(right), MAX_OVERLAP_WORDS), 0, -1):
        if left[-k:] == right[:k]:
            return k
    return 0


def passages(evidence: list[Evidence]) -> list[Passage]:
    """Evidence joined into passages: neighbouring chunks of one document become one text."""
    indexed: dict[str, list[tuple[int, int]]] = {}
    alone: list[int] = []
    for marker, ev in enumerate(evidence, start=1):
        index = chunk_index(ev)
        if index is None:
            alone.append(marker)
        else:
            indexed.setdefault(str(ev["doc_id"]), []).append((index, marker))
    runs: list[tuple[int | None, list[int]]] = [(None, [m]) for m in alone]
    for chunks in indexed.values():
        chunks.sort()
        start = len(runs)
        for index, marker in chunks:
            first, markers = runs[-1] if len(runs) > start else (None, [])
            if first is not None and first + len(markers) == index:
                markers.append(marker)
            else:
                runs.append((index, [marker]))
    out = []
    for first, markers in runs:
        words: list[str] = []
        owners: list[tuple[int, ...]] = []
        for marker in markers:
            # Evidence is data, not instructions: markers inside it are defanged first.
            new = defang(evidence[marker - 1].get("text", "")).split()
            k = _overlap(words, new)
            for i in range(len(words) - k, len(words)):
                owners[i] = (*owners[i], marker)
            words.extend(new[k:])
            owners.extend((marker,) for _ in new[k:])
        out.append(Passage(words, owners, cut_start=bool(first), cut_end=first is not None))
    return out


def _segment(p: Passage) -> None:
    text = " ".join(p.words)
    p.word_starts = list(accumulate((len(w) + 1 for w in p.words[:-1]), initial=0))
    p.segments = segment(text, cut_start=p.cut_start, cut_end=p.cut_end)


def _markers(p: Passage, seg: Segment) -> list[int]:
    """The best-ranked chunk that holds the whole sentence, else the chunks of its first and
    last words: a sentence read across a chunk boundary cites both."""
    lo = bisect_right(p.word_starts, seg.start) - 1
    hi = bisect_right(p.word_starts, seg.end - 1) - 1
    # Each chunk holds a contiguous run of the passage's words: one that holds both ends
    # holds the whole sentence.
    common = set(p.owners[lo]) & set(p.owners[hi])
    if common:
        return [min(common)]
    return sorted({min(p.owners[lo]), min(p.owners[hi])})


def _item(p: Passage, seg: Segment) -> int | None:
    """The sentence's number in an enumeration: the list marker the segmenter took off
    before it, else an ordinal word that opens it (or the tail after its colon)."""
    at = bisect_right(p.word_starts, seg.start) - 1
    if at > 0 and (m := _ITEM_MARKER.match(p.words[at - 1])):
        return int(m.group(1))
    if m := _ORDINAL_START.match(seg.text):
        return _ORDINALS[m.group(1).lower()]
    return None


def _next_item(before: Candidate, after: Candidate) -> bool:
    """``after`` is the item that follows ``before`` in one enumeration."""
    return before.item is not None and after.item == before.item + 1


def candidates(question: str, evidence: list[Evidence]) -> tuple[list[Passage], list[Candidate]]:
    """Every quotable sentence of the evidence, scored for the question."""
    found: list[Candidate] = []
    joined = passages(evidence)
    for n, p in enumerate(joined):
        _segment(p)
        heading: set[str] = set()
        for order, seg in enumerate(p.segments):
            if seg.kind == "heading":
                heading = _stems(seg.text)
                continue
            if seg.kind != "sentence":
                continue
            if not MIN_SENTENCE_WORDS <= len(seg.text.split()) <= MAX_SENTENCE_WORDS:
                continue
            markers = _markers(p, seg)
            found.append(
                Candidate(
                    seg.text,
                    n,
                    order,
                    markers,
                    _stems(seg.text),
                    heading,
                    min(markers),
                    _item(p, seg),
                )
            )
    _score(question, found)
    return joined, found


def _score(question: str, found: list[Candidate]) -> None:
    """Coverage of the question's content words that the evidence has at all (each counts the
    same: see ``RELEVANCE``), plus the retrieval rank's prior, minus a little for length."""
    wanted = _stems(question)
    present = {t for t in wanted if any(t in c.stems or t in c.context for c in found)}
    for c in found:
        said = len(present & c.stems)
        context = len((present & c.context) - c.stems)
        c.coverage = (said + HEADING_WEIGHT * context) / len(present) if present else 0.0
        n_words = len(c.text.split())
        c.score = (
            c.coverage
            + RANK_WEIGHT / c.rank
            - LENGTH_PENALTY * max(0, n_words - PLAIN_SENTENCE_WORDS)
        )


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _repeats(c: Candidate, chosen: list[Candidate]) -> bool:
    if any(c.text == o.text or _jaccard(c.stems, o.stems) > DUPLICATE_JACCARD for o in chosen):
        return True
    said = set().union(*(o.stems for o in chosen)) if chosen else set()
    return bool(c.stems) and len(c.stems - said) / len(c.stems) < MIN_NOVELTY


def _enumeration(best: Candidate, by_order: dict[int, Candidate]) -> list[Candidate]:
    """The whole enumeration ``best`` is an item of, when it is short and starts at its first
    item ("(1) ... (2) ... (3) ..."); else ``[best]``."""
    items = [best]
    while (prev := by_order.get(items[0].order - 1)) and _next_item(prev, items[0]):
        items.insert(0, prev)
    while (nxt := by_order.get(items[-1].order + 1)) and _next_item(items[-1], nxt):
        items.append(nxt)
    whole = items[0].item == 1 and len(items) <= MAX_LIST_SENTENCES
    return items if whole else [best]


def _lead(best: Candidate, found: list[Candidate], relevance: float) -> list[Candidate]:
    """The best sentence with the sentences around it that bear on the question or carry it
    on, as long as nothing but prose lies between them (a heading starts another topic). A
    lead that starts "It ..." or "This ..." first gets the sentence it refers back to. An
    item of a short enumeration brings the whole of it ("five key factors: First, ...",
    "Second, ..."; "(1) ... (2) ... (3) ..."; up to ``MAX_LIST_SENTENCES``): the third step
    of a method alone had answered "How does a forensic accountant trace hidden assets?". Of
    a longer one (NUT's eight-step data path, from the outage to the pager) the best item
    leads with the items after it."""
    by_order = {c.order: c for c in found if c.passage == best.passage}
    span = _enumeration(best, by_order)
    first, last = span[0].order, span[-1].order
    while len(span) < MAX_LEAD_SENTENCES and (prev := by_order.get(first - 1)):
        if not _CONTINUES.match(span[0].text) or _repeats(prev, span):
            break
        span.insert(0, prev)
        first -= 1
    while nxt := by_order.get(last + 1):
        listed = _next_item(span[-1], nxt) and len(span) < MAX_LIST_SENTENCES
        bears = nxt.coverage >= relevance or _CONTINUES.match(nxt.text)
        if not (listed or (bears and len(span) < MAX_LEAD_SENTENCES)) or _repeats(nxt, span):
            break
        span.append(nxt)
        last += 1
    while len(span) < MAX_LEAD_SENTENCES and (prev := by_order.get(first - 1)):
        if prev.coverage < relevance or _repeats(prev, span):
            break
        span.insert(0, prev)
        first -= 1
    return span


def _asked_first(question: str, parts: list[list[Candidate]]) -> list[list[Candidate]]:
    """The parts (the lead span, then each passage's points), led by the first one holding
    what the question asks for (``judgement.asked_in``) more plainly than the lead: "When
    was NUT first released?" led with a sentence on its Git history "since 2.7" and gave
    "released October 31, 1999" second. Only the order changes, so the critic judges the
    same sentences."""
    kind = asked_kind(question)
    if kind in ("open", "yes_no"):
        return parts
    texts = [" ".join(c.text for c in part) for part in parts]
    # For "when", a calendar date answers better than "since" or "after 500 hours".
    strength = [
        asked_in(kind, question, t) * (1 + (kind == "date" and calendar_date(t, question)))
        for t in texts
    ]
    best = max(range(len(parts)), key=lambda i: strength[i])  # the first of the strongest
    if strength[best] <= strength[0]:
        return parts
    return [parts[best], *parts[:best], *parts[best + 1 :]]


def compose(
    question: str,
    evidence: list[Evidence],
    relevance: float = RELEVANCE,
    relative: float = RELATIVE_RELEVANCE,
) -> list[dict[str, Any]]:
    """The answer as sentences with their markers: the best passage first, then the other
    sources' distinct points. Only when no sentence bears on the question is the closest one
    given alone (the critic then judges how little it covers)."""
    _, found = candidates(question, evidence)
    ranked = sorted(found, key=lambda c: (-c.score, c.markers, c.order))
    best = max((c.coverage for c in found), default=0.0)
    relevance = max(relevance, relative * best)
    relevant = [c for c in ranked if c.coverage >= relevance]
    if not relevant:
        closest = [c for c in ranked if c.coverage > 0][:1]
        return [{"text": c.text, "citations": c.markers} for c in closest]
    span = _lead(relevant[0], found, relevance)
    chosen = list(span)
    per_passage = {span[0].passage: 0}
    groups: dict[int, list[Candidate]] = {}
    for c in relevant:
        if len(chosen) >= MAX_ANSWER_SENTENCES:
            break
        if c in chosen or per_passage.get(c.passage, 0) >= MAX_PER_PASSAGE or _repeats(c, chosen):
            continue
        chosen.append(c)
        per_passage[c.passage] = per_passage.get(c.passage, 0) + 1
        groups.setdefault(c.passage, []).append(c)
    parts = [span, *(sorted(group, key=lambda c: c.order) for group in groups.values())]
    ordered = [c for part in _asked_first(question, parts) for c in part]
    log.debug("composed %d sentences from %d candidates", len(ordered), len(found))
    return [{"text": c.text, "citations": c.markers} for c in ordered]
