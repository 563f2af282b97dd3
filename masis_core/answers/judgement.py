"""Judgement: answer, abstain or dispute — and the confidence as a calibrated probability.

The critic's confidence is the estimated probability that the draft's lead passage answers
the question and is supported by its citations (for an answer of the development model over
the 0.65 bar: that answering was right, a conflict the dispute model missed counting wrong;
``answered_probability``). It comes from small logistic regressions over
interpretable features of (question, answer, evidence) — retrieval scores, how much of the
question the cited sentences and the best single sentence cover, whether what is asked (a
number — by the thing it counts —, a date, a version, a name) is present in the cited text,
whether the question's own figures and names occur in the passages or a neighbouring subject
stands in their place, hedging, and how the sources stand towards each other (stances,
favourable against unfavourable verdicts, different figures or dates for one thing). The
parameters live in ``masis_core/answers/confidence.json`` and are refitted with
``python -m bench.fit_confidence`` (scikit-learn, bench only); inference here is numpy.

Two models: P(dispute) — when it passes the fitted threshold and two sources speak to the
question, the two that oppose each other most are named with the point they disagree on (the
conflict review shows them) — and, for drafts without a conflict, P(answer), which is
``confidence``. The answer model is fitted on answer against abstain cases: a dispute is the
dispute model's business, and counted as "not an answer" it only taught the answer model to
doubt well-supported drafts (held out on fitzgov-dev, answers 0.44 -> 0.59 at the same
calibration).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from masis_core.llm.reader import get_reader
from masis_core.state import Evidence
from masis_core.text.sentences import (
    claims,
    content_stems,
    defang,
    markers,
    names,
    segment,
    sentences,
    strip_markers,
    text_names,
)
from masis_core.text.words import stem, words

log = logging.getLogger(__name__)

PARAMS_PATH = Path(__file__).with_name("confidence.json")
MODES = ("answer", "abstain", "dispute")
# The supervisor's bar (nodes/supervisor.py): below it a draft is retried, then reviewed.
LOW_CONFIDENCE = 0.65


def _any_word(words: str) -> re.Pattern[str]:
    """A case-blind pattern for any of the space-separated words (regex fragments)."""
    return re.compile(r"\b(?:" + "|".join(words.split()) + r")\b", re.I)


# -- what the question asks for ----------------------------------------------------------------
# Nouns that name the kind of answer rather than the subject ("which *version* introduced
# the pipe operator", "what is the *price* of …").
_QUANTITY_NOUNS = (
    "number percentage percent proportion share rate ratio amount cost price size total"
    " average median count temperature speed distance duration length weight value revenue"
    " population budget salary score capacity limit fee dose dosage frequency margin yield"
    " growth age height depth volume"
)
_QUANTITY_Q = re.compile(
    r"\bhow (?:many|much|far|long|old|big|large|tall|high|often|fast|deep|heavy|wide|small)\b"
    r"|\b(?:what|which) (?:is |was |are |were )?(?:the )?(?:\w+ ){0,2}"
    r"(?:" + _QUANTITY_NOUNS.replace(" ", "|") + r")\b",
    re.I,
)
_DATE_Q = re.compile(
    r"^\s*when\b|\bwhen (?:did|was|were|is|will|does|do)\b|\b(?:what|which) (?:year|date|day"
    r"|month|time)\b|\bsince when\b|\bhow recently\b",
    re.I,
)
_CALENDAR_Q = re.compile(r"\b(?:year|date|day|month)\b", re.I)
_WHEN_WORDS = _any_word(
    r"every each once twice daily weekly monthly annually yearly hourly years? months? weeks?"
    r" days? hours? minutes? seconds? before after during until since whenever first last"
    r" then immediately at\s+(?:startup|boot|shutdown|install\w*)"
)
_VERSION_Q = re.compile(r"\b(?:what|which) (?:\w+ )?(?:version|release)\b", re.I)
_WHO_Q = re.compile(
    r"^\s*(?:who|whom|whose)\b|\bwho (?:is|was|are|were|did|made|wrote|created|founded|led)\b"
    r"|\bwhich (?:company|companies|person|people|organi[sz]ation|firm|agency|author|country"
    r"|countries|city|cities|team|vendor|manufacturer|university)\b",
    re.I,
)
_YES_NO_Q = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have|had|must|may)\b",
    re.I,
)
# The question's form, for answers drawn from documents (see ``probabilities``): a how-to
# question, one asking for a command, function or file, and one asking what something is or
# does. On user-phrased manual questions these were answered right less often than the
# factual ones (bench/data/manual-howto.json).
_HOW_TO_Q = re.compile(r"^\s*how\s+(?:do|can|should|would|to)\b", re.I)
_CODE_Q = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+)?(?:command|function|method|file|option|program|package"
    r"|variable|setting|directive|utility|tool|flag|class|module|argument|parameter)s?\b",
    re.I,
)
_NUMBER_WORDS = (
    r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|billion|dozen|half|twice|double|triple"
)
_NUMBER_WORD = re.compile(rf"\b(?:{_NUMBER_WORDS})\b", re.I)
_DIGITS = re.compile(r"\d[\d,.]*")
_MONTHS = r"january|february|march|april|june|july|august|september|october|november|december"
_HAS_DATE = re.compile(
    rf"\b(?:{_MONTHS})\b|\b\d{{1,4}}[-/]\d{{1,2}}[-/]\d{{1,4}}\b"
    r"|\b(?:century|decade|yesterday|today|ago)\b",
    re.I,
)
_HAS_VERSION = re.compile(r"\b[vV]?\d+(?:\.\d+)+\b|\bversion \d|\brelease \d", re.I)
_YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
_FIGURE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*(%|percent\b|[a-zA-Z]{2,})?")


def asked_kind(question: str) -> str:
    """What the question asks for: quantity, date, version, name, yes_no or open."""
    q = question.strip()
    if _VERSION_Q.search(q):
        return "version"
    if _DATE_Q.search(q):
        return "date"
    if _QUANTITY_Q.search(q):
        return "quantity"
    if _WHO_Q.search(q):
        return "name"
    if _YES_NO_Q.search(q):
        return "yes_no"
    return "open"


def how_to(question: str) -> bool:
    """A how-to question, or one asking for a command, function, file or option."""
    return bool(_HOW_TO_Q.search(question) or _CODE_Q.search(question))


# What a command, a call, an option or a file looks like in prose.
_CODE = re.compile(r"[A-Za-z_][\w.]*\(|(?<![\w-])--?[a-z][\w-]+|(?:^|\s)[$>#] \S|<-|`|\s/\w+/")


def new_code(question: str, text: str) -> bool:
    """``text`` names a command, call, option or file the question does not name itself."""
    said = {m.group(0).strip() for m in _CODE.finditer(question)}
    return any(m.group(0).strip() not in said for m in _CODE.finditer(text))


def phrase_pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent content stems: a phrase of the question ("search path", "low battery") met
    as a phrase, not as two words anywhere."""
    flat = [min(t) for w in words(text) if (t := content_stems(w))]
    return set(itertools.pairwise(flat))


