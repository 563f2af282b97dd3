"""How sources stand towards each other: the stance lists, verdict words, figures and dates
that clash, the pairs of passages in focus, and naming a conflict for the review.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from masis_core.answers.question import (
    MONTHS,
    any_word,
    asked_kind,
    share,
)
from masis_core.policy import POLICY
from masis_core.state import Evidence
from masis_core.text.figures import DIGIT_RUN, FIGURE_WITH_UNIT, YEAR
from masis_core.text.sentences import content_stems, defang, markers, sentences

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
DISAGREEMENT = any_word(
    r"critici[sz]\w* disput\w* contradict\w* refut\w* challeng\w* contrary disagree\w*"
    r" dismiss\w* debunk\w* flawed overstat\w* misleading questioned rebut\w* counter\w*"
    r" inconsistent\s+with at\s+odds not\s+supported no\s+evidence does\s+not\s+support fails?\s+to"
)
# A position attributed to someone: who argues what.
OPINION = any_word(
    r"argues? argued arguing contends? contended claims?\s+that claimed insists? insisted"
    r" asserts?\s+that believes? believed advocates? proponents? critics? skeptics?"
    r" opponents? supporters?"
)
# A finding reported by a study, survey or report: two of them can land on opposite sides.
REPORTING = any_word(
    r"found finds study studies survey surveys surveyed trial trials concluded"
    r" according\s+to estimated estimates measured reported"
)
# Qualifications inside one passage: a hedged answer rather than two camps.
HEDGE = any_word(
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
FAVOURABLE = any_word(
    r"improv\w* benefi\w* effective efficient advantages? outperform\w* success\w* gains?"
    r" positive adequate robust safe better superior helps? helped boost\w* reliabl\w*"
    r" accurate exceptional excellent promising favou?rable stabili[sz]\w* recover\w*"
)
UNFAVOURABLE = any_word(
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
    for value, unit in FIGURE_WITH_UNIT.findall(text):
        if unit and not YEAR.fullmatch(value):
            out.setdefault(unit.lower(), set()).add(value.replace(",", ""))
    return out


_FULL_DATE = re.compile(rf"\b((?:{MONTHS}|may)\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})\b", re.I)


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
    on_topic = POLICY.asked_sentence_share
    said = [s for s in sentences(defang(text)) if share(wanted, content_stems(s)) >= on_topic]
    if kind == "date":
        own = set(YEAR.findall(question))
        return {"year": {v for s in said for v in {*YEAR.findall(s), *_dates(s)}} - own}
    own = set(DIGIT_RUN.findall(question))
    return {unit: values - own for unit, values in _figures(" ".join(said)).items()}


def asked_clash(question: str, a: str, b: str) -> str | None:
    """Two sources give different values of what is asked in one unit, none shared ("1931 vs
    1952"): a conflict whatever the dispute model says
    (docs/answers-and-confidence.md, "Confidence and disputes")."""
    return values_clash(asked_values(question, a), asked_values(question, b))


def values_clash(va: dict[str, set[str]], vb: dict[str, set[str]]) -> str | None:
    """``asked_clash`` on values read once per passage (``pairs_of`` compares each with all)."""
    for unit in sorted(set(va) & set(vb)):
        if va[unit] and vb[unit] and not va[unit] & vb[unit]:
            said = f"{', '.join(sorted(va[unit]))} vs {', '.join(sorted(vb[unit]))}"
            return said if unit == "year" else f"{said} {unit}"
    return None


def _negated(text: str) -> bool:
    return bool(NEGATION.search(text))


# A yes/no question about more than one of a thing, and a sentence that allows only one.
_MANY = re.compile(r"\b(?:more\s+than\s+one|multiple|several|many|two\s+or\s+more)\b", re.I)
_ONE_ONLY = re.compile(r"\b(?:only|just)\s+(?:one|a\s+single)\b|\bat\s+most\s+one\b", re.I)


def says_no(question: str, text: str) -> str | None:
    """The sentence of ``text`` that answers a yes/no question "no": on the question's topic
    (``asked_sentence_share`` of its content words) and negated where the question is not,
    or allowing only one where it asks about more than one ("only one host can monitor the
    UPS" to "Can more than one computer monitor the same UPS?")."""
    if asked_kind(question) != "yes_no":
        return None
    wanted = content_stems(question)
    asks_many, asks_not = bool(_MANY.search(question)), _negated(question)
    for said in sentences(defang(text)):
        if share(wanted, content_stems(said)) < POLICY.asked_sentence_share:
            continue
        if (_negated(said) and not asks_not) or (asks_many and _ONE_ONLY.search(said)):
            return said
    return None


def polar_clash(question: str, a: str, b: str) -> str | None:
    """One passage answers a yes/no question "no" and the other does not: offered side by
    side as two answers, the "no" would read as the answer's equal (issue 51: "only one host
    can monitor the UPS" beside the entry that says any number can)."""
    no_a, no_b = says_no(question, a), says_no(question, b)
    if (no_a is None) == (no_b is None):
        return None
    said = str(no_a or no_b)
    return f"one says no: “{said if len(said) <= 90 else said[:87].rstrip() + '…'}”"


def passage_clash(question: str, a: str, b: str) -> str | None:
    """What two passages offered for one question disagree on: the asked value, a figure of
    one unit, or a yes/no question's answer. The review's cards and a completed answer's
    "Also relevant" passages are checked alike."""
    return asked_clash(question, a, b) or figure_clash(a, b) or polar_clash(question, a, b)


# -- features ----------------------------------------------------------------------------------
# Share of the question's content words both passages of a pair must hold to be compared:
# two chunks of different manuals that merely sit in one result list are not two positions.
PAIR_TOPIC = POLICY.pair_topic


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


def doc_of(ev: Evidence) -> str:
    return str(ev.get("doc_id") or ev.get("url") or ev.get("chunk_id") or "")


KEY_SENTENCES = POLICY.key_sentences


def _on_topic(text: str, wanted: set[str]) -> str:
    """The passage's sentences that speak to the question most (at most two): a long manual
    chunk holds figures, negations and stance words by chance; the sentences on the
    question's topic are where a position is taken."""
    ranked = sorted(
        ((share(wanted, content_stems(s)), -k, s) for k, s in enumerate(sentences(text))),
        reverse=True,
    )
    return " ".join(s for share, _, s in ranked[:KEY_SENTENCES] if share > 0)


FOCUS_TOP = POLICY.focus_top


def in_focus(answer: str, evidence: list[Evidence]) -> list[Evidence]:
    """The passages whose positions matter: those the answer cites and the three best scored.
    A manual search returns many chunks of many documents; compared all with all, some pair
    would always differ by chance."""
    cited = {m - 1 for m in markers(answer) if 1 <= m <= len(evidence)}
    best = sorted(range(len(evidence)), key=lambda i: -float(evidence[i].get("score") or 0.0))
    keep = cited | set(best[:FOCUS_TOP])
    return [ev for i, ev in enumerate(evidence) if i in keep]


def pairs_of(question: str, evidence: list[Evidence]) -> list[Pair]:
    wanted = content_stems(question)
    raw = [ev.get("text", "") for ev in evidence]
    texts = [_on_topic(defang(t), wanted) for t in raw]
    asked = [asked_values(question, t) for t in raw]
    stems = [content_stems(t) for t in texts]
    out = []
    for i, j in itertools.combinations(range(len(evidence)), 2):
        if doc_of(evidence[i]) == doc_of(evidence[j]):
            continue
        shared = share(wanted, stems[i] & stems[j]) if wanted else 0.0
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
        score = share(wanted, content_stems(s)) + (1.0 if term and term in s.lower() else 0.0)
        if score > best_score:
            best, best_score = s, score
    return best[:600]


def name_conflict(question: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The two sources that oppose each other most, and on what: the conflict review's item
    (``evidence``: the passages in focus)."""
    every = pairs_of(question, evidence)
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
