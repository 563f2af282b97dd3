"""Small text tools shared by the offline engine, the critic and the citation checker."""

from __future__ import annotations

import html
import re
import unicodedata

from masis_core.retrieval.quality import STOP_WORDS, words

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")
# A figure stands alone: digits inside a path or identifier ("plant/000001") are not one.
_NUMBER = re.compile(r"(?<![\w./])[-+]?\d[\d,]*(?:\.\d+)?%?(?!/)")
# Our citation markers are exactly "[n]" with ASCII digits: "[２]" or "[2\u2060]" is not one.
_MARKER = re.compile(r"\s*\[([0-9]+)\]")
_ANY_MARKER = re.compile(r"[\[［]\d+[\]］]")
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z]{2,}(?:\s+[A-Z][a-zA-Z]{2,})*")

# Words that ask rather than inform: never counted as content the answer must cover.
QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "many",
        "much",
        "does",
        "did",
        "do",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "will",
        "tell",
        "explain",
        "describe",
        "list",
        "give",
        "name",
        "show",
        "find",
        "there",
        "any",
        "according",
    ]
)
_SUFFIXES = (
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ing",
    "ies",
    "ied",
    "ed",
    "es",
    "ly",
    "s",
)


def sentences(text: str) -> list[str]:
    parts: list[str] = []
    for raw in re.split(r"\n\s*\n", text):
        block = " ".join(raw.split())
        parts.extend(s.strip() for s in _SENTENCE_SPLIT.split(block) if s.strip())
    return parts


def stem(word: str) -> str:
    """A crude stemmer: enough to match 'configure' with 'configuration'."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:7]


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
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


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