_FRAME = re.compile(
    r"^\s*(?:(?:what|which|who|whom|whose|when|where|why|how)(?:\s+(?:many|much|far|long|old|big"
    r"|often|is|are|was|were|do|does|did|can|could|should|would|will|has|have|had))*|is|are|was"
    r"|were|does|do|did|can|could|should|would|will|has|have)\b",
    re.I,
)


_KIND_STEMS = content_stems(
    _QUANTITY_NOUNS + " version versions release releases year years date dates day days month"
    " months time times"
)


def head_stems(question: str, n: int = 2, subject: bool = False) -> set[str]:
    """The first content words after the question's frame: what it is about first and
    foremost ("How is the *success rate* of CBT…", "What is the maximum *cable length*…").
    With ``subject``, words naming the kind of answer are passed over: "Which R version
    introduced the pipe operator?" is about *introduced* and *pipe*, not *version*."""
    body = _FRAME.sub(" ", question, count=1)
    out: list[str] = []
    for w in re.findall(r"[^\W\d_][\w'-]*", body):
        st = content_stems(w) - _KIND_STEMS if subject else content_stems(w)
        if st:
            out.extend(sorted(st))
        if len(out) >= n:
            break
    return set(out[:n])


_HOW_MANY = re.compile(r"\bhow many ([^\W\d_][\w-]*)", re.I)
_COUNT_WINDOW = 3  # words between a figure and the thing it counts ("40 source packages")


# What a measured quantity is written in. "What is the maximum cable length …?" was answered
# at 99% by "The 940-0024C cable was not yet understood": a figure, but no length. A question
# that names a dimension needs a figure in one of its units; one that names none ("how many",
# "what share") keeps any figure.
_UNITS = {
    "length": "mm cm m km inch inches ft foot feet yd yard yards mile miles meter meters metre"
    " metres kilometer kilometers kilometre kilometres millimeter millimeters centimeter"
    " centimeters",
    "time": "ms s sec secs second seconds min mins minute minutes h hr hrs hour hours day days"
    " week weeks month months year years",
    "weight": "mg g kg t lb lbs oz gram grams kilogram kilograms kilo kilos pound pounds ounce"
    " ounces ton tons tonne tonnes",
    "temperature": "°c °f °k c f k degree degrees celsius fahrenheit kelvin",
    "speed": "mph kph km/h m/s kmh knot knots bps kbps mbps gbps baud rpm",
    "money": "usd eur gbp dollar dollars euro euros pound pounds cent cents",
    "percent": "% percent percentage",
}
_UNIT_WORDS = {family: frozenset(units.split()) for family, units in _UNITS.items()}
_SCALES = frozenset(("thousand", "million", "billion", "trillion", "bn"))
_CURRENCY = re.compile(r"[$€£¥]\s?\d")
# The dimension a question names, by its words; "how long" asks for a length or a time.
_DIMENSIONS = (
    # A noun that names the measure comes first: "How high is the temperature?".
    (re.compile(r"\btemperature\b", re.I), ("temperature",)),
    (re.compile(r"\b(?:price|cost|fee|salary|revenue|budget)s?\b", re.I), ("money",)),
    (re.compile(r"\b(?:percentage|percent)\b", re.I), ("percent",)),
    (re.compile(r"\bweight\b|\bhow heavy\b", re.I), ("weight",)),
    (re.compile(r"\bspeed\b|\bhow fast\b", re.I), ("speed", "time")),
    (re.compile(r"\bduration\b", re.I), ("time",)),
    # "the length of the warranty" is a time; "how long" either.
    (re.compile(r"\blength\b|\bhow long\b", re.I), ("length", "time")),
    (re.compile(r"\b(?:distance|height|depth|width)\b|\bhow (?:far|tall)\b", re.I), ("length",)),
    # "How high is the unemployment rate?" names no unit: any figure answers it.
)
_MEASURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(°?[a-zA-Z%/]+)?")


