"""Untrusted text made safe to show: the UI and the Markdown export render it as Markdown, tables,
JSON, text fields and the PDF export show it as it is.

Document sentences, web titles and snippets, questions and model output are data. Passed to
Markdown as they are, ``[revised manual](https://…)`` becomes a live link inside a cited
answer and ``![](https://…/t.gif)`` a tracking image; Streamlit adds LaTeX (``$``) and
``:color[…]`` / ``:material/…:`` directives. The rule, everywhere untrusted text is shown:

* it displays exactly as written and never becomes a link, an image, HTML or a script;
* a web or e-mail address in it is shown in full as code text (monospace, copyable, not
  clickable). A backslash does not stop Streamlit's Markdown from linking a bare
  ``https://…``, ``www.…`` or ``a@b.example``: it links them after parsing (remark-gfm);
* bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069) are removed:
  they reorder what is shown around them, so a file name or a question can display as
  something it is not;
* the only markup left is ours: citation markers of the run, and a web source's link, whose
  label is its full address (``safe_link``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

from masis_core.text.sentences import defang

# What becomes markup anywhere on a line, and only that: a backslash before punctuation (or at
# a line's end, a hard break), code and emphasis ("`", "*", "_" unless inside a word, where
# CommonMark never reads it as emphasis), brackets (links, images, footnotes: with "[" and "]"
# escaped, "(" and "!" stay text), strikethrough "~", Streamlit's LaTeX "$", "<" before what
# could open a tag or autolink, "&" before an entity, and ":" before a word (Streamlit's
# ":red[…]", ":material/…:", emoji codes). Escaping every punctuation mark had put
# "\(assuming Linux here\)" and "like this\:" into exported reports. The private-use
# "\ue002" is a parked address: a backslash before it would escape its code span; "\ue000…
# \ue001" a citation marker of the run (``answer_markdown``), live brackets: "!" before one, "("
# or ":" after one would make it an image, a link or a link definition.
_INLINE = re.compile(
    r"\\(?=[!-/:-@\[-`{-~\ue002]|$)|[`*\[\]~$]|(?<![^\W_])_|_(?![^\W_])"
    r"|<(?=[A-Za-z/!?])|&(?=#?\w+;)|:(?=[\w+\-/])|!(?=\ue000)|(?<=\ue001)[(:]",
    re.M,
)
# Markup only at the start of a line (headings, lists "+ -" and "1." or "1)", block quotes,
# rules and setext underlines, and a table's delimiter row, which starts with "|", ":" or
# "-"): escaped only there, so "plant-manual.pdf", "#3", "a | b" or "0.27" stay readable in
# labels and exported files. A "|" elsewhere makes no table without that row.
_LINE_START = re.compile(r"^(?:([#+\-=>|:])|([0-9]{1,9})([.)]))", re.M)
_WWW_DOT = re.compile(r"(?<=www)\.", re.I)
_SPACES = re.compile(r"\s+")
_INDENT = re.compile(r"^[ \t]+", re.M)
_CR = re.compile(r"\r\n?")
# What remark-gfm would link: "http(s)://…" and "www.…" up to a space (trailing punctuation
# left out, as GFM does), and e-mail addresses. A superset on purpose: Unicode letters, any
# position. Never a backtick (it would end the code span) or one of our placeholders.
_ADDRESS = re.compile(
    r"(?:https?://|www\.)[^\s`\ue000-\ue003]*[^\s`\ue000-\ue003.,:;!?'\")\]}>*_~]"
    r"|[-.\w+]+@[-\w]+(?:\.[-\w]+)+",
    re.I,
)
_ADDRESS_SLOT = "\ue002{}\ue003"
_ADDRESS_SLOTTED = re.compile("\ue002([0-9]+)\ue003")
_NO_ADDRESS_SLOTS = str.maketrans({"\ue002": "\ufffd", "\ue003": "\ufffd"})
# Bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI, FSI, PDI).
_BIDI_CONTROLS = str.maketrans(dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
# Our own citation markers as the evaluator writes them into the stored answer, and the
# private-use placeholders they wait in while the text around them is escaped.
_OUR_MARKER = re.compile(r"\[([0-9]+)\]")
_SLOT = "\ue000{}\ue001"
_SLOTTED = re.compile("\ue000([0-9]+)\ue001")
_NO_SLOTS = str.maketrans({"\ue000": "\ufffd", "\ue001": "\ufffd"})
LINK_SCHEMES = ("http", "https")
# Kept as they are in a link target; anything else (spaces, brackets, quotes, "<>") is
# percent-encoded, so the target cannot end early or open new markup.
_URL_SAFE = "/:?#@!$&*+,;=%-._~"


def plain(text: object) -> str:
    """Untrusted text for a place that shows it as it is (a table, JSON, a text field, the
    PDF export): the bidi controls removed, nothing else changed."""
    return ("" if text is None else str(text)).translate(_BIDI_CONTROLS)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 citation', '3 citations' ('1 query', '2 queries' with ``plural``): a panel that said
    "1 cited sentences" read as a slip."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def escape_markdown(text: str, *, inline: bool = False) -> str:
    """``text`` as Markdown that displays it literally, its addresses as code (see the module
    docstring). ``inline`` folds line breaks into spaces, for labels, captions and list items
    where a new line would start a new block. Indentation is dropped (it would start a code
    block; a paragraph ignores it anyway), and a carriage return becomes a newline, so every
    line start is seen as Markdown sees it."""
    text = plain(text).translate(_NO_ADDRESS_SLOTS)
    text = _SPACES.sub(" ", text).strip() if inline else _INDENT.sub("", _CR.sub("\n", text))
    addresses: list[str] = []

    def park(match: re.Match[str]) -> str:
        addresses.append(match[0])
        return _ADDRESS_SLOT.format(len(addresses) - 1)

    text = _INLINE.sub(lambda m: "\\" + m[0], _ADDRESS.sub(park, text))
    # "12." keeps its number and escapes the dot (or bracket); "#", "+", "-", … a backslash.
    text = _LINE_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)
    text = _WWW_DOT.sub(r"\\.", text)
    return _ADDRESS_SLOTTED.sub(lambda m: f"`{addresses[int(m[1])]}`", text)


def untrusted(text: object, *, inline: bool = True) -> str:
    """Document, web or model text for Markdown: anything that looks like one of our citation
    markers defanged to "［n］", then escaped. One line unless ``inline`` is False."""
    return escape_markdown(defang("" if text is None else str(text)), inline=inline)


def quote_block(text: str) -> str:
    """Untrusted text as a Markdown block quote, line by line."""
    lines = [line.strip() for line in untrusted(text, inline=False).strip().splitlines()]
    return "\n".join(f"> {line}" if line else ">" for line in lines) or ">"


def link_target(url: str) -> str | None:
    """``url`` ready for a Markdown link, or None when it must not be one: only absolute
    http(s) addresses are links (no ``javascript:``, ``data:`` or relative paths)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in LINK_SCHEMES or not parts.netloc:
        return None
    return quote(url, safe=_URL_SAFE)


