"""Extractive passage answers for the offline engine.

The answer leads with ONE contiguous passage of one document: 1-4 adjacent sentences in the
document's own order and words (a page break may fall inside), chosen as the best answer to
the question as a whole; then at most two short passages from other places ("Also
relevant"). A sentence collage — the best-scoring sentences of several chunks stitched
together — had led "What function reads a data frame from a text file?" with a sentence on
text-file conventions. Neighbouring chunks of a document are joined over their overlap (a
sentence a boundary cut is read whole), segmented (``masis_core.text.sentences.segment``:
only prose is quotable), and every window of adjacent sentences is scored as a whole
(``window_features``) with weights fitted by ``bench/fit_passages.py``
(``passage_weights.json``).
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
import zlib
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any

from masis_core.answers.question import asked_in, asked_kind, how_to, new_code, phrase_pairs
from masis_core.answers.rows import Table, asked_of, asked_rows, reading, table_of
from masis_core.llm.reader import get_reader
from masis_core.policy import POLICY
from masis_core.state import Evidence
from masis_core.text.places import PATH_SEPARATOR, heading_path
from masis_core.text.sentences import (
    STRONG_OPENERS,
    Segment,
    content_stems,
    defang,
    prose_with_code,
    segment,
)
from masis_core.text.words import STOP_WORDS

log = logging.getLogger(__name__)

WEIGHTS_PATH = Path(__file__).with_name("passage_weights.json")
MAX_LEAD_SENTENCES = POLICY.max_lead_sentences
MAX_ALSO = POLICY.max_also
MAX_ALSO_SENTENCES = POLICY.max_also_sentences
MIN_SENTENCE_WORDS = POLICY.min_sentence_words
MAX_SENTENCE_WORDS = POLICY.max_sentence_words
MAX_WINDOW_WORDS = POLICY.max_window_words
# A window must cover this share of the question's content words (those the evidence has at
# all) to be quoted: the 10th percentile of the best sentence of relevant passages on
# fitzgov-dev; "Also relevant" passages also need this share of the lead's coverage.
RELEVANCE = POLICY.relevance
RELATIVE_RELEVANCE = POLICY.relative_relevance
DUPLICATE_JACCARD = POLICY.duplicate_jaccard
# Question words found only in a sentence's section heading count this much.
HEADING_WEIGHT = POLICY.heading_weight
# Chunks overlap by 40 words (ingest.chunking); a longer search costs nothing that matters.
MAX_OVERLAP_WORDS = POLICY.max_overlap_words

_CHUNK_INDEX = re.compile(r"/(\d+)$")
_ITEM_MARKER = re.compile(r"^\(?(\d{1,2})[.)]$")
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
_ORDINAL_START = re.compile(r"^(?:.*:\s+)?(" + "|".join(_ORDINALS) + r"),\s", re.I)
# A sentence that starts like this refers back to the one before it.
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
    # Each section's heading, in order ("" for the text before the passage's first heading):
    # a heading, or a FAQ entry's question, opens a section (``answers.sections``).
    headings: list[str] = field(default_factory=list)
    # Per word: the stored section it lies in, (document, section number, title), from its
    # chunk's ``sections`` (``ingest.sections``); None where the chunk has none.
    stored: list[tuple[str, int, str] | None] = field(default_factory=list)
    # Per section (``headings``): its stored key (document, number) when a stored section's
    # start opened it, so its text in another passage is the same section.
    keys: list[tuple[str, int] | None] = field(default_factory=list)


@dataclass
class Sentence:
    text: str
    markers: list[int]
    stems: set[str]
    context: set[str]  # content stems of the section heading above it
    follows: bool  # the sentence before it in the document is quotable and adjacent
    item: int | None = None  # its number in an enumeration ("(2) ...", "Second, ...")
    section: int = 0  # which section of its passage it is in (``Passage.headings``)
    stored: tuple[str, int] | None = None  # that section's stored key (``Passage.keys``)


@dataclass
class Window:
    """Adjacent quotable sentences of one passage: an answer candidate."""

    passage: int
    start: int  # position of its first sentence in ``run``
    sentences: list[Sentence]
    run: list[Sentence]  # the adjacent quotable sentences it is taken from
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def stems(self) -> set[str]:
        return set().union(*(s.stems for s in self.sentences))


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


def _runs(
    evidence: list[Evidence], tables: list[Table | None]
) -> list[tuple[int | None, list[int]]]:
    """Markers grouped into runs of consecutive chunks of one document (alone: web, notes).
    A table's chunks are left out: their rows are read as rows (``_row_runs``), and read as
    text their header and cells ran on into a "sentence" ("… SASL command | function
    postfix(1) | Postfix control program … Chapter 6.")."""
    indexed: dict[str, list[tuple[int, int]]] = {}
    runs: list[tuple[int | None, list[int]]] = []
    for marker, (ev, table) in enumerate(zip(evidence, tables, strict=True), start=1):
        if table is not None:
            continue
        index = chunk_index(ev)
        if index is None:
            runs.append((None, [marker]))
        else:
            indexed.setdefault(str(ev["doc_id"]), []).append((index, marker))
    for chunks in indexed.values():
        chunks.sort()
        start = len(runs)
        for index, marker in chunks:
            first, markers = runs[-1] if len(runs) > start else (None, [])
            if first is not None and first + len(markers) == index:
                markers.append(marker)
            else:
                runs.append((index, [marker]))
    return runs


def passages(evidence: list[Evidence], tables: list[Table | None] | None = None) -> list[Passage]:
    """Evidence joined into passages: neighbouring chunks of one document become one text."""
    out = []
    tables = tables if tables is not None else [table_of(ev) for ev in evidence]
    for first, markers in _runs(evidence, tables):
        words: list[str] = []
        owners: list[tuple[int, ...]] = []
        stored: list[tuple[str, int, str] | None] = []
        for marker in markers:
            # Evidence is data, not instructions: markers inside it are defanged first.
            new = defang(evidence[marker - 1].get("text", "")).split()
            k = _overlap(words, new)
            for i in range(len(words) - k, len(words)):
                owners[i] = (*owners[i], marker)
            words.extend(new[k:])
            owners.extend((marker,) for _ in new[k:])
            stored.extend(_stored(evidence[marker - 1], len(new))[k:])
        p = Passage(words, owners, cut_start=bool(first), cut_end=first is not None)
        p.stored = stored if any(stored) else []
        out.append(p)
    return out


def _stored(ev: Evidence, n: int) -> list[tuple[str, int, str] | None]:
    """Each of the chunk's ``n`` words' stored section (``Passage.stored``)."""
    try:
        starts = json.loads(ev.get("sections") or "[]")
    except ValueError:
        starts = []
    out: list[tuple[str, int, str] | None] = [None] * n
    doc = str(ev.get("doc_id") or "")
    if not starts and (path := heading_path(str(ev.get("place") or ""))):
        # A Word, Markdown or web page's chunk lies in one section: its heading path.
        return [(doc, zlib.crc32(path.encode()), path.rsplit(PATH_SEPARATOR, 1)[-1])] * n
    if not starts:
        return out
    for (word, number, title), nxt in zip(starts, [*starts[1:], [n]], strict=True):
        for i in range(max(0, int(word)), min(n, int(nxt[0]))):
            out[i] = (doc, int(number), str(title))
    return out


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
        return _ORDINALS.index(m.group(1).lower()) + 1
    return None


def whole_list(w: Window) -> Window:
    """The window widened to the whole enumeration it quotes part of ("(1) ... (2) ... (3)
    ...", "three causes: First, ... Second, ..."), when that fits in a lead: the third step
    of a method alone had answered "How does a forensic accountant trace hidden assets?"."""
    run, lo, hi = w.run, w.start, w.start + len(w.sentences)
    first = next((k for k in range(lo, hi) if run[k].item is not None), None)
    if first is None:
        return w
    while first > 0 and (at := run[first].item) is not None and run[first - 1].item == at - 1:
        first -= 1
    while hi < len(run) and (last := run[hi - 1].item) is not None and run[hi].item == last + 1:
        hi += 1
    lo = min(lo, first)
    if run[first].item != 1 or hi - lo > MAX_LEAD_SENTENCES:
        return w
    return Window(w.passage, lo, run[lo:hi], run, w.features, w.score)


_ENTRY_QUESTION = re.compile(r"^[^?]{3,250}\?$")
MAX_ENTRY_WORDS = POLICY.max_entry_words
MIN_ENTRY_WORDS = POLICY.min_entry_words
_REPLY = re.compile(r"^(?:Yes|No)(?:, \w+)?[.!]$")  # a FAQ entry's first word: the answer
# A section's number set apart from its title ("1.3." then "What compiler can I use."): a
# run-in heading, its title set as a sentence (the Rcpp FAQ's style).
_RUN_IN_NUMBER = re.compile(r"^(?:\d{1,2}|[A-Z])(?:\.\d{1,3})+\.?$")
MAX_TITLE_WORDS = POLICY.max_title_words
# An admonition's label names no section: "Note:" had titled a card.
_LABEL = re.compile(r"^(?:Note|Tip|Caution|Warning|Important|Attention|Hint|Remark):?$")
_ASKS_AS_TITLE = re.compile(
    r"^(?:How|What|Why|Can|Could|Does|Do|Is|Are|Which|Where|When|Should|Will)\s[^?]*[^.?]\.$"
)
_NUMBER_PREFIX = re.compile(r"^(?:\d{1,4}|[A-Z])(?:\.\d{1,3})*\.?\s+")


def opens_entry(text: str) -> bool:
    """A question on its own opens a FAQ entry: the section it heads is its answer."""
    words = len(text.split())
    return MIN_ENTRY_WORDS <= words <= MAX_ENTRY_WORDS and bool(_ENTRY_QUESTION.match(text))


def credible_heading(text: str) -> bool:
    """A heading the segmenter found that names a section: a short title that opens with a
    capital or a digit. A reference's number before the rest of its sentence ("FAQ 2.2.1 both
    which use ...", "2.2.1 because it takes care of ...") or a label ("Note:") is none."""
    title = _NUMBER_PREFIX.sub("", text, count=1)
    if not title or _LABEL.match(title) or len(title.split()) > MAX_TITLE_WORDS:
        return False
    return title[0].isupper() or title[0].isdigit()


def _ends_on_number(seg: Segment) -> bool:
    """Whether a section's number that ends ``seg`` may be a run-in heading's: the piece is
    no prose (code or debris took the number in), or it is a title before it ("Compiling
    and Linking 2.1.": a chapter's heading, then its first section's number)."""
    if seg.kind != "sentence":
        return True
    title = seg.text.split()[:-1]
    return bool(title) and all(w[0].isupper() or w.lower() in STOP_WORDS for w in title)


def _run_in(segments: list[Segment], i: int, cut: bool = False) -> str | None:
    """The heading that segment ``i`` titles when it is a run-in heading's title: a short
    sentence right after a section's number set apart ("2.9." "Can I use Rcpp with Visual
    Studio."), quoted as prose before; or, first in a passage ``cut`` from its document's
    text before, a question set with a full stop ("How do I use Rcpp in my package."): prose
    asks with a question mark."""
    seg = segments[i]
    j = i - 1
    while j >= 0 and segments[j].kind == "header":
        j -= 1
    # The number ends the piece before, which is no prose: code or debris had taken it in
    # ("... Rcpp::List dimnms; 3.9." then "Why can long long types not be cast correctly.").
    number = segments[j].text.split()[-1] if j >= 0 and _ends_on_number(segments[j]) else ""
    if seg.kind != "sentence" or len(seg.text.split()) > MAX_TITLE_WORDS:
        return None
    if j < 0 and cut and _ASKS_AS_TITLE.match(seg.text):
        return seg.text.removesuffix(".")  # its number was in the chunk before, not retrieved
    if not _RUN_IN_NUMBER.match(number) or not seg.text[0].isupper():
        return None
    return f"{number} {seg.text.removesuffix('.')}"


def _heading(
    segments: list[Segment], i: int, answered: bool, cut: bool = False
) -> str | bool | None:
    """What segment ``i`` is to the sections: the heading it opens (a string), ``False`` for
    a heading-like piece that opens none and is not quoted either (a label, a reference's
    number, a question restated under its entry's heading before any answer), else None."""
    seg = segments[i]
    if seg.kind == "heading":
        return seg.text if credible_heading(seg.text) else False
    if (run_in := _run_in(segments, i, cut)) is not None:
        return run_in
    if seg.kind == "sentence" and _ENTRY_QUESTION.match(seg.text):
        if not answered:
            return False  # "Ok, I can create a matrix, but how do I set its names?"
        return seg.text if opens_entry(seg.text) else None
    return None


def quotable(p: Passage) -> list[list[Sentence]]:
    """The passage's prose as runs of adjacent quotable sentences. A heading, a table, a
    fragment or debris ends a run; a running header (a page break) does not."""
    p.word_starts = list(accumulate((len(w) + 1 for w in p.words[:-1]), initial=0))
    p.segments = segment(" ".join(p.words), cut_start=p.cut_start, cut_end=p.cut_end)
    runs: list[list[Sentence]] = [[]]
    heading: set[str] = set()
    p.headings, p.keys = [""], [None]
    at: tuple[str, int, str] | None = None  # the stored section the last segment lay in
    answered = True  # the text before the first heading is no entry's question
    title: list[str] = []  # the words of the stored title not yet seen in the text
    for i, seg in enumerate(p.segments):
        if seg.kind == "header":
            continue
        if p.stored and (now := _stored_at(p, seg)) != at:
            if now is not None:  # a stored section starts: its title heads what follows
                p.headings.append(now[2])
                p.keys.append(now[:2])
                heading, title = _stems(now[2]), _title_words(now[2])
                runs.append([])
            at = now
        rest = _title_rest(title, seg.text) if title else None
        if rest is not None:  # the stored title's own words, in one piece or two ("...
            title, answered = rest, False  # upsmon?" then "I have to run THREE ...!")
            runs.append([])
            continue
        title = []
        p.segments[i] = _label_sentence(p.segments, i)
        seg = p.segments[i]  # noqa: PLW2901 (the sentence a label's number stood before)
        opened = _heading(p.segments, i, answered, p.cut_start)
        if isinstance(opened, str):
            if runs[-1] and runs[-1][-1].text.split()[-1] == opened.split()[0]:
                runs[-1].pop()  # "Compiling and Linking 2.1.": a heading, not a sentence
            if p.keys[-1] is None or not _names(opened, p.headings[-1]):
                p.headings.append(opened)  # a heading the stored ones do not name
                p.keys.append(None)
                heading = _stems(opened)
            answered = False
        reply = bool(_REPLY.match(seg.text))  # "Yes." under a FAQ entry's question
        fits = reply or MIN_SENTENCE_WORDS <= len(seg.text.split()) <= MAX_SENTENCE_WORDS
        prose = seg.kind == "sentence" or (seg.kind == "debris" and prose_with_code(seg.text))
        if opened is not None or (not prose and not reply) or not fits:
            runs.append([])
            continue
        follows, answered = bool(runs[-1]), True
        runs[-1].append(
            Sentence(
                seg.text,
                _markers(p, seg),
                _stems(seg.text),
                heading,
                follows,
                _item(p, seg),
                len(p.headings) - 1,
                p.keys[-1],
            )
        )
    return [run for run in runs if run]


# A heading's printed number: "9", "3.2.", "B.4" (not a lone capital: "I have to run ...").
_SECTION_NUMBER = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})*|[A-Z](?:\.\d{1,3})+)\.?$")
_NOT_WORD = re.compile(r"[^\w]+")