def dimensions(question: str) -> tuple[str, ...]:
    """The unit families a quantity question's answer is written in (empty: any figure)."""
    for pattern, families in _DIMENSIONS:
        if pattern.search(question):
            return families
    return ()


def measured(families: tuple[str, ...], sentence: str) -> bool:
    """Does the sentence give a figure in one of these unit families ("15 m", "50ft",
    "$35,000", "9 minutes")?"""
    if "money" in families and _CURRENCY.search(sentence):
        return True
    for m in _MEASURE.finditer(sentence):
        unit = (m.group(1) or "").lower().rstrip("/.")
        if unit in _SCALES:  # "14.8 billion pounds"
            unit = next(iter(sentence[m.end() :].split()), "").lower().strip(".,;")
        if unit and any(unit in _UNIT_WORDS[f] for f in families):
            return True
        if "speed" in families and unit in _UNIT_WORDS["length"]:
            after = sentence[m.end() :].split()[:2]  # "299,792,458 metres per second"
            if (
                len(after) == 2
                and after[0] == "per"
                and after[1].strip(".,;") in _UNIT_WORDS["time"]
            ):
                return True
    return False


def counted(question: str) -> str | None:
    """The stem of what a "how many …" question counts ("How many *companies* use …")."""
    m = _HOW_MANY.search(question)
    return stem(m.group(1).lower()) if m else None


def counts_in(thing: str, question: str, sentence: str) -> bool:
    """Does the sentence give a count of ``thing`` — a figure within a few words of it
    ("holds 40 datasets", "datasets: 40")? A figure elsewhere in the sentence counts something
    else: "the 2.8.0 release lists the companies that …" answers no "how many companies"."""
    tokens = re.findall(r"[\w.,-]+", sentence)
    own = set(_DIGITS.findall(question))
    figures = [
        k
        for k, t in enumerate(tokens)
        if (_DIGITS.fullmatch(t.rstrip(".,")) and t.rstrip(".,") not in own)
        or _NUMBER_WORD.fullmatch(t)
    ]
    things = [k for k, t in enumerate(tokens) if stem(t.lower().strip(".,")) == thing]
    return any(abs(f - k) <= _COUNT_WINDOW for f in figures for k in things)


def asked_in(kind: str, question: str, text: str) -> bool:
    """Does a sentence of ``text`` about what the question asks hold the asked kind? The
    sentence must share a word with the question's head ("how many *hours*…"), so a manual
    page full of unrelated figures does not answer "how many"; for "how many X" the figure
    must stand by the X it counts. When the head names the kind of answer ("Which R
    *version* introduced the pipe operator?"), the sentence must also name the subject:
    "This manual is for R, version 4.2.2." was confidence 96% for that question. Held out on
    fitzgov-dev the rule is neutral (accuracy 0.612 against 0.613, five folds)."""
    anchor = head_stems(question) or content_stems(question)
    subject = head_stems(question, subject=True)
    thing = counted(question) if kind == "quantity" else None
    units = dimensions(question) if kind == "quantity" else ()
    return any(
        anchor & (words := content_stems(s))
        and (not subject or subject & words)
        and kind_present(kind, s, question)
        and (thing is None or counts_in(thing, question, s))
        and (not units or measured(units, s))
        for s in sentences(defang(text))
    )


def _figures_beyond(text: str, question: str) -> set[str]:
    """Figures of ``text`` that are not the question's own and not version or section numbers
    ('4.2.2', '1.3.1'): a manual is full of those, and they answer no 'how many'."""
    own = set(_DIGITS.findall(question))
    return {
        n.rstrip(".,")
        for n in _DIGITS.findall(text)
        if n.rstrip(".,").count(".") < 2 and n.rstrip(".,") not in own
    }


def calendar_date(text: str, question: str = "") -> bool:
    """A year or a calendar date in ``text`` that the question does not give itself."""
    years = set(_YEAR.findall(text)) - set(_YEAR.findall(question))
    return bool(years or _HAS_DATE.search(_YEAR.sub(" ", text)))