def safe_link(label: str, url: str) -> str:
    """A Markdown link with an escaped label when ``url`` is http(s); otherwise label and
    address as escaped text, so the analyst still sees where it pointed."""
    target = link_target(url)
    if target is None:
        shown = label if label == url else f"{label} ({url})"
        return untrusted(shown)
    return f"[{untrusted(label)}]({target})"


def answer_markdown(answer: str, citations: Iterable[int]) -> str:
    """The stored answer as Markdown: its text escaped, and only the markers that are real
    citations of this run kept as "[n]"; any other bracketed number becomes "［n］" text.

    The real markers wait in private-use placeholders while the whole text is escaped at
    once, so line starts and spacing around them are judged as in the answer itself."""
    real = set(citations)
    text = answer.translate(_NO_SLOTS)
    text = _OUR_MARKER.sub(lambda m: _SLOT.format(m[1]) if int(m[1]) in real else m[0], text)
    return _SLOTTED.sub(lambda m: f"[{m[1]}]", untrusted(text, inline=False))


def _words_pattern(sentence: str) -> re.Pattern[str] | None:
    """The sentence's words in order, any whitespace between them: a passage keeps a
    paragraph's line breaks where the cited sentence, as quoted, has spaces."""
    words = sentence.split()
    return re.compile(r"\s+".join(map(re.escape, words))) if words else None


def highlighted_text(text: str, cited: Iterable[str]) -> tuple[str, int]:
    """A passage as Markdown with each cited sentence found in it on an orange background
    (Streamlit's directive, around escaped text: the passage adds no markup of its own), and
    how many of them were found. The source view of a document without pages (a Word
    section, a slide, table rows) shows its cited place this way."""
    spans: list[tuple[int, int]] = []
    for sentence in cited:
        pattern = _words_pattern(sentence)
        match = pattern.search(text) if pattern is not None else None
        if match is not None:
            spans.append(match.span())
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    parts, at = [], 0
    for start, end in merged:
        parts.append(_between(text[at:start]))
        parts.append(f":orange-background[{untrusted(text[start:end])}]")
        at = end
    parts.append(_between(text[at:]))
    return "".join(parts), len(merged)


def _between(text: str) -> str:
    """Uncited text, escaped, keeping the space or line breaks that part it from a cited
    sentence (escaping alone drops a leading space as indentation)."""
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]

    def gap(ws: str) -> str:
        return "\n" * min(2, ws.count("\n")) if "\n" in ws else (" " if ws else "")

    return gap(lead) + untrusted(core, inline=False) + gap(trail) if core else gap(text)


def percent(p: float) -> str:
    """A probability as the analyst reads it. Never "100%" or "0%": a fitted model's 0.998
    is not certainty, and a round 100% reads as a guarantee."""
    if p >= 0.995:
        return ">99%"
    if p < 0.005:
        return "<1%"
    return f"{round(p * 100)}%"