def _title_words(text: str) -> list[str]:
    """A title's words as compared with the text (NFKC, without punctuation, lower case, a
    leading section number left out): the outline writes "doesn't" where the page has
    "doesn’t", and the page's heading line carries its number."""
    said = text.split()
    if len(said) > 1 and _SECTION_NUMBER.match(said[0]):
        said = said[1:]
    words = (_NOT_WORD.sub("", unicodedata.normalize("NFKC", w)).lower() for w in said)
    return [w for w in words if w]


def _title_rest(title: list[str], text: str) -> list[str] | None:
    """What is left of the stored title once the segment ``text`` is read as its next
    words; None when the segment is not its continuation (the body has begun)."""
    said = _title_words(text)
    return title[len(said) :] if said and title[: len(said)] == said else None


def _stored_at(p: Passage, seg: Segment) -> tuple[str, int, str] | None:
    """The stored section a segment lies in: the one in force at its first word, or the one
    whose title starts right after that word when the word is the heading's printed number
    ("9 Why doesn't upsd ...": the outline's title starts at "Why", and the heading belongs
    to its own section, not to the one before)."""
    first = bisect_right(p.word_starts, seg.start) - 1
    now = p.stored[first]
    ahead = first + 1
    if (
        ahead < len(p.stored)
        and p.word_starts[ahead] < seg.end
        and p.stored[ahead] != now
        and _SECTION_NUMBER.match(p.words[first])
    ):
        return p.stored[ahead]
    return now