def kind_present(kind: str, text: str, question: str = "") -> bool:
    """Is something of the asked kind in ``text``, beyond what the question itself says?"""
    if kind == "quantity":
        return bool(_figures_beyond(text, question) or _NUMBER_WORD.search(text))
    if kind == "date":
        if calendar_date(text, question):
            return True
        # "When is the boiler descaled?" is answered by "once a year" or "after 500 hours";
        # only "what year / which date" needs a calendar date.
        return not _CALENDAR_Q.search(question) and bool(_WHEN_WORDS.search(text))
    if kind == "version":
        return bool(_HAS_VERSION.search(text))
    if kind == "name":
        asked = {n.lower() for n in names(" " + question)}
        return any(n.lower() not in asked for n in text_names(text))
    return True


# -- how sources stand ---------------------------------------------------------------------------
# Opposite positions on a claim, as an analyst's documents word them: direction, verdict,
# likelihood, recommendation, safety, effect. Each pair is (one side, the other side).
STANCE_PAIRS: tuple[tuple[str, str], ...] = (
    ("increas", "decreas"),
    ("increas", "reduc"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("higher", "lower"),
    ("more", "less"),
    ("gain", "loss"),
    ("improv", "worsen"),
    ("better", "worse"),
    ("benefi", "harm"),
    ("safe", "unsafe"),
    ("safe", "danger"),
    ("safe", "risk"),
    ("effective", "ineffective"),
    ("recommend", "against"),
    ("support", "oppos"),
    ("support", "contradict"),
    ("confirm", "refut"),
    ("confirm", "den"),
    ("likely", "unlikely"),
    ("accurate", "inaccurate"),
    ("reliable", "unreliable"),
    ("success", "fail"),
    ("approv", "reject"),
    ("allow", "prohibit"),
    ("legal", "illegal"),
    ("strong", "weak"),
    ("superior", "inferior"),
    ("outperform", "underperform"),
    ("growth", "decline"),
    ("profit", "loss"),
    ("positive", "negative"),
    ("caus", "no link"),
    ("link", "no link"),
    ("significant", "no significant"),
    ("evidence", "no evidence"),
)


# Words by which a passage takes issue with another position.
DISAGREEMENT = _any_word(
    r"critici[sz]\w* disput\w* contradict\w* refut\w* challeng\w* contrary disagree\w*"
    r" dismiss\w* debunk\w* flawed overstat\w* misleading questioned rebut\w* counter\w*"
    r" inconsistent\s+with at\s+odds not\s+supported no\s+evidence does\s+not\s+support fails?\s+to"
)
# A position attributed to someone: who argues what.
OPINION = _any_word(
    r"argues? argued arguing contends? contended claims?\s+that claimed insists? insisted"
    r" asserts?\s+that believes? believed advocates? proponents? critics? skeptics?"
    r" opponents? supporters?"
)
# A finding reported by a study, survey or report: two of them can land on opposite sides.
REPORTING = _any_word(
    r"found finds study studies survey surveys surveyed trial trials concluded"
    r" according\s+to estimated estimates measured reported"
)
# Qualifications inside one passage: a hedged answer rather than two camps.
HEDGE = _any_word(
    r"however although though but while whereas depend\w* vary varies uncertain\w*"
    r" limited may might could caveat unclear mixed"
)
NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|without|lack\w*|n't)\b|n't\b",
    re.I,
)


# How a passage judges what it reports: favourably or unfavourably. Two sources on one topic
# with opposite verdicts ("marked improvement" / "a toxic and unsustainable workplace",
# "outperformed their peers" / "the advantages disappear") take opposite positions even when
# no pair of STANCE_PAIRS words meets.
FAVOURABLE = _any_word(
    r"improv\w* benefi\w* effective efficient advantages? outperform\w* success\w* gains?"
    r" positive adequate robust safe better superior helps? helped boost\w* reliabl\w*"
    r" accurate exceptional excellent promising favou?rable stabili[sz]\w* recover\w*"
)
UNFAVOURABLE = _any_word(
    r"harm\w* risks? risky toxic fail\w* ineffective inefficient disadvantages? worse\w*"
    r" declin\w* deteriorat\w* weak\w* concerns? problem\w* barriers? unsustainable"
    r" disappear\w* negative inadequate insufficient hinder\w* danger\w* unsafe unreliable"
    r" inaccurate overstat\w* flawed little\s+better no\s+better"
)


def valence(text: str) -> float:
    """-1 (only unfavourable words) … +1 (only favourable ones); 0 when it judges nothing."""
    good, bad = len(FAVOURABLE.findall(text)), len(UNFAVOURABLE.findall(text))
    return (good - bad) / (good + bad) if good + bad else 0.0


def _stance_hits(text: str) -> set[tuple[int, int]]:
    """(pair index, side) for every stance pole the text takes."""
    low = " " + text.lower()
    hits = set()
    for i, (a, b) in enumerate(STANCE_PAIRS):
        # The negative pole first: "no link" must not also count as "link".
        has_b = f" {b}" in low
        stripped = low.replace(f" {b}", " ") if " " in b else low
        has_a = f" {a}" in stripped
        if has_a and not has_b:
            hits.add((i, 0))
        elif has_b and not has_a:
            hits.add((i, 1))
    return hits


