"""Small text tools shared by the offline engine, the critic and the citation checker."""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from masis_core.policy import POLICY
from masis_core.text.figures import BARE_NUMBER, NUMERIC_WORD, STANDALONE, STARTS_WITH_FIGURE
from masis_core.text.words import QUESTION_WORDS, STOP_WORDS, stem, words, wordset

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")
# Our citation markers are exactly "[n]" with ASCII digits: "[２]" or "[2\u2060]" is not one.
_MARKER = re.compile(r"\s*\[([0-9]+)\]")
_ANY_MARKER = re.compile(r"[\[［]\d+[\]］]")
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z]{2,}(?:\s+[A-Z][a-zA-Z]{2,})*")


def sentences(text: str) -> list[str]:
    """The text's sentences, paragraph by paragraph. A full stop after an abbreviation or an
    initial ("e.g. GCC", "Fig. 3", "J. R. Smith") ends none (``_sentence_end``, as ``segment``
    reads prose): "e.g." had cut "Any C99 compiler, e.g. GCC, will do." in two."""
    parts: list[str] = []
    for raw in re.split(r"\n\s*\n", text):
        block = " ".join(raw.split())
        said: list[str] = []
        for piece in (s.strip() for s in _SENTENCE_SPLIT.split(block)):
            if said and piece and not _ends(said[-1], piece):
                said[-1] = f"{said[-1]} {piece}"
            elif piece:
                said.append(piece)
        parts.extend(said)
    return parts


def _ends(before: str, after: str) -> bool:
    """Whether the split between two pieces ends a sentence: not after an abbreviation, nor
    after an initial before a name."""
    return _sentence_end(before.rsplit(" ", 1)[-1], after.split(" ", 1)[0])


def content_stems(text: str) -> set[str]:
    """Stems of the informative words of a text (no stop words, question words or numbers)."""
    return {
        stem(w)
        for w in words(text)
        if w not in STOP_WORDS and w not in QUESTION_WORDS and len(w) > 2 and not w[0].isdigit()
    }


def numbers(text: str) -> set[str]:
    """Numbers as written, normalised (thousands separators and trailing dots removed)."""
    text = _ANY_MARKER.sub(" ", text)  # "[3]" and "［3］" are references, never figures
    return {n.replace(",", "").rstrip(".") for n in STANDALONE.findall(text)}


_CITED_RUN = re.compile(r"(.+?)((?:\s*\[[0-9]+\])+)", re.S)


def claims(paragraph: str) -> list[str]:
    """Split cited text into claims: each run of text up to its markers is one claim; text
    after the last marker is uncited and split into sentences. Stray punctuation after a
    marker (``... [2].``) stays with the claim before it."""
    out: list[str] = []
    pos = 0
    for match in _CITED_RUN.finditer(paragraph):
        body = match.group(1).strip()
        if out and not re.search(r"\w", body):
            out[-1] += match.group(2)
        elif re.search(r"\w", body):
            out.append(f"{body}{match.group(2)}")
        pos = match.end()
    tail = paragraph[pos:].strip()
    if out and (lead := re.match(r"^[.,;:!?]+", tail)):
        out[-1] += lead.group(0)
        tail = tail[lead.end() :].strip()
    if re.search(r"\w", tail):
        out.extend(sentences(tail))
    return out


# Anything that displays as "[3]": the plain bracket, a Markdown-escaped one (backslash), an HTML
# entity ("&#91;", "&#x5b;", "&lbrack;", "&lsqb;") or the full-width form, on either side.
_OPEN = r"(?:\\*\[|［|&(?:#0*91(?![0-9])|#x0*5b(?![0-9a-f])|lbrack|lsqb);?)"
_CLOSE = r"(?:\\*\]|］|&(?:#0*93(?![0-9])|#x0*5d(?![0-9a-f])|rbrack|rsqb);?)"
# The inside is checked in code: digits, possibly written as entities ("&#50;") or with
# invisible format characters (Unicode category Cf, e.g. U+2060) between them.
_INSIDE = r"((?:[^\[\]［］&\\\s]|&(?:#x?[0-9a-f]{1,8}|[a-z]{2,10});?){1,40}?)"
_DOC_MARKER = re.compile(_OPEN + _INSIDE + _CLOSE, re.I)


def _display_number(inside: str) -> str | None:
    """The digits of a bracketed number as shown on screen, or None if it is not one."""
    digits = "".join(ch for ch in html.unescape(inside) if unicodedata.category(ch) != "Cf")
    return digits if digits.isdecimal() else None


def defang(text: str) -> str:
    r"""Untrusted text (documents, web pages, model output) that displays like a citation marker
    becomes "［3］": it still reads the same to the analyst, but can never be taken for one of
    our citations — by the evaluator, which reads "[3]" from the answer, nor on screen, where
    "\[3\]", "&#91;3&#93;" or "[3" + U+2060 + "]" (an invisible character) all show as "[3]"."""

    def repl(m: re.Match[str]) -> str:
        digits = _display_number(m.group(1))
        return m.group(0) if digits is None else f"［{digits}］"

    return _DOC_MARKER.sub(repl, text)


def markers(sentence: str) -> list[int]:
    return [int(m) for m in _MARKER.findall(sentence)]


def strip_markers(sentence: str) -> str:
    return _MARKER.sub("", sentence).strip()


def names(sentence: str) -> set[str]:
    """Capitalised names after the first word (the first word is capitalised anyway)."""
    body = sentence.split(" ", 1)[1] if " " in sentence else ""
    return {m for m in _CAPITALISED.findall(body)}