# A sentence after a label's number ("Answer 1 We try to follow the ... philosophy."): the
# segmenter reads "1" as a chapter's number and the sentence as its title; a title neither
# ends with a full stop nor opens like this.
_LABEL_NUMBER = re.compile(r"^\d{1,2}$")
MIN_LABEL_SENTENCE_WORDS = POLICY.min_label_sentence_words


def _label_sentence(segments: list[Segment], i: int) -> Segment:
    """A "heading" that is a sentence after a label and its bare number ("Answer" then "1 We
    try to follow ..."), as the sentence it is (without the number); any other segment as it
    is (a code listing's line number before prose keeps its heading: "2 This generates ...")."""
    seg = segments[i]
    words = seg.text.split()
    j = i - 1
    while j >= 0 and segments[j].kind == "header":
        j -= 1
    label = segments[j].text.split() if j >= 0 else []
    if (
        seg.kind != "heading"
        or len(label) != 1
        or not label[0][:1].isupper()
        or len(words) <= MIN_LABEL_SENTENCE_WORDS
        or not _LABEL_NUMBER.match(words[0])
        or words[1] not in STRONG_OPENERS
        or not seg.text.endswith((".", "!"))
    ):
        return seg
    skip = seg.text.index(words[1])
    return Segment("sentence", seg.text[skip:], seg.start + skip, seg.end)