def stance_clash(a: str, b: str) -> str | None:
    """The first stance on which two texts take opposite poles, e.g. 'increase / decrease'."""
    ha, hb = _stance_hits(a), _stance_hits(b)
    for i, side in sorted(ha):
        if (i, 1 - side) in hb:
            x, y = STANCE_PAIRS[i]
            return f"{x}… / {y}…" if side == 0 else f"{y}… / {x}…"
    return None


def _figures(text: str) -> dict[str, set[str]]:
    """Figures by the word after them: {'kilograms': {'21'}, '%': {'18.3'}}."""
    out: dict[str, set[str]] = {}
    for value, unit in _FIGURE.findall(text):
        if unit and not _YEAR.fullmatch(value):
            out.setdefault(unit.lower(), set()).add(value.replace(",", ""))
    return out


_FULL_DATE = re.compile(rf"\b((?:{_MONTHS}|may)\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})\b", re.I)


def _dates(text: str) -> set[str]:
    """Calendar dates written out ("March 22, 2020"), normalised."""
    return {
        " ".join(re.sub(r"(?<=\d)(?:st|nd|rd|th)|,", "", d).lower().split())
        for d in _FULL_DATE.findall(text)
    }


def figure_clash(a: str, b: str) -> str | None:
    """Two texts give different figures for the same unit (and share none for it), or
    different calendar dates for what they report ("the IPO took place on March 22, 2020" /
    "completed its IPO on March 15, 2020")."""
    fa, fb = _figures(a), _figures(b)
    for unit in sorted(set(fa) & set(fb)):
        if not fa[unit] & fb[unit]:
            return f"{unit}: {', '.join(sorted(fa[unit]))} vs {', '.join(sorted(fb[unit]))}"
    da, db = _dates(a), _dates(b)
    if da and db and not da & db:
        return f"date: {', '.join(sorted(da))} vs {', '.join(sorted(db))}"
    return None


def asked_values(question: str, text: str) -> dict[str, set[str]]:
    """What the sentences of ``text`` holding half of the question's content words give of
    what it asks, beyond the question's own: years and dates ("when"), figures by their unit
    ("how many / how much": {'passengers': {'350'}})."""
    kind, wanted = asked_kind(question), content_stems(question)
    if kind not in ("date", "quantity"):
        return {}
    said = [s for s in sentences(defang(text)) if _share(wanted, content_stems(s)) >= 0.5]
    if kind == "date":
        own = set(_YEAR.findall(question))
        return {"year": {v for s in said for v in {*_YEAR.findall(s), *_dates(s)}} - own}
    own = set(_DIGITS.findall(question))
    return {unit: values - own for unit, values in _figures(" ".join(said)).items()}


def asked_clash(question: str, a: str, b: str) -> str | None:
    """Two sources give different values of what is asked in one unit, none shared ("1931 vs
    1952"): a conflict whatever the dispute model says (docs/answers-and-confidence.md)."""
    return values_clash(asked_values(question, a), asked_values(question, b))


def values_clash(va: dict[str, set[str]], vb: dict[str, set[str]]) -> str | None:
    """``asked_clash`` on values read once per passage (``_pairs`` compares each with all)."""
    for unit in sorted(set(va) & set(vb)):
        if va[unit] and vb[unit] and not va[unit] & vb[unit]:
            said = f"{', '.join(sorted(va[unit]))} vs {', '.join(sorted(vb[unit]))}"
            return said if unit == "year" else f"{said} {unit}"
    return None


def _negated(text: str) -> bool:
    return bool(NEGATION.search(text))


# -- features ----------------------------------------------------------------------------------
# Share of the question's content words both passages of a pair must hold to be compared:
# two chunks of different manuals that merely sit in one result list are not two positions.
PAIR_TOPIC = 0.1


# The points on which two passages can oppose each other, in the order the conflict review
# names them: how much each counts when the review picks the pair to show, and its words.
# Named first in a conflict, though kept out of ``opposed`` (a fitted model's input).
ASKED_SIGNAL = ("asked", 3.0, "the sources answer it differently ({})")
_SIGNALS = (
    ("stance", 2.0, "opposite positions ({})"),
    ("disagreement", 1.5, "one source disputes the other's position"),
    ("figures", 1.0, "different figures for {}"),
    ("verdicts", 1.0, "one source judges it favourably, the other unfavourably"),
    ("camps", 0.5, "the sources attribute opposing positions"),
    ("negation", 0.5, "one source negates what the other affirms"),
)


@dataclass
class Pair:
    """Two passages of different sources and how they stand towards each other."""

    a: int
    b: int
    stance: str | None
    figures: str | None
    negation: bool
    disagreement: bool
    camps: bool  # each passage attributes a position to someone ("critics argue…")
    shared: float
    verdicts: bool = False  # one passage judges favourably, the other unfavourably
    asked: str | None = None  # different values of what the question asks (``asked_clash``)

    @property
    def opposed(self) -> bool:
        """A concrete point of opposition between two passages on the question's topic."""
        return self.shared >= PAIR_TOPIC and any(getattr(self, n) for n, _, _ in _SIGNALS)

    @property
    def strength(self) -> float:
        return self.shared + sum(w * bool(getattr(self, n)) for n, w, _ in _SIGNALS)


