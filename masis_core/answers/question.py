"""Reading the question: what it asks for (a quantity, a date, a version, a name, yes or no),
its head words, the units a measured answer is written in, and whether a text holds what is
asked. The composer ranks passages with it and the judge's features read it
(``features.py``); neither borrows it from the other.
"""

from __future__ import annotations

import itertools
import re

from masis_core.policy import POLICY
from masis_core.text.figures import DIGIT_RUN, MEASURE, YEAR
from masis_core.text.sentences import content_stems, defang, names, sentences, text_names
from masis_core.text.words import stem, words


def share(wanted: set[str], have: set[str]) -> float:
    """The share of ``wanted`` (the question's stems) that ``have`` holds; 1 for no words."""
    return len(wanted & have) / len(wanted) if wanted else 1.0


def any_word(words: str) -> re.Pattern[str]:
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
_WHEN_WORDS = any_word(
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
HOW_TO_Q = re.compile(r"^\s*how\s+(?:do|can|should|would|to)\b", re.I)
CODE_Q = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+)?(?:command|function|method|file|option|program|package"
    r"|variable|setting|directive|utility|tool|flag|class|module|argument|parameter)s?\b",
    re.I,
)
_NUMBER_WORDS = (
    r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|billion|dozen|half|twice|double|triple"
)
_NUMBER_WORD = re.compile(rf"\b(?:{_NUMBER_WORDS})\b", re.I)
MONTHS = r"january|february|march|april|june|july|august|september|october|november|december"
_HAS_DATE = re.compile(
    rf"\b(?:{MONTHS})\b|\b\d{{1,4}}[-/]\d{{1,2}}[-/]\d{{1,4}}\b"
    r"|\b(?:century|decade|yesterday|today|ago)\b",
    re.I,
)
_HAS_VERSION = re.compile(r"\b[vV]?\d+(?:\.\d+)+\b|\bversion \d|\brelease \d", re.I)


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
    return bool(HOW_TO_Q.search(question) or CODE_Q.search(question))


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
_COUNT_WINDOW = POLICY.count_window


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
    for m in MEASURE.finditer(sentence):
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


def how_many_of(question: str) -> str | None:
    """The stem of what a "how many …" question counts ("How many *companies* use …")."""
    m = _HOW_MANY.search(question)
    return stem(m.group(1).lower()) if m else None


def counts_in(thing: str, question: str, sentence: str) -> bool:
    """Does the sentence give a count of ``thing`` — a figure within a few words of it
    ("holds 40 datasets", "datasets: 40")? A figure elsewhere in the sentence counts something
    else: "the 2.8.0 release lists the companies that …" answers no "how many companies"."""
    tokens = re.findall(r"[\w.,-]+", sentence)
    own = set(DIGIT_RUN.findall(question))
    figures = [
        k
        for k, t in enumerate(tokens)
        if (DIGIT_RUN.fullmatch(t.rstrip(".,")) and t.rstrip(".,") not in own)
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
    fitzgov-dev the rule is neutral (docs/measurements/confidence.md)."""
    anchor = head_stems(question) or content_stems(question)
    subject = head_stems(question, subject=True)
    thing = how_many_of(question) if kind == "quantity" else None
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
    own = set(DIGIT_RUN.findall(question))
    return {
        n.rstrip(".,")
        for n in DIGIT_RUN.findall(text)
        if n.rstrip(".,").count(".") < 2 and n.rstrip(".,") not in own
    }


def calendar_date(text: str, question: str = "") -> bool:
    """A year or a calendar date in ``text`` that the question does not give itself."""
    years = set(YEAR.findall(text)) - set(YEAR.findall(question))
    return bool(years or _HAS_DATE.search(YEAR.sub(" ", text)))


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