def _names(line: str, title: str) -> bool:
    """The heading line is the stored section's own title ("1.3 What compiler can I use?"
    under the outline's "What compiler can I use?")."""
    said, named = _stems(line), _stems(title)
    return bool(named) and named <= said


def _ranks(evidence: list[Evidence]) -> dict[int, int]:
    """Each marker's retrieval rank within its source: documents and the web rank apart, so
    a web result is not pushed behind every document passage by its position in the list."""
    seen: dict[str, int] = {}
    out = {}
    for marker, ev in enumerate(evidence, start=1):
        source = str(ev.get("source", "kb"))
        seen[source] = seen.get(source, 0) + 1
        out[marker] = seen[source]
    return out


@lru_cache(maxsize=1)
def load_weights() -> dict[str, float]:
    """The passage scorer's weights, fitted by ``python -m bench.fit_passages --write``."""
    return dict(json.loads(WEIGHTS_PATH.read_text())["weights"])


# A workspace's own weights, refitted on its analyst's picks (``workspaces.picks``), for the
# drafts of one run; the shipped ones otherwise.
_WEIGHTS: ContextVar[dict[str, float] | None] = ContextVar("passage_weights", default=None)


@contextmanager
def scoring_with(weights: dict[str, float] | None) -> Iterator[None]:
    """Windows are scored with ``weights`` inside the block (None: the shipped weights)."""
    token = _WEIGHTS.set(weights)
    try:
        yield
    finally:
        _WEIGHTS.reset(token)