# --- Structure-aware segmentation -------------------------------------------------------------
#
# Chunk text is a PDF page's words joined by single spaces: the line breaks that set a heading,
# a table row or a table-of-contents entry apart are gone. ``segment`` finds them again from
# the words alone, so that an extractive answer quotes prose and never "... from CRAN. 5.2 How
# can add-on packages be installed?", "REVISION HISTORY NUMBER DATE ..." or a sentence cut by a
# chunk boundary.


def text_names(text: str) -> set[str]:
    """The capitalised names of a text, sentence by sentence. A sentence's first word is
    capitalised anyway: it counts only as part of a longer run ("Russell Kroll wrote …",
    "Network UPS Tools ships …"), leading stop words off ("The Debian Project" → "Debian
    Project"). Read as one string, "The newapc driver has been renamed." named "The", and
    every sentence answered "Who wrote the apcsmart driver?"."""
    found: set[str] = set()
    for s in sentences(text):
        for m in _CAPITALISED.finditer(s):
            run = m.group(0).split()
            if m.start() == 0:
                first = run[0]
                while run and _is_stop(run[0]):
                    run = run[1:]
                if run == [first] or not run:
                    continue  # the sentence's own first word, alone
            found.add(" ".join(run))
    return found


SegmentKind = Literal["sentence", "heading", "toc", "table", "header", "fragment", "debris"]


@dataclass(frozen=True)
class Segment:
    """A piece of a text: only ``kind == "sentence"`` is prose fit to quote in an answer.

    ``start``/``end`` are character offsets in the text given to ``segment``; ``text`` is the
    piece with whitespace normalised (and a running header inside it removed)."""

    kind: SegmentKind
    text: str
    start: int
    end: int


# Capitalised words that open a sentence and are hardly ever capitalised inside one: one of
# them right after a word that cannot end a clause marks where a heading stopped and the body
# began ("11.2 Linear models The basic function ...", "Canvas size This documentation ...").
STRONG_OPENERS = wordset(
    "The This These There They It If You We When While Since Although Because However Here "
    "Please Unless Whereas"
)
# Weaker openers only end the title of a numbered heading ("6.3.2 User name on the remote host
# If you use ..."), where the number already says a title is there.
_WEAK_OPENERS = wordset(
    "A An In On At For To By With Without From As One Use Using See Each Every All Some Most "
    "Many Such Other Both Any Only Even Once After Before Then Thus Hence Also Yes No Suppose "
    "Consider Occasionally Usually Generally Typically Normally Sometimes Often Instead Finally "
    "First Next Currently Alternatively Under Let Do Does Is Are Can What How Why Which Who "
    "That Those Their Its Our Your Several Much Special"
)
_OPENERS = STRONG_OPENERS | _WEAK_OPENERS
# Admonition labels set on a line of their own ("Note", "Tip", "Caution").
_LABELS = wordset("Note Tip Caution Warning Important Attention Hint Remark")
_LABEL_COLON = re.compile(
    r"^(?:Note|Tip|Caution|Warning|Important|Example|Examples|Syntax|Source|Sources):$"
)
# Words after which a section number is a reference, not a heading ("see Section 3.2 Foo").
_REFERENCE_WORDS = wordset(
    "section sections chapter chapters appendix version versions release releases page pages "
    "table figure rfc since until v r nut python gnuplot linux"
)
_ABBREVIATIONS = wordset(
    "e.g. i.e. etc. vs. cf. dr. mr. mrs. ms. st. no. fig. sec. eq. p. pp. vol. al. approx. "
    "resp. incl. ca. viz. inc. ltd. corp. co. jr. sr. min. max. ref."
)
_SECTION_NUMBER = re.compile(r"^(?:\d{1,2}|[A-Z])(?:\.\d{1,3})+\.?$")
_CHAPTER_NUMBER = re.compile(r"^\d{1,2}$")
# Words that make the number before them a quantity, never a section's number.
_MAGNITUDES = wordset(
    "hundred thousand million billion trillion percent per cent degrees times fold"
)
_LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]|[a-z][.)]|\([a-z0-9]{1,2}\))$")
_ITEM_NUMBER = re.compile(r"^(\d{1,2})([.)])$")
ITEM_WINDOW = 40  # words an item of a numbered list may run to
CODE_ITEM_WINDOW = 150  # ... and one that holds commands and their explanation
# An enumeration set inside a sentence: "... in the following places: (1) an absolute path
# ... (2) the current directory ..." (gnuplot), "... in three steps: (1) guide RNA ...".
_INLINE_ITEM = re.compile(r"^\((?:\d{1,2}|[a-z])\)$")
_BULLET_CHARS = frozenset("•◦▪‣●○■□►")
_DASHES = frozenset(("-", "–", "—"))
# A promised list quoted with its items: at most this many items and words in all (the
# composer quotes no sentence longer than 90 words).
MAX_LIST_ITEMS = 8
MAX_LIST_QUOTE_WORDS = 90
_CAPTION = re.compile(r"^(?:Table|Figure|Listing|Example)$")
_CAPTION_NUMBER = re.compile(r"^[0-9A-Z]{1,2}(?:[.-]\d{1,3})*[.:]$")
_TERMINAL = re.compile(r"[.!?][\"'”’)\]]*$")
_OPENING = re.compile(r"^[\"'“‘(\[`]*[A-Z0-9]")
# A lower-case identifier with a dot or an underscore inside: "is.factor", "na_if", "data.frame(".
_CODE_NAME = re.compile(r"^[a-z]\w*(?:[._][a-z]\w*)+(?:\(|$)")
# Prose may also open with a sum or an estimate: "$3.68 trillion was ...", "~90% accuracy ...".
_PROSE_OPENING = re.compile(r"^[\"'“‘(\[`]*(?:[A-Z0-9]|[$€£~≈]\d)")
# What a figure's share of a sentence may be, and more when plain lower-case words make up
# much of it (a table row has few); how much of a sentence must read as words, and how many
# figures make a run that is no sentence a table row.
FIGURES = POLICY.text.figures_share
PROSE_FIGURES = POLICY.text.prose_figures_share
PLAIN_SHARE = POLICY.text.plain_share
WORDISH_SHARE = POLICY.text.wordish_share
TABLE_SHARE = POLICY.text.table_share
TERSE_PLAIN_WORDS = POLICY.text.terse_plain_words
_LEADERS = re.compile(r"(?:\.\s?){5,}")
_ALL_CAPS = re.compile(r"^[A-Z][A-Z0-9&/-]+$")
_TITLE_WORD = re.compile(r"^[A-Z][a-z]+(?:-[a-z]+)*$")
_PLAIN_WORD = re.compile(r"^[\"'“‘(]*[a-z][a-z'’-]*[\"'”’),;:.!?]*$")
_WORDISH = re.compile(r"^[\"'“‘(]*[A-Za-z][A-Za-z'’-]*[\"'”’),;:.!?]*$")
# Code, not prose: "x <- f(y)", "a = 2", "{ ... }", ">>> f()"; not a menu path "File > Open".
_OPERATOR = re.compile(r"^(?:<-|<<-|=|==|!=|<=|>=|\{|\}|>>>|\|\||&&)$")
_END_CHARS = frozenset(".!?\"')]”’")
_DATE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4})$")
_FOOTNOTE = re.compile(r"^\d{1,3}$")
_CODE_START = re.compile(r"^(?:>|\$|#|%|>>>|:;|\S*<-|\S*\(|\S*=)")
_CLAUSE_END = re.compile(r"[,:;(\"“'‘/-]$")
# Running headers and footers that the parser's edge check missed because they change from
# page to page: "Chapter 2: Installing R under Unix-alikes 9", "Appendix C: Platform notes 76",
# "1.4. Library Reference 125", "16 Chapter 1. The PyTables Core Library", "CONTENTS gnuplot
# 5.4 123", "(continues on next page)".
_RUNNING: tuple[tuple[str | re.Pattern[str], re.Pattern[str]], ...] = (
    # (what the text must hold, the header): most chunks hold none of these, and one pattern
    # tried at every position of every chunk cost more than the rest of the segmentation.
    (
        "Chapter",
        re.compile(
            r"\bChapter\s+[0-9A-Z]{1,2}:(?:\s+(?!\d{1,4}(?:\s|$))\S+){1,10}?\s+\d{1,4}(?=\s|$)"
            r"|\bChapter\s+[0-9A-Z]{1,2}:\s*$"
            r"|(?<!\S)\d{1,4}\s+Chapter\s+\d{1,2}\.(?:\s+[A-Z][\w-]*){1,6}(?=\s|$)"
        ),
    ),
    (
        "Appendix",
        re.compile(
            r"\bAppendix\s+[0-9A-Z]{1,2}:(?:\s+(?!\d{1,4}(?:\s|$))\S+){1,10}?\s+\d{1,4}(?=\s|$)"
            r"|\bAppendix\s+[0-9A-Z]{1,2}:\s*$"
        ),
    ),
    (
        re.compile(r"\d\.\d{1,3}\.\s"),
        re.compile(
            r"(?<!\S)\d{1,2}(?:\.\d{1,3})+\.\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,4}\s+\d{1,4}"
            r"(?=\s|$)"
        ),
    ),
    (
        re.compile(r"\s\d+\.\d+\s"),
        re.compile(
            r"(?<!\S)[A-Z]{4,}\s+[a-z][\w-]*\s+\d+\.\d+\s+\d{1,4}(?=\s|$)"
            r"|(?<!\S)\d{1,4}\s+[a-z][\w-]*\s+\d+\.\d+\s+[A-Z]{4,}(?=\s|$)"
        ),
    ),
    ("(contin", re.compile(r"\((?:continued from previous page|continues on next page)\)")),
)
MAX_TITLE_WORDS = 12