@dataclass
class Judgement:
    features: dict[str, float]
    probabilities: dict[str, float]
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    # Which fitted model gave the probability: "development" or "documents" (the trace shows
    # it, so the analyst can tell a snippet's calibration from a library's).
    model: str = "development"

    @property
    def confidence(self) -> float:
        return self.probabilities["answer"]


def _doc(ev: Evidence) -> str:
    return str(ev.get("doc_id") or ev.get("url") or ev.get("chunk_id") or "")


def _share(wanted: set[str], have: set[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 1.0


KEY_SENTENCES = 2


def _on_topic(text: str, wanted: set[str]) -> str:
    """The passage's sentences that speak to the question most (at most two): a long manual
    chunk holds figures, negations and stance words by chance; the sentences on the
    question's topic are where a position is taken."""
    ranked = sorted(
        ((_share(wanted, content_stems(s)), -k, s) for k, s in enumerate(sentences(text))),
        reverse=True,
    )
    return " ".join(s for share, _, s in ranked[:KEY_SENTENCES] if share > 0)


FOCUS_TOP = 3


def in_focus(answer: str, evidence: list[Evidence]) -> list[Evidence]:
    """The passages whose positions matter: those the answer cites and the three best scored.
    A manual search returns many chunks of many documents; compared all with all, some pair
    would always differ by chance."""
    cited = {m - 1 for m in markers(answer) if 1 <= m <= len(evidence)}
    best = sorted(range(len(evidence)), key=lambda i: -float(evidence[i].get("score") or 0.0))
    keep = cited | set(best[:FOCUS_TOP])
    return [ev for i, ev in enumerate(evidence) if i in keep]


def _pairs(question: str, evidence: list[Evidence]) -> list[Pair]:
    wanted = content_stems(question)
    raw = [ev.get("text", "") for ev in evidence]
    texts = [_on_topic(defang(t), wanted) for t in raw]
    asked = [asked_values(question, t) for t in raw]
    stems = [content_stems(t) for t in texts]
    out = []
    for i, j in itertools.combinations(range(len(evidence)), 2):
        if _doc(evidence[i]) == _doc(evidence[j]):
            continue
        shared = _share(wanted, stems[i] & stems[j]) if wanted else 0.0
        out.append(
            Pair(
                a=i,
                b=j,
                stance=stance_clash(texts[i], texts[j]),
                figures=figure_clash(texts[i], texts[j]),
                negation=_negated(texts[i]) != _negated(texts[j]),
                disagreement=bool(DISAGREEMENT.search(texts[i]) or DISAGREEMENT.search(texts[j])),
                camps=bool(OPINION.search(texts[i]) and OPINION.search(texts[j])),
                shared=shared,
                verdicts=valence(texts[i]) * valence(texts[j]) < 0,
                asked=values_clash(asked[i], asked[j]),
            )
        )
    return out


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
    (BM25's top score alone told answerable from unanswerable FAQ questions, AUROC 0.89)."""
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
        "how_to": float(bool(_HOW_TO_Q.search(question))),
        "asks_for_code": float(bool(_CODE_Q.search(question))),
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
            _share(wanted, content_stems(strip_markers(first[0]))) if first and wanted else 0.0
        ),
        "answer_coverage": _share(wanted, content_stems(said)) if said else 0.0,
        "head_missing_cited": 1.0 - _share(head_stems(question), content_stems(cited)),
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
        "best_passage_coverage": max((_share(wanted, s) for s in passage_stems), default=0.0),
        "max_dense": max((float(ev.get("score") or 0.0) for ev in evidence), default=0.0),
        "max_soft": max((float(ev.get("soft") or 0.0) for ev in evidence), default=0.0),
        "question_figures_missing": float(
            any(n not in every for n in re.findall(r"\d[\d,.]*\d|\d", question))
        ),
        "question_names_missing": (
            sum(n not in every.lower() for n in q_names) / len(q_names) if q_names else 0.0
        ),
    }


def _by_doc(focus: list[Evidence]) -> dict[str, str]:
    by_doc: dict[str, str] = {}
    for ev in focus:
        by_doc[_doc(ev)] = by_doc.get(_doc(ev), "") + " " + defang(ev.get("text", ""))
    return by_doc


def _source_features(
    question: str, evidence: list[Evidence], focus: list[Evidence]
) -> dict[str, float]:
    """How the sources in focus stand towards each other: the dispute model's inputs."""
    pairs = _pairs(question, focus)
    focus_texts = [ev.get("text", "") for ev in focus]
    by_doc = _by_doc(focus)
    on_topic = [p for p in pairs if p.shared >= PAIR_TOPIC]
    return {
        "sources": float(min(len({_doc(ev) for ev in evidence}), 4)),
        "opposed_pair": float(any(p.opposed for p in pairs)),
        "topic_pair": float(bool(on_topic)),
        "figure_clash": float(any(p.figures for p in on_topic)),
        "opinion_sources": float(sum(bool(OPINION.search(t)) for t in focus_texts)),
        "hedged": float(any(len(HEDGE.findall(t)) >= 2 for t in focus_texts)),
        "reporting_sources": float(min(3, sum(bool(REPORTING.search(t)) for t in focus_texts))),
        "years_differ": float(
            len({frozenset(_YEAR.findall(t)) for t in focus_texts if _YEAR.search(t)}) >= 2
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


# -- the model ---------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def load_params() -> dict[str, Any]:
    """The fitted parameters shipped with the package (``masis_core/answers/confidence.json``)."""
    text = PARAMS_PATH.read_text()
    return json.loads(text)


@lru_cache(maxsize=1)
def judge_version() -> str:
    """A fingerprint of what the judge's scores are made with: its fitted parameters and the
    passage scorer's weights, which choose the lead it reads, and whether the reader reads
    with them: loaded (0.2 s once per process), so a reader switched on (``MASIS_READER``)
    but refused for its weights counts as none. A workspace map is fitted on those scores
    and means nothing once they change (``workspaces/calibration.table_of``)."""
    digest = hashlib.sha256(PARAMS_PATH.read_bytes())
    digest.update(PARAMS_PATH.with_name("passage_weights.json").read_bytes())
    digest.update(b"words alone" if get_reader() is None else b"reader")
    return digest.hexdigest()[:12]


def percent(p: float) -> str:
    """A probability as the analyst reads it. Never "100%" or "0%": a fitted model's 0.998
    is not certainty, and a round 100% reads as a guarantee."""
    if p >= 0.995:
        return ">99%"
    if p < 0.005:
        return "<1%"
    return f"{round(p * 100)}%"


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def model_probability(model: dict[str, Any], feats: dict[str, float]) -> float:
    """One logistic regression of the parameter file on standardised features. A feature the
    draft has no measure of (absent from ``feats``: the lead chunk's retrieval scores of a
    lead citing web results alone, ``_lead_chunk_scores``) is read as its fitted mean."""
    mean = np.array(model["mean"])
    x = np.array([float(feats.get(n, m)) for n, m in zip(model["features"], mean, strict=True)])
    z = (x - mean) / np.array(model["scale"])
    return _sigmoid(float(np.dot(model["coef"], z) + model["intercept"]))


def answered_probability(p_answer: float, params: dict[str, Any]) -> float:
    """The development model's probability of a draft it answers (at or over the 0.65 bar),
    as the probability that answering was right: an answer whose sources in fact disagree is
    wrong, however well its evidence answers. The answer model is fitted on answer against
    abstain cases (disputes would teach it to doubt every well-supported draft), so over the
    bar it spoke of the evidence alone: on fitzgov-dev, answers it gave 0.95 were right 0.82 of
    the time once the missed disputes count. A Platt map fitted on the answered development
    drafts (``params["answered"]``, ``bench.fit_confidence``) says how often; it is held at
    the bar or above, so no decision changes. Below the bar the probability stands."""
    fitted = params.get("answered")
    if fitted is None or p_answer < LOW_CONFIDENCE:
        return p_answer
    return max(LOW_CONFIDENCE, _sigmoid(fitted["a"] * logit(p_answer) + fitted["b"]))


def confidence_model(feats: dict[str, float], params: dict[str, Any]) -> str:
    """ "documents" for a draft drawn from document chunks (see ``probabilities``), else
    "development"."""
    docs = params.get("documents")
    if docs is not None and feats.get("passage_words", 0.0) >= docs["min_words"]:
        return "documents"
    return "development"


def probabilities(
    feats: dict[str, float],
    params: dict[str, Any] | None = None,
    llm_confidence: float | None = None,
) -> dict[str, float]:
    """P(dispute), then P(answer) for a draft the dispute model let through; P(abstain) =
    1 - P(answer).

    The dispute model sees only how the sources stand (stances, figures, negation, words of
    disagreement, attributed opinions, the question's yes/no form); the answer model is fitted
    on the drafts with no conflict reported, so its probability is the one the supervisor
    acts on: among drafts that reach the 0.65 bar, the share that should have been answered.

    Drawn from documents (passages of ``min_words`` words and more: a PDF's chunks, not the
    development cases' short snippets), that probability is refitted on questions over real
    manuals (``p["documents"]``): there every passage shares the question's words, and the
    development model said 99% for answers that were right half the time.

    With Ollama the model's own opinion (``llm_confidence``) is stacked on (``with_opinion``);
    the development model's answered map (``answered_probability``) comes last, so it moves
    no decision in either mode."""
    p = params or load_params()
    documents = confidence_model(feats, p) == "documents"
    answer = model_probability(p["documents" if documents else "answer"], feats)
    if not documents and feats.get("asked_missing_cited") and "asked_missing_rate" in p:
        # The question asks for a figure, a date, a version or a name and no sentence of the
        # answer on the question's head holds one: the answer does not answer, whatever its
        # words match. The fitted rate keeps this a probability (how often such drafts were
        # right on the development cases), not a flat zero.
        answer = min(answer, p["asked_missing_rate"])
    if llm_confidence is not None:
        answer = with_opinion(answer, llm_confidence, p)
    if not documents:
        answer = answered_probability(answer, p)
    return {
        "answer": answer,
        "abstain": 1.0 - answer,
        "dispute": model_probability(p["dispute"], feats),
    }


def disputed(feats: dict[str, float], probs: dict[str, float], params: dict[str, Any]) -> bool:
    """A conflict is reported when the dispute model is confident enough *and* two sources
    speak to the question's topic (the review shows them side by side, with the point they
    oppose each other on when one is found).

    Requiring a concrete point of opposition as well capped dispute recall at the share of
    disputes where one of the lexical signals fires (0.53 on fitzgov-dev): held out, dispute
    recall 0.40 with that gate, 0.61 without it, overall accuracy unchanged (0.60).

    Two sources giving different values of what the question asks (``asked_clash``) are a
    conflict whatever the model says."""
    if feats.get("asked_clash") and feats.get("answered"):  # (an empty draft disputes nothing)
        return True
    return bool(feats.get("topic_pair")) and probs["dispute"] >= params["dispute_threshold"]


def with_opinion(
    p_answer: float, llm_confidence: float, params: dict[str, Any] | None = None
) -> float:
    """Stack the LLM critic's own confidence onto the feature model (Platt-style, in log-odds).

    The weight is refitted by ``bench.fit_confidence --engine ollama``; until then it is the
    prior in the parameter file (the LLM's opinion counts half as much as the features)."""
    llm = (params or load_params()).get("llm", {"a": 1.0, "b": 0.5, "c": 0.0})
    z = llm["a"] * logit(p_answer) + llm["b"] * logit(llm_confidence) + llm["c"]
    return 1.0 / (1.0 + math.exp(-z))


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def source_ref(ev: Evidence, text: str) -> dict[str, Any]:
    return {
        "doc_id": ev.get("doc_id") or ev.get("url", ""),
        "filename": ev.get("filename") or ev.get("url", ""),
        "page": ev.get("page_start"),
        "place": ev.get("place") or "",
        "chunk_id": ev.get("chunk_id"),
        "text": text,
    }


def _key_sentence(text: str, wanted: set[str], term: str | None) -> str:
    """The passage's sentence that best shows its position: holds the clash term, covers the
    question most."""
    best, best_score = "", -1.0
    for s in sentences(defang(text)) or [defang(text)]:
        score = _share(wanted, content_stems(s)) + (1.0 if term and term in s.lower() else 0.0)
        if score > best_score:
            best, best_score = s, score
    return best[:600]


def name_conflict(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The two sources that oppose each other most, and on what: the conflict review's item
    (``evidence``: the passages in focus)."""
    every = _pairs(question, evidence)
    on_topic = [p for p in every if p.shared >= PAIR_TOPIC]
    pairs = [p for p in every if p.asked] or [p for p in on_topic if p.opposed] or on_topic
    if not pairs:
        return []
    best = max(pairs, key=lambda p: (p.strength, -p.a, -p.b))
    ea, eb = evidence[best.a], evidence[best.b]
    name, _, words = next(
        (s for s in (ASKED_SIGNAL, *_SIGNALS) if getattr(best, s[0])),
        ("", 0.0, "the sources report different findings"),
    )
    reason = words.format(str(getattr(best, name, "")).replace("…", ""))
    terms: list[str | None] = [None, None]
    if name == "stance":
        terms = [t.strip() for t in str(best.stance).replace("…", "").split("/")]
    elif name == "asked":  # each side's sentence that gives its value: "1952" / "1931"
        terms = [side.split(", ")[0].lower() for side in str(best.asked).split(" vs ")]
    wanted = content_stems(question)
    ta = _key_sentence(ea.get("text", ""), wanted, terms[0])
    tb = _key_sentence(eb.get("text", ""), wanted, terms[-1])
    topic = " ".join(sorted(wanted & content_stems(ta) & content_stems(tb))) or question.strip()
    return [
        {
            "topic": topic[:120],
            "reason": reason,
            "sources": [source_ref(ea, ta), source_ref(eb, tb)],
        }
    ]


def judge(
    question: str,
    answer: str,
    evidence: list[Evidence],
    *,
    llm_confidence: float | None = None,
    params: dict[str, Any] | None = None,
    section: dict[str, float] | None = None,
) -> Judgement:
    """Features, the three probabilities, and the conflict to show when it is a dispute.

    ``.confidence`` is the probability, in [0, 1], that the answer's lead passage
    (``lead_of``) answers the question (over the bar, for the development model: that
    answering was right, ``answered_probability``); a workspace map wraps this one number."""
    p = params or load_params()
    feats = features(question, answer, evidence, section)
    probs = (
        probabilities(feats, p, llm_confidence)
        if answer
        else {"answer": 0.0, "abstain": 1.0, "dispute": 0.0}
    )
    conflicts = (
        name_conflict(question, in_focus(answer, evidence)) if disputed(feats, probs, p) else []
    )
    return Judgement(feats, probs, conflicts, confidence_model(feats, p))