def current_weights() -> dict[str, float]:
    return _WEIGHTS.get() or load_weights()


def _coverage(sentences: list[Sentence], present: set[str]) -> float:
    said = set().union(*(s.stems for s in sentences))
    context = set().union(*(s.context for s in sentences)) - said
    if not present:
        return 0.0
    return (len(present & said) + HEADING_WEIGHT * len(present & context)) / len(present)


def window_features(
    question: str,
    w: Window,
    present: set[str],
    rank: int,
    meaning: dict[str, float] | None = None,
) -> dict[str, float]:
    """What the passage scorer reads of one window; each feature means the same on any
    document set. ``meaning``: each sentence's similarity to the question as the reader
    reads it (``masis_core.llm.reader``), when there is one."""
    kind = asked_kind(question)
    coverage = _coverage(w.sentences, present)
    first = _coverage(w.sentences[:1], present)
    own = [_coverage([s], present) for s in w.sentences]
    specific = kind not in ("open", "yes_no")
    holds = specific and asked_in(kind, question, w.text)
    phrases = phrase_pairs(question)
    read = {"meaning": max(meaning[s.text] for s in w.sentences)} if meaning else {}
    return {
        **read,
        "best_sentence": max(own),
        "phrases": len(phrases & phrase_pairs(w.text)) / len(phrases) if phrases else 0.0,
        "new_code": float(how_to(question) and new_code(question, w.text)),
        "coverage": coverage,
        "first_share": first / coverage if coverage else 0.0,
        "asked_kind": float(holds),
        "asked_missing": float(specific and not holds),
        "dangling": float(w.sentences[0].follows and bool(_CONTINUES.match(w.sentences[0].text))),
        # How little of the question the window's sentences say, on average: filler.
        "thin": 1.0 - sum(own) / len(own),
        "sentences": float(len(w.sentences)),
        "rank": 1.0 / rank,
        "heading": len(present & w.sentences[0].context) / len(present) if present else 0.0,
    }


def windows(question: str, evidence: list[Evidence]) -> list[Window]:
    """Every answer candidate of the evidence, with its features and score."""
    return sectioned_windows(question, evidence)[0]


