"""The section first, then the passage inside it.

A document's own unit of meaning is its section: an outline entry, a heading and the text
under it, a FAQ entry's question and its answer. Windows picked across the whole evidence throw
that signal away: on FAQ PDFs the best window inside the right entry often missed the
entry's opening where the opening answered (issue 51). So the evidence's sections are ranked
as wholes, heading and body, by the question's keywords (BM25 over the sections) and by the
reader's reading of it and by its best window's fitted score, as z-scores weighed by
``AnswerPolicy.section_weights``; the lead is the best window
inside the first section, scored within it, or the opening of a short section (a FAQ entry);
the two options beside it are the section's second-best window and the next section's best.
Measured in ``bench.section_answers`` (docs/measurements/passages.md).
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from masis_core.answers import compose as today
from masis_core.answers.compose import (
    DUPLICATE_JACCARD,
    MAX_LEAD_SENTENCES,
    Sentence,
    Window,
    opens_entry,
    whole_list,
)
from masis_core.llm.reader import get_reader
from masis_core.policy import POLICY
from masis_core.state import Evidence
from masis_core.text.sentences import content_stems

# A section whose quotable text is this short is an entry (a FAQ answer, a glossary item): its
# opening answers (48 of 60 FAQ questions in its first 50 words), so it is quoted from there.
SHORT_SECTION_WORDS = POLICY.short_section_words
OPENING_WORDS = POLICY.opening_words
MAX_OPENING_WORDS = POLICY.max_opening_words
BM25_K1 = POLICY.bm25_k1
BM25_B = POLICY.bm25_b
HEADING_REPEAT = POLICY.heading_repeat
SECTION_WEIGHTS = POLICY.section_weights
OFFERED = POLICY.offered


@dataclass
class Section:
    """One section of the evidence: its heading, its quotable sentences and its windows."""

    key: tuple[Any, ...]  # the stored section (document, number), else (passage, section)
    heading: str
    sentences: list[Sentence] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    keywords: float = 0.0  # BM25 of the question over the sections
    meaning: float = 0.0  # the reader's cosine of the question and the section
    score: float = 0.0  # the two as z-scores over the evidence's sections, summed

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def words(self) -> int:
        return sum(len(s.text.split()) for s in self.sentences)


def group(found: list[Window], headings: dict[int, list[str]]) -> list[Section]:
    """The windows grouped by the section they lie in, each section with its sentences in
    document order."""
    by_key: dict[tuple[Any, ...], Section] = {}
    seen_runs: set[int] = set()
    for w in found:
        first = w.sentences[0]
        # A stored section is one section in every passage it shows in: two chunks of a long
        # section, retrieved apart, are ranked as one whole.
        key: tuple[Any, ...] = first.stored or (w.passage, first.section)
        sec = by_key.setdefault(key, Section(key, heading_of(w, headings)))
        sec.windows.append(w)
        if id(w.run) not in seen_runs:
            seen_runs.add(id(w.run))
            sec.sentences.extend(w.run)
    return list(by_key.values())


def _bm25(question: str, sections: list[Section]) -> list[float]:
    """BM25 of the question's content stems over the sections (idf from these sections).
    The stems are summed in sorted order: a set's order moves with Python's hash seed, and
    with it a sum's last bits, which decided ties between sections (tests/test_determinism.py)."""
    wanted = sorted(content_stems(question))
    bags = []
    for sec in sections:
        bag: Counter[str] = Counter()
        for s in sec.sentences:
            bag.update(s.stems)
        for stem in content_stems(sec.heading):
            bag[stem] += HEADING_REPEAT
        bags.append(bag)
    n = len(bags)
    lengths = [sum(b.values()) for b in bags]
    mean_length = (sum(lengths) / n) if n else 0.0
    out = []
    for bag, length in zip(bags, lengths, strict=True):
        score = 0.0
        for t in wanted:
            tf = bag.get(t, 0)
            if not tf:
                continue
            df = sum(1 for b in bags if t in b)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = 1 - BM25_B + BM25_B * (length / mean_length if mean_length else 1.0)
            score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * norm)
        out.append(score)
    return out


def _z(values: list[float]) -> list[float]:
    if len(values) < 2:
        return [0.0 for _ in values]
    sd = statistics.pstdev(values)
    mean = statistics.fmean(values)
    return [(v - mean) / sd if sd > 0 else 0.0 for v in values]


def rank(question: str, sections: list[Section]) -> list[Section]:
    """The sections, best first: keywords, the reader's reading and the best window's score
    as z-scores summed. The reading is the closest of the section's heading and sentences to
    the question (the sentences' similarities are the ones the window scorer just read,
    remembered by the reader: ranking costs no new reading of long texts)."""
    for sec, score in zip(sections, _bm25(question, sections), strict=True):
        sec.keywords = score
    reader = get_reader()
    if reader is not None and sections:
        said = {sec.key: [sec.heading, *(s.text for s in sec.sentences)] for sec in sections}
        texts = [t for texts_of in said.values() for t in texts_of if t]
        near = reader.similarities(question, list(dict.fromkeys(texts)))
        for sec in sections:
            sec.meaning = max((near[t] for t in said[sec.key] if t), default=0.0)
    best = [max(w.score for w in sec.windows) for sec in sections]
    zk = _z([s.keywords for s in sections])
    zm = _z([s.meaning for s in sections]) if reader is not None else [0.0] * len(sections)
    zw = _z(best)
    for sec, k, m, w in zip(sections, zk, zm, zw, strict=True):
        wk, wm, ww = SECTION_WEIGHTS
        sec.score = wk * k + wm * m + ww * w
    order = {id(sec): n for n, sec in enumerate(sections)}  # ties: the evidence's order
    return sorted(sections, key=lambda s: (-s.score, order[id(s)]))