def _running_headers(text: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    for guard, pattern in _RUNNING:
        if guard in text if isinstance(guard, str) else guard.search(text):
            found.extend(pattern.finditer(text))
    found.sort(key=lambda m: m.start())
    return [m for n, m in enumerate(found) if n == 0 or m.start() >= found[n - 1].end()]


def _bare(word: str) -> str:
    return word.strip("\"'“”‘’()[],;:.!?").lower()


def _is_stop(word: str) -> bool:
    return _bare(word) in STOP_WORDS


_URL_REST = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?:[/:?#)]|$)")


def _sentence_end(word: str, following: str) -> bool:
    """Word ends a sentence and ``following`` starts the next (not "e.g." nor "D. Stimits").
    A plain word with a full stop ends one even before a lower-case word: what follows is
    code or debris ("... of the header. char * CallocCharBuf(size_t n)"), not the same
    sentence."""
    if word[-1] not in _END_CHARS or not _TERMINAL.search(word):
        return False
    low = word.lower().rstrip("\"'”’)]").lstrip("(\"'“‘[")
    if low in _ABBREVIATIONS:
        return False
    if "://" in word and _URL_REST.match(following):
        return False  # "(https://CRAN. R-project.org/package=boot)": a line break in a URL
    if not _OPENING.match(following):
        # Before code ("... entries of level NA. is.factor is generic") a word of two letters or
        # more ends one, unless it is a dotted name the line broke ("the tables.File.
        # get_file_image() method"); "a." is an inline list's letter.
        bare = low.rstrip(".")
        code = _CODE_NAME.match(following) and len(bare) >= 2 and "." not in bare
        return bool(code) or bool(re.fullmatch(r"[a-z]{3,}[.!?]", low))
    if re.fullmatch(r"(?:[A-Z]\.){2,}", word.lstrip("(\"'“‘")) and following not in _OPENERS:
        return False  # "the U.S. Census Bureau": an initialism before a name
    # An initial before a name or another initial: "W. N. Venables, D. M. Smith".
    return not (
        re.fullmatch(r"[A-Z]\.", word)
        and (_TITLE_WORD.match(following.rstrip(",;:")) or re.fullmatch(r"[A-Z]\.,?", following))
    )


def _depth(number: str) -> int:
    """The dots inside a number: 1 for "5.2" or "5.2." (also a figure), 2 for "3.4.2"."""
    return number.count(".") - number.endswith(".")


def _is_section_number(words: list[str], i: int) -> bool:
    """A heading's number: "5.2", "B.3.4", "C.4", or a chapter's "3" before a capitalised
    title. After "3.4.2" or "C.3" any title ("3.4.2 macOS"); after "5.2" one that starts with
    a capital or a digit, or a short lower-case one ("8.3 on.exit A function ..."), since
    "1.4 servers have a compatibility mode" is prose."""
    if i + 1 >= len(words):
        return False
    word, nxt = words[i], words[i + 1]
    if _depth(word) <= 1 and (
        word.startswith("0.")
        or (re.match(r"[a-z]", nxt) and _is_stop(nxt))
        or _bare(nxt) in _MAGNITUDES
    ):
        return False  # "within 0.5 degrees", "1.5 to 2.0", "4.3 million children": figures
    if _SECTION_NUMBER.match(word):
        if re.match(r"[A-Z0-9\"“]", nxt):
            return True
        if not re.match(r"[a-z]", nxt):
            return False
        deep = _depth(word) >= 2 or word[0].isalpha()
        return deep or _title_end(words, i + 1, short=True) <= i + 5
    # "3 INSTALLATION", not "20 GB of disk space" nor "the December 17 ATH".
    title = _TITLE_WORD.match(nxt) or (_ALL_CAPS.match(nxt) and len(nxt) >= 4)
    return bool(_CHAPTER_NUMBER.match(word) and title)


def _title_end(words: list[str], first: int, short: bool = False) -> int:
    """Where the title that starts at ``first`` ends and the body begins (``len(words)`` when
    the whole run is a title): after a "?", before another section number, an opener, a label,
    or else the first capitalised word after a lower-case one ("Data redundancy Software ...")."""
    limit = min(len(words), first + (4 if short else MAX_TITLE_WORDS) + 1)
    for j in range(first + 1, limit):
        previous = words[j - 1]
        if previous.endswith("?"):
            return j
        if previous.endswith(":"):
            continue
        if (not short and _is_section_number(words, j)) or words[j] in _LABELS:
            return j
        if words[j] in _OPENERS:
            return j
    for j in range(first + 1, limit):
        previous = words[j - 1]
        if _TITLE_WORD.match(words[j]) and re.match(r"[a-z]", previous) and not _is_stop(previous):
            return j
    return len(words)


def _heading_starts(words: list[str], j: int) -> bool:
    """A heading's (or a chapter's) number at ``j`` inside a run of words. After code or a
    stop word too ("... rating); 4.8.2 Setting flags", "shut down 11.2.3 Completely ..."), but
    "in 5.2 Foo" is more likely a reference; a chapter's "1" only after a page number or code
    ("64 1 Introduction"), not after a plain word ("takes 2 Arguments")."""
    word, previous = words[j], words[j - 1]
    if not _is_section_number(words, j):
        return False
    if _SECTION_NUMBER.match(word):
        if _depth(word) >= 2:
            return True
        if re.match(r"[a-z]", words[j + 1]):
            # After a word, a figure or a version is the sentence's own: "across 9.8 million
            # flights", "Windows Phone 8.1 introduced Cortana".
            return not _WORDISH.match(previous)
        return not _is_stop(previous)
    return not _PLAIN_WORD.match(previous)


def _inner_break(words: list[str]) -> int | None:
    """The first place inside a run of words where a heading, a caption, a footnote or a label
    begins, or where a heading ends and a sentence begins (a strong opener after a word that
    cannot end a clause)."""
    for j in range(1, len(words) - 1):
        previous, word = words[j - 1], words[j]
        if not (word[0].isupper() or word[0].isdigit()) or _bare(previous) in _REFERENCE_WORDS:
            continue  # every break below starts with a capital or a digit
        if _heading_starts(words, j):
            return j
        if _CAPTION.match(word) and _CAPTION_NUMBER.match(words[j + 1]):
            return j
        if _FOOTNOTE.match(word) and words[j + 1] in _OPENERS:
            return j  # "(‘ctest’, 47 On systems which ...": a footnote set at the page's foot
        if (
            previous.endswith(":")
            and word in STRONG_OPENERS
            and not any(_PLAIN_WORD.match(w) for w in words[:j])
        ):
            return j  # "... Password/Passphrase Requirements: If passwords ...": a title's colon
        if _CLAUSE_END.search(previous) or _is_stop(previous):
            continue
        if word in STRONG_OPENERS or word in _LABELS or _LABEL_COLON.match(word):
            return j
    return None


def _prose(words: list[str]) -> bool:
    """Reads as a sentence: starts like one, ends with terminal punctuation, mostly words, with
    a function word or else three plain lower-case words (``_terse``: a report's "Current 3D
    NAND designs reach 236 layers." has no function word; a name list "Journal: Author." has
    no plain word); few figures — more in a sentence of plain words ("A 2023 meta-analysis of 29
    studies (1.5 million participants) confirmed 25% lower mortality.") — no code operators
    ("m <- match.call(...)"; a statistic "d = 0.82" is not one) and no table cells. "... is
    as follows:" before code is not one: it promises what it lacks."""
    if not _PROSE_OPENING.match(words[0]) or not _TERMINAL.search(words[-1]):
        return False
    n = len(words)
    wordish, plain, operators = _word_kinds(words)
    numeric = [bool(BARE_NUMBER.match(w)) for w in words]
    figures = PROSE_FIGURES if plain >= PLAIN_SHARE * n else FIGURES
    return (
        (any(_is_stop(w) for w in words) or _terse(words, plain))
        and wordish >= WORDISH_SHARE * n
        and sum(1 for w in words if NUMERIC_WORD.match(w)) <= figures * n
        and operators < 2
        and not _table_run(numeric)
    )


def _word_kinds(words: list[str]) -> tuple[int, int, int]:
    """How many of the words read as words, as plain lower-case words, and as code operators
    (a reported statistic's "=" is none): what tells prose from code and tables."""
    wordish = sum(1 for w in words if _WORDISH.match(w))
    plain = sum(1 for w in words if _PLAIN_WORD.match(w))
    operators = sum(
        1 for k, w in enumerate(words) if _OPERATOR.match(w) and not _statistic(words, k)
    )
    return wordish, plain, operators


# A program's name in lower case, opening a sentence as its subject: "upsd refuses to serve
# up data that isn't fresh, ..." (the NUT FAQ), "git stores ...". Not a dotted or called name
# (code: ``_CODE_NAME``), not a function word (a fragment's "some drivers ...").
_LOWER_NAME = re.compile(r"^[a-z][a-z0-9_-]{1,24}$")
# Its verb, as a subject's: "refuses", "starts", "calls" (not "mode", "logical", "size").
_VERB_S = re.compile(r"^[a-z]{2,}(?<![su])s$")
MIN_NAMED_WORDS = 6


def _named_first(words: list[str]) -> bool:
    """Prose but for its first word, a name written in lower case before its verb: the
    segmenter had dropped such a sentence as debris, and with it the run it broke ("It means
    your UPS driver hasn't updated things ... upsd refuses to serve up data ... If this
    happens to you, make sure your driver is still running")."""
    return (
        len(words) >= MIN_NAMED_WORDS
        and _LOWER_NAME.match(words[0]) is not None
        and not _is_stop(words[0])
        and _VERB_S.match(words[1]) is not None
        and not _is_stop(words[1])
        and _prose([words[0].capitalize(), *words[1:]])
    )


CODE_PROSE_STOPS = POLICY.text.code_prose_stops


def prose_with_code(text: str) -> bool:
    """A sentence the segmenter leaves as debris for what a manual writes around its prose,
    still quotable: an option or a brace first ("-f makes a large speed difference, and -Cfe
    buys you nearly as much speed ...", "} flex requires that the opening '{' ..."), an
    e-mail's signature glued on ("Vern To increase the 32K limit ..., you increase ... in
    flexdef.h:"), a term and its colon ("answers: produces the corrected version ..."). Mostly
    words, a share of them plain, two function words, at most one code operator. The answer
    sat in such a sentence, in the evidence but in no window, for 5-9 questions of each of
    four spent held-out sets (68-78 each); quoting them raised the leads that answer there by
    0.00-0.06 and the answers held in the lead or an option by 0.00-0.12
    (docs/measurements/passages.md)."""
    words = text.split()
    n = len(words)
    if n < MIN_NAMED_WORDS or not (_TERMINAL.search(words[-1]) or words[-1].endswith(":")):
        return False
    if words[0][:1].islower() and _is_stop(words[0]):
        return False  # "the path to upsmon must be provided.": a clause cut from its sentence
    wordish, plain, operators = _word_kinds(words)
    return (
        sum(1 for w in words if _is_stop(w)) >= CODE_PROSE_STOPS
        and plain >= PLAIN_SHARE * n
        and wordish >= WORDISH_SHARE * n
        and operators < 2
    )


def _statistic(words: list[str], k: int) -> bool:
    """``words[k]`` is the "=" of a reported statistic ("Cohen's d = 0.82", "p = 0.03",
    "I-squared = 18%", "k = 2"), not an assignment in code ("type = 7", "x = f(y)")."""
    if words[k] != "=" or k == 0 or k + 1 >= len(words):
        return False
    value = words[k + 1].rstrip(",;.)")
    short_name = len(words[k - 1].lstrip("(")) <= 2
    return bool(STARTS_WITH_FIGURE.match(value)) and (short_name or "." in value or "%" in value)


def _terse(words: list[str], plain: int) -> bool:
    """A sentence without a function word, as reports and notes write them: a capitalised
    word first and three plain lower-case words ("Current 3D NAND designs reach 236 layers.",
    "PolicyKit provides required privileges."). A cross-reference ("See Also qr, svd.") or a
    reference manual's argument line ("PetrolPrice petrol price.") is not one."""
    first = words[0].lstrip("\"'“‘(")
    return plain >= TERSE_PLAIN_WORDS and first[:1].isalpha() and first not in ("See", "Also")


# A title block reads like this: "An Introduction to R Notes on R: A Programming Environment
# for Data Analysis and Graphics Version 4.2.2 Patched (2022-11-10) W. N. Venables" (a
# manual's cover), or "Copyright c 1990 W. N. Venables ... R Core Team" before the licence's
# first sentence: the parser glues it to the prose, with stop words enough to pass as prose.
# A sentence, even one full of product names, has a verb or a common noun in lower case
# within its first few capitalised words; a list of names has commas.
TITLE_BLOCK_WORDS = 6
_QUOTES = frozenset("\"'‘’“”`")


def _capitalised(word: str) -> bool:
    return word.lstrip("\"'“‘(")[:1].isupper()


def _title_prefix(words: list[str]) -> int:
    """How many words at the start of ``words`` form a title block (0 when none): at least
    ``TITLE_BLOCK_WORDS`` capitalised words before the first lower-case word that is not a
    stop word; the prose starts with the capitalised word(s) just before that one."""
    first_lower = len(words)
    for j, w in enumerate(words[1:], start=1):
        bare = _bare(w)
        if len(bare) > 1 and bare.isalpha() and bare not in STOP_WORDS and not _capitalised(w):
            first_lower = j
            break
    start = first_lower
    if first_lower < len(words):
        start = first_lower - 1
        while start > 0 and not _capitalised(words[start]) and _is_stop(words[start]):
            start -= 1
        if start > 0 and _is_stop(words[start - 1]) and _capitalised(words[start - 1]):
            start -= 1  # "The Debian system is ..."
    head = words[:start]
    # Words in quotes name something the sentence talks about ("see the ‘Writing R
    # Extensions’ manual"): they are not a title block.
    named = sum(
        1
        for w in head
        if _capitalised(w)
        and len(_bare(w)) > 1
        and _bare(w).isalpha()
        and not _is_stop(w)
        and not _QUOTES.intersection(w)
    )
    commas = sum(w.endswith(",") for w in head)
    return start if named >= TITLE_BLOCK_WORDS and commas <= 2 else 0


def _table_run(numeric: list[bool]) -> bool:
    """Table cells flattened into a line: two bare figures side by side and a third within
    six words ("1.0 1.2 1.4 2.0+ 1.0 yes yes yes no"); a prose list has commas."""
    for i in range(len(numeric) - 1):
        if numeric[i] and numeric[i + 1] and sum(numeric[max(0, i - 2) : i + 4]) >= 3:
            return True
    return False


class _Words:
    """The text's words with their character spans, running headers cut out (kept as
    ``header`` segments), the words that open a block (after a blank line) and, once
    ``_Units`` has read them, the words where a list's item begins."""

    def __init__(self, text: str) -> None:
        self.headers: list[Segment] = []
        flat = text
        for m in _running_headers(text):
            self.headers.append(Segment("header", " ".join(m.group(0).split()), m.start(), m.end()))
            flat = flat[: m.start()] + " " * (m.end() - m.start()) + flat[m.end() :]
        if "  " in flat or "\n" in flat or "\t" in flat or flat != flat.strip():
            self.spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", flat)]
            self.words = [flat[s:e] for s, e in self.spans]
        else:  # a chunk: words joined by single spaces (4x faster than the regex)
            self.words = flat.split(" ") if flat else []
            starts = list(itertools.accumulate((len(w) + 1 for w in self.words), initial=0))
            self.spans = [(a, a + len(w)) for a, w in zip(starts, self.words, strict=False)]
        self.item_starts: set[int] = set()  # words where a list's item begins
        breaks = {m.end() for m in re.finditer(r"\n\s*\n", flat)}
        self.block_starts = (
            {i for i, (s, _) in enumerate(self.spans) if s in breaks} if breaks else set()
        )


class _Units:
    """Runs of words between sentence ends, blank lines, bullets and list items."""

    def __init__(self, w: _Words) -> None:
        self.words, self.item_starts, self.block_starts = w.words, w.item_starts, w.block_starts

    def _next_item(self, i: int, unit: int) -> bool:
        """``words[i]`` numbers an item of a list whose items carry no full stop: "... are
        as follows: 1. Fetch archive metadata 2. Reconstruct local metadata ... 4. Unpack
        fetched binary packages 5. Run preinst script" (the Debian reference's steps). Item
        1 only after a colon; item N only when item N-1's marker stands within the last
        ``ITEM_WINDOW`` words with no full stop since — "Step 1. Open the lid. The fuse is at
        2. Then ..." and "The count rose to 5. This shows ..." keep their figures — or, when
        the unit in progress (from word ``unit``) is a command promised by a colon, anywhere
        in the item ("... define the variable: $ DISABLE_AVX2=True python3 setup.py build #
        for bash 2. To run the test suite ...": PyTables' install steps)."""
        words = self.words
        m = _ITEM_NUMBER.match(words[i])
        if m is None or i + 1 >= len(words) or not _OPENING.match(words[i + 1]):
            return False
        number = int(m.group(1))
        if number == 1:
            return words[i - 1].endswith(":")
        before = f"{number - 1}{m.group(2)}"
        code = unit > 0 and words[unit - 1].endswith(":") and _CODE_START.match(words[unit])
        for j in range(i - 1, max(-1, i - (CODE_ITEM_WINDOW if code else ITEM_WINDOW) - 1), -1):
            if words[j] == before:
                return True
            if not code and _TERMINAL.search(words[j]):
                return False
        return False

    def _dash_item(self, i: int, unit: int) -> bool:
        """``words[i]`` is a dash that sets off a list's item: after a colon ("must meet the
        following: - Minimum length of 12 characters - Contain both ..."), or after an item
        that itself began with one. A dash inside a sentence ("Requirement 8.3.6 - Password
        ...") is left alone."""
        words = self.words
        return (
            words[i] in _DASHES
            and i + 1 < len(words)
            and _OPENING.match(words[i + 1]) is not None
            and (
                words[i - 1].endswith(":") or (unit in self.item_starts and words[unit] in _DASHES)
            )
        )

    def split(self) -> list[tuple[int, int]]:
        """Runs of words between sentence ends, blank lines, bullets and numbered items."""
        cuts = [0]
        words = self.words
        for i in range(1, len(words)):
            word, previous = words[i], words[i - 1]
            end = previous[-1]
            if _LIST_MARKER.match(previous) and (
                i == 1 or _TERMINAL.search(words[i - 2]) or cuts[-1] == i - 1
            ):
                continue  # "... mtime. 1. Precision Most of ...": a list item's number
            item = (
                word[0] in _BULLET_CHARS
                or self._next_item(i, cuts[-1])
                or self._dash_item(i, cuts[-1])
            )
            if item or (_LIST_MARKER.match(word) and _TERMINAL.search(previous)):
                self.item_starts.add(i)
            if (
                item
                or i in self.block_starts
                or (end in _END_CHARS and _sentence_end(previous, word))
                # "... as follows: > fit <- lm(formula) For example ...": the code after the
                # colon is not the start of the next sentence's prose; "(1)" after it is the
                # sentence's own enumeration.
                or (end == ":" and _CODE_START.match(word) and not _INLINE_ITEM.match(word))
            ):
                cuts.append(i)
        cuts.append(len(self.words))
        return [(a, b) for a, b in itertools.pairwise(cuts) if a < b]


class _Peeler:
    """Each unit's structure (headings, labels, list markers, captions, table rows, title
    blocks) peeled off its front, then the prose left, as segments."""

    def __init__(self, w: _Words, cut_start: bool, cut_end: bool) -> None:
        self.words, self.spans, self.item_starts = w.words, w.spans, w.item_starts
        self.cut_start, self.cut_end = cut_start, cut_end
        self.out: list[Segment] = list(w.headers)

    def emit(self, kind: SegmentKind, lo: int, hi: int) -> None:
        if lo >= hi:
            return
        text = " ".join(self.words[lo:hi])
        self.out.append(Segment(kind, text, self.spans[lo][0], self.spans[hi - 1][1]))

    def peel(self, lo: int, hi: int) -> None:
        """Structure off the front of a unit, one piece at a time, then the prose left."""
        words = self.words
        if _LEADERS.search(" ".join(words[lo:hi])) or words[lo] in ("Contents", "CONTENTS"):
            self.emit("toc", lo, hi)
            return
        while lo < hi:
            run = words[lo:hi]
            first = run[0]
            if first[0] in _BULLET_CHARS or (first in _DASHES and lo in self.item_starts):
                if len(first) == 1:
                    lo += 1
                    continue
                words[lo] = run[0] = first = first[1:]
            if _LIST_MARKER.match(first) and len(run) > 1:
                # "1. Precision Most of the conversions ...": an item may open with a title.
                end = _title_end(run, 1, short=True)
                titled = end < len(run) and run[1] not in _OPENERS
                if titled:
                    self.emit("heading", lo + 1, lo + end)
                lo += end if titled else 1
                continue
            if _LABEL_COLON.match(first) or (
                first in _LABELS and len(run) > 1 and run[1] != "that"
            ):
                self.emit("heading", lo, lo + 1)
                lo += 1
                continue
            structure = self._structure_end(run)
            if structure is not None:
                table = _ALL_CAPS.match(first) or _DATE.match(run[1] if len(run) > 1 else "")
                self.emit("table" if table else "heading", lo, lo + structure)
                lo += structure
                continue
            title = _title_prefix(run)
            if title:
                self.emit("heading", lo, lo + title)
                lo += title
                continue
            inner = _inner_break(run)
            stop = hi if inner is None else lo + inner
            self.emit(self._kind(lo, stop), lo, stop)
            lo = stop

    def _structure_end(self, run: list[str]) -> int | None:
        """Length of the heading, caption, table header or revision row that starts ``run``."""
        first = run[0]
        if len(run) > 1 and _SECTION_NUMBER.match(first) and _DATE.match(run[1]):
            return len(run)  # a revision-table row: "2.6.0 2011-01-14 First release of ..."
        if _is_section_number(run, 0):
            return _title_end(run, 1)
        if _CAPTION.match(first) and len(run) > 2 and _CAPTION_NUMBER.match(run[1]):
            return _title_end(run, 2)
        if first in ("Chapter", "Appendix", "Part") and re.fullmatch(
            r"[0-9A-Z]{1,2}[.:]?", run[1] if len(run) > 2 else ""
        ):
            return _title_end(run, 2)
        caps = 0
        while caps < len(run) and _ALL_CAPS.match(run[caps]):
            caps += 1
        return caps if caps >= 3 else None

    def _after_a_sentence(self, lo: int) -> bool:
        """The words before ``lo`` end a sentence: a lower-case name may then open the next
        one, where at a line's or a list's break it is as often a fragment's middle."""
        return lo > 0 and _TERMINAL.search(self.words[lo - 1]) is not None

    def _kind(self, lo: int, hi: int) -> SegmentKind:
        words = self.words[lo:hi]
        at_start = lo == 0 and self.cut_start
        at_end = hi == len(self.words) and self.cut_end
        if at_start and words[0] not in _OPENERS:
            return "fragment"  # a chunk boundary cut the sentence's beginning off
        if at_end and not _TERMINAL.search(words[-1]):
            return "fragment"
        if at_end and words[-1].lower() in _ABBREVIATIONS:
            return "fragment"
        if _prose(words) or (self._after_a_sentence(lo) and _named_first(words)):
            return "sentence"
        numeric = sum(1 for w in words if NUMERIC_WORD.match(w) or _ALL_CAPS.match(w))
        return "table" if numeric >= TABLE_SHARE * len(words) else "debris"


def _with_items(found: list[Segment], w: _Words) -> list[Segment]:
    """A sentence that promises a list ("..., they must meet the following:") joined to
    the items after it that are no sentence on their own ("Minimum length of 12
    characters", "Contain both numeric and alphabetic characters"), quoted as the
    document has them, markers and all. Alone, the promise says nothing and the items are
    debris: "What are the password requirements under PCI DSS?" got no answer at all."""
    word_at = [s for s, _ in w.spans]
    out: list[Segment] = []
    k = 0
    while k < len(found):
        seg, end, n = found[k], found[k].end, len(found[k].text.split())
        joined = 0
        if _promise_prose(seg) and seg.text.endswith(":"):
            for item in found[k + 1 : k + 1 + MAX_LIST_ITEMS]:
                first = bisect.bisect_left(word_at, item.start)
                n += len(item.text.split())
                listed = first in w.item_starts or first - 1 in w.item_starts
                if item.kind != "debris" or not listed or n > MAX_LIST_QUOTE_WORDS:
                    break
                joined, end = joined + 1, item.end
        if joined:  # from the words, which a running header in between is not among
            lo, hi = bisect.bisect_left(word_at, seg.start), bisect.bisect_left(word_at, end)
            out.append(Segment("sentence", " ".join(w.words[lo:hi]), seg.start, end))
        else:
            out.append(seg)
        k += joined + 1
    return out


# A reference manual's entry: the term, then what it does in a sentence without a subject
# ("hist(x) hist(x, nclass=n) Produces a histogram of the numeric vector x.", "--verbose
# Prints every step."). Split at "Produces", the sentence alone answered "Which function
# produces a histogram?" without naming one. The term is code (a call or an option) and the
# sentence opens with a verb: a capitalised word followed by an article or the like, where a
# subject would be followed by its verb ("Results show ...").
MAX_TERM_WORDS = 12
_TERM_WORD = re.compile(r"^(?:[A-Za-z_.][\w.$:]*\(|--?[A-Za-z][\w-]*,?$)")
_OBJECT_OPENERS = wordset("a an the its their each every all one whether")


def _defines(term: Segment, entry: Segment) -> bool:
    words = entry.text.split()
    head = term.text.split()
    return (
        term.kind == "debris"
        and len(head) <= MAX_TERM_WORDS
        and _TERM_WORD.match(head[0]) is not None
        and len(words) > 2
        and words[0].isalpha()
        and words[0][0].isupper()
        and not _is_stop(words[0])
        and words[1] in _OBJECT_OPENERS
    )


# A sentence that promises what follows, then the command it promises: "You can change it by
# the following. $ sudo update-alternatives --config editor" (the Debian reference), "… is as
# follows: > fit <- lm(formula, data = d)" (R-intro). Apart, the sentence answered "How do I
# change the default editor?" with a promise and the command was dropped as debris.
_PROMISE = re.compile(r"(?:\bas follows|\bthe following|\bthe command(?: is)?|\blike this)[:.]$|:$")


# What a promised list starts with: a bullet, a dash, or its first item's number.
_LIST_START = re.compile(
    "^(?:[" + re.escape("".join(sorted(_BULLET_CHARS | _DASHES))) + r"]\s|\(?1[.)]\s)"
)
_PROMISE_INSIDE = re.compile(_PROMISE.pattern.replace("$", "(?=\\s)"))


def _promise_prose(sentence: Segment) -> bool:
    """Prose, or prose but for the colon that ends it ("... must meet the following:")."""
    words = sentence.text.split()
    return sentence.kind == "sentence" or (
        sentence.kind == "debris"
        and sentence.text.endswith(":")
        and _prose([*words[:-1], words[-1][:-1] + "."])
    )


def _promises(sentence: Segment, code: Segment) -> bool:
    return (
        _promise_prose(sentence)
        and _PROMISE.search(sentence.text) is not None
        and code.kind == "debris"
        and len(code.text.split()) <= 2 * MAX_TERM_WORDS
        and _CODE_START.match(code.text) is not None
    )


def ends_as_promised(sentence: str) -> bool:
    """A quote that ends with the command or the list its promise announced ("… use the
    following command: $ git clone …", "… must meet the following: - Minimum length of 12
    characters - …"): complete, although no full stop ends it."""
    for m in _PROMISE_INSIDE.finditer(sentence):
        rest = sentence[m.end() :].strip()
        if rest and (_CODE_START.match(rest) or _LIST_START.match(rest)):
            return True
    return False


def _with_terms(found: list[Segment]) -> list[Segment]:
    """Each entry sentence joined to the term before it, and each promise to the command
    after it, as the manual sets them side by side (the quote stays the document's own
    words, in their order)."""
    out: list[Segment] = []
    for seg in found:
        before = out[-1] if out else None
        if before is not None and (
            (seg.kind == "sentence" and _defines(before, seg)) or _promises(before, seg)
        ):
            out[-1] = Segment("sentence", f"{before.text} {seg.text}", before.start, seg.end)
        else:
            out.append(seg)
    return out


def segment(text: str, *, cut_start: bool = False, cut_end: bool = False) -> list[Segment]:
    """Split text into sentences and the structure around them: headings ("5.2 How can add-on
    packages be installed?", "11.2 Linear models"), admonition labels, list markers, table
    rows and headers, table-of-contents entries and running headers. ``cut_start`` and
    ``cut_end`` say that a chunk boundary may have cut the text mid-sentence there: a sentence
    left without its beginning or end is a ``fragment``."""
    return list(_segment(text, cut_start, cut_end))


@functools.lru_cache(maxsize=512)
def _segment(text: str, cut_start: bool, cut_end: bool) -> tuple[Segment, ...]:
    # A run's retries see the same passages again: about 1 ms a chunk is worth keeping.
    w = _Words(text)
    peeler = _Peeler(w, cut_start, cut_end)
    for lo, hi in _Units(w).split():
        peeler.peel(lo, hi)
    found = sorted(peeler.out, key=lambda s: (s.start, s.end))
    return tuple(_with_terms(_with_items(found, w)))