def sectioned_windows(
    question: str, evidence: list[Evidence]
) -> tuple[list[Window], dict[int, list[str]]]:
    """Every answer candidate of the evidence, with its features and score, and each
    passage's section headings (``Passage.headings``; a window's ``passage`` indexes them)."""
    weights = current_weights()
    ranks = _ranks(evidence)
    found: list[Window] = []
    tables = [table_of(ev) for ev in evidence]  # parsed once: rows here, not text there
    joined = passages(evidence, tables)
    places = [quotable(p) for p in joined] + _row_runs(question, tables)
    headings = {n: p.headings for n, p in enumerate(joined)}
    for n, runs in enumerate(places):
        for run in runs:
            for i in range(len(run)):
                for k in range(1, MAX_LEAD_SENTENCES + 1):
                    chosen = run[i : i + k]
                    if len(chosen) < k or (
                        k > 1 and sum(len(s.text.split()) for s in chosen) > MAX_WINDOW_WORDS
                    ):
                        break
                    found.append(Window(n, i, chosen, run))
    wanted = _stems(question)
    present = {t for t in wanted if any(t in w.stems or t in w.sentences[0].context for w in found)}
    found = [w for w in found if _shaped(w, present)]
    reader = get_reader()
    meaning = (
        reader.similarities(question, list({s.text for w in found for s in w.sentences}))
        if reader and found
        else None
    )
    for w in found:
        rank = min(ranks[m] for s in w.sentences for m in s.markers)
        w.features = window_features(question, w, present, rank, meaning)
        w.score = sum(weights.get(k, 0.0) * v for k, v in w.features.items())
    return found, headings


def _row_runs(question: str, tables: list[Table | None]) -> list[list[list[Sentence]]]:
    """Each table chunk's rows that may be the one asked about (``answers.rows.asked_rows``),
    one run of one row each: a row is read with its header, under its heading path, and
    never joined to the row below it."""
    asked = asked_of(question)
    out = []
    for marker, table in enumerate(tables, start=1):
        if table is None:
            continue
        context = _stems(table.heading)
        read = [reading(table, line, asked) for line in asked_rows(table, question)]
        out.append(
            [[Sentence(text, [marker], _stems(text), context, False)] for text in read if text]
        )
    return out


def _shaped(w: Window, present: set[str]) -> bool:
    """A window longer than one sentence opens on the question and ends on it or on a
    sentence that carries the one before on ("This inspection covers ..."): a sentence that
    says nothing of the question at either edge is filler ("Lunch is served at noon.")."""
    first, last = w.sentences[0], w.sentences[-1]
    return len(w.sentences) == 1 or (
        bool(present & first.stems)
        and (bool(present & last.stems) or bool(_CONTINUES.match(last.text)))
    )


def _apart(w: Window, chosen: list[Window]) -> bool:
    """From another place than every chosen window, and not a repeat of one."""
    for o in chosen:
        if o.passage == w.passage:
            return False
        a, b = o.stems, w.stems
        if a | b and len(a & b) / len(a | b) > DUPLICATE_JACCARD:
            return False
    return True


def choose(found: list[Window], relevance: float = RELEVANCE) -> list[Window]:
    """The lead (the best-scored window that bears on the question), then up to ``MAX_ALSO``
    windows from other places that bear on it too. When nothing bears on the question, the
    closest single sentence is given alone (the critic then judges how little it covers)."""
    ranked = sorted(found, key=lambda w: (-w.score, w.passage, w.start, len(w.sentences)))
    bearing = [w for w in ranked if w.features["coverage"] >= relevance]
    if not bearing:
        closest = [w for w in ranked if len(w.sentences) == 1 and w.features["coverage"] > 0]
        return closest[:1]
    lead = whole_list(bearing[0])
    chosen = [lead]
    bar = max(relevance, RELATIVE_RELEVANCE * lead.features["coverage"])
    for w in bearing[1:]:
        if len(chosen) > MAX_ALSO:
            break
        short = len(w.sentences) <= MAX_ALSO_SENTENCES
        if short and w.features["coverage"] >= bar and _apart(w, chosen):
            chosen.append(w)
    return chosen


def compose(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The answer as sentences with their markers and their passage (0: the lead, then the
    "Also relevant" passages), each passage's sentences in document order."""
    chosen = choose(windows(question, evidence))
    log.debug("composed %d passages", len(chosen))
    return [
        {"text": s.text, "citations": s.markers, "passage": n}
        for n, w in enumerate(chosen)
        for s in w.sentences
    ]