def opening(sec: Section) -> Window | None:
    """A FAQ entry's opening: its first sentences, whole, to at least ``OPENING_WORDS`` words
    (at most ``MAX_OPENING_WORDS``, and ``MAX_LEAD_SENTENCES`` sentences). Only an entry
    headed by its question: that its opening answers was measured on FAQ entries, and a
    report's short section may open with anything (its best window is quoted instead)."""
    if not opens_entry(sec.heading) or sec.words > SHORT_SECTION_WORDS or not sec.sentences:
        return None
    first = sec.sentences[0]
    single = next((w for w in sec.windows if w.sentences == [first]), None)
    if single is None or first.follows:
        return None
    run, taken, words = single.run, 0, 0
    while taken < min(len(run), MAX_LEAD_SENTENCES) and words < OPENING_WORDS:
        more = len(run[taken].text.split())
        if taken and words + more > MAX_OPENING_WORDS:
            break
        taken, words = taken + 1, words + more
    return Window(single.passage, 0, run[:taken], run, single.features, single.score)


def _overlaps(a: Window, b: Window) -> bool:
    if {id(s) for s in a.sentences} & {id(s) for s in b.sentences}:
        return True
    x, y = a.stems, b.stems
    return bool(x | y) and len(x & y) / len(x | y) > DUPLICATE_JACCARD


def best_in(sec: Section, away_from: list[Window]) -> Window | None:
    """The section's best-scored window that repeats none of ``away_from``."""
    for w in sorted(sec.windows, key=lambda w: (-w.score, w.start, len(w.sentences))):
        if not any(_overlaps(w, o) for o in away_from):
            return w
    return None


def choose(question: str, found: list[Window], headings: dict[int, list[str]]) -> list[Window]:
    """The lead (the first section's opening or its best window), then its second-best window
    and the next section's best: the three candidates a review offers."""
    ranked = rank(question, group(found, headings))
    if not ranked:
        return []
    top = ranked[0]
    lead = opening(top) or best_in(top, [])
    if lead is None:
        return []
    lead = whole_list(lead) if len(lead.sentences) < MAX_LEAD_SENTENCES else lead
    chosen = [lead]
    second = best_in(top, chosen)
    if second is not None:
        chosen.append(second)
    # The next sections' best, then (a section with one window only) their second best.
    for sec in [*ranked[1:], *ranked]:
        if len(chosen) >= OFFERED:
            break
        other = best_in(sec, chosen)
        if other is not None:
            chosen.append(other)
    return chosen


def ranking(question: str, evidence: list[Evidence]) -> dict[str, float]:
    """How clearly the first section won, for the judge (``features.features``): its
    summed z-score over the second's, its BM25 score and its reader cosine. Empty when the
    evidence has no sections (the composer then chose as before)."""
    found, headings = scored_windows(question, evidence)
    if not any(len(h) > 1 for h in headings.values()):
        return {}
    ranked = rank(question, group(found, headings))
    if not ranked:
        return {}
    margin = ranked[0].score - ranked[1].score if len(ranked) > 1 else 0.0
    return {
        "section_margin": margin,
        "section_keywords": ranked[0].keywords,
        "section_meaning": ranked[0].meaning,
    }


_RECENT: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_RECENT_LOCK = threading.Lock()


def scored_windows(
    question: str, evidence: list[Evidence]
) -> tuple[list[Window], dict[int, list[str]]]:
    """``compose.sectioned_windows``, remembered for the last few drafts: the critic reads the
    section ranking of the evidence the synthesizer just composed from, and scoring every
    window again (the reader over every sentence) doubled the offline engine's time."""
    chunks = tuple((str(ev.get("chunk_id")), hash(ev.get("text", ""))) for ev in evidence)
    key = (question, chunks, tuple(sorted(today.current_weights().items())))
    with _RECENT_LOCK:
        if key in _RECENT:
            _RECENT.move_to_end(key)
            return _RECENT[key]
    found = today.sectioned_windows(question, evidence)
    with _RECENT_LOCK:
        _RECENT[key] = found
        while len(_RECENT) > 8:  # a run's drafts: its synthesizer's and critic's calls
            _RECENT.popitem(last=False)
    return found


def compose(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The answer as sentences with their markers and their passage (0: the lead, 1 and 2:
    the options beside it), each passage's sentences in document order. Evidence without
    sections (one section: no heading in it) is composed as before (``compose.choose``)."""
    found, headings = scored_windows(question, evidence)
    if not any(len(h) > 1 for h in headings.values()):
        chosen = today.choose(found)
    else:
        chosen = choose(question, found, headings)
    return [
        {"text": s.text, "citations": s.markers, "passage": n, "heading": heading_of(w, headings)}
        for n, w in enumerate(chosen)
        for s in w.sentences
    ]


def heading_of(w: Window, headings: dict[int, list[str]]) -> str:
    """The heading of the section the window lies in ("" when none is in the evidence)."""
    names = headings.get(w.passage, [])
    at = w.sentences[0].section
    return names[at] if at < len(names) else ""
