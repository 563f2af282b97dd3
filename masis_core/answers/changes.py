"""What changed between two versions of a document: a structured diff by section and sentence,
each change cited to both versions' places (issue 56).

Offline and deterministic (``difflib``). Before comparing, each version's text is made
comparable so that layout is not mistaken for content: running headers and footers (a line on
most pages) and bare page numbers are dropped, a word hyphenated at a line end is joined, and
whitespace is folded; the text then runs across page breaks, so a sentence that moved to the
next page, or whose lines were reflowed, is the same sentence. Sections are found by their
headings (numbered, Markdown, all capitals, a NEWS file's release lines, a Word document's
section places) and paired by title, so a renumbered section is still the same one.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from masis_core.policy import POLICY

Kind = Literal["added", "removed", "changed"]

# A page as the comparison reads it: (number, place label or "", text).
PageText = tuple[int, str, str]

_HYPHEN = re.compile(r"(\w)-\n\s*(\w)")
_SPACE = re.compile(r"\s+")
_PAGE_NO = re.compile(
    r"^[-–\s]*(page\s*)?[1-9]\d{0,3}(\s*(of|/)\s*[1-9]\d{0,3})?[-–\s]*$", re.IGNORECASE
)
_DIGITS = re.compile(r"\d+")
_NUMBERED = re.compile(r"^(\d+(\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+\S")
_RELEASE = re.compile(
    r"^(\*\s*)?(version|release|changes in|noteworthy changes|what's new)\b", re.IGNORECASE
)
# A Debian changelog or NEWS.Debian entry: "apt (2.5.2) unstable; urgency=medium".
_DEBIAN_ENTRY = re.compile(r"^[a-z0-9][a-z0-9.+-]*\s\([^)\s]+\)\s[^;]+;\s*urgency=")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[\"'“(\[]?[A-Z0-9])")
_NUMBERING = re.compile(r"^(\d+(\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+")
MAX_HEADING_WORDS = 12
RENAMED_ALIKE = POLICY.renamed_alike
EDGE_LINES = 2  # lines at a page's top and bottom where running headers and footers sit


@dataclass(frozen=True)
class Sentence:
    text: str  # whitespace folded: what is shown
    page: int

    @property
    def key(self) -> str:
        """What is compared: without hyphens, as a hyphen at a line end may be one the
        layout added ('exam-ple') or one the word has ('command-line') and cannot be told."""
        return self.text.replace("-", "").replace("\u00ad", "")


@dataclass
class Section:
    title: str
    page: int
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The title without its numbering, case-folded: how sections are paired."""
        return _NUMBERING.sub("", self.title).casefold().strip()


@dataclass(frozen=True)
class Change:
    kind: Kind
    old: tuple[Sentence, ...]
    new: tuple[Sentence, ...]


@dataclass
class SectionChange:
    kind: Kind
    title: str
    old_page: int | None
    new_page: int | None
    changes: list[Change] = field(default_factory=list)


@dataclass
class Comparison:
    """The diff of version ``old_label`` to ``new_label`` of ``filename``."""

    filename: str
    old_label: str
    new_label: str
    sections: list[SectionChange]

    @property
    def unchanged(self) -> bool:
        return not self.sections

    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter(s.kind for s in self.sections)
        return {k: c[k] for k in ("added", "removed", "changed")}

    def cite(self, label: str, page: int | None) -> str:
        return f"{self.filename}, {label}, p. {page}" if page else f"{self.filename}, {label}"

    def lines(self) -> list[str]:
        """The answer as text: one line per section, one per changed sentence, each cited to
        both versions' places."""
        if self.unchanged:
            return [f"{self.filename}: no change in the text from {self.old_label} to "
                    f"{self.new_label}."]  # fmt: skip
        c = self.counts()
        out = [
            f"{self.filename}, {self.old_label} → {self.new_label}: {c['changed']} sections "
            f"changed, {c['added']} added, {c['removed']} removed."
        ]
        for s in self.sections:
            old, new = self.cite(self.old_label, s.old_page), self.cite(self.new_label, s.new_page)
            where = f"[{old}; {new}]"
            out.append(f"Section “{s.title}” {s.kind} {where}")
            for ch in s.changes:
                out.extend(self._change_lines(ch))
        return out

    def _change_lines(self, ch: Change) -> list[str]:
        old = " ".join(x.text for x in ch.old)
        new = " ".join(x.text for x in ch.new)
        o = f"[{self.cite(self.old_label, ch.old[0].page)}]" if ch.old else ""
        n = f"[{self.cite(self.new_label, ch.new[0].page)}]" if ch.new else ""
        if ch.kind == "changed":
            return [f"  − “{old}” {o}", f"  + “{new}” {n}"]
        if ch.kind == "added":
            return [f"  + “{new}” {n}"]
        return [f"  − “{old}” {o}"]


# -- making the text comparable -----------------------------------------------------------
def _boilerplate(pages: Sequence[PageText]) -> set[str]:
    """Lines (digits folded) on at least half of the pages, when there are three or more:
    running headers and footers, which a page break moves in the text."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for _, _, text in pages:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        edges = lines[:EDGE_LINES] + lines[-EDGE_LINES:]
        seen.update({_line_key(ln) for ln in edges if sum(c.isalpha() for c in ln) >= 3})
    return {k for k, n in seen.items() if n >= max(2, len(pages) // 2)}


def _line_key(line: str) -> str:
    return _DIGITS.sub("#", _SPACE.sub(" ", line).strip().casefold())


def is_heading(line: str) -> bool:
    s = line.strip()
    words = s.split()
    if _DEBIAN_ENTRY.match(s):
        return True
    if not words or len(words) > MAX_HEADING_WORDS or s.endswith((".", ",", ";")):
        return bool(s.startswith("#") and len(words) <= MAX_HEADING_WORDS + 1)
    if s.startswith("#") or _RELEASE.match(s) or _DEBIAN_ENTRY.match(s):
        return True
    if _NUMBERED.match(s) and not s[-1].isdigit():
        return True
    letters = [c for c in s if c.isalpha()]
    return len(letters) >= 3 and all(c.isupper() for c in letters)


def sections_of(pages: Sequence[PageText]) -> list[Section]:
    """The document's sections, each with its sentences and the page each starts on."""
    drop = _boilerplate(pages)
    sections = [Section("(start)", pages[0][0] if pages else 1)]
    buffer: list[tuple[str, int]] = []  # (line, page) of the section being read

    def close() -> None:
        sections[-1].sentences.extend(_sentences(buffer))
        buffer.clear()

    for number, place, text in pages:
        if place and place.split(",")[0] != sections[-1].title:
            close()
            sections.append(Section(place.split(",")[0].strip(), number))
        lines = [ln for ln in text.splitlines() if ln.strip()]
        for i, line in enumerate(lines):
            edge = i < EDGE_LINES or i >= len(lines) - EDGE_LINES
            if edge and (_line_key(line) in drop or _PAGE_NO.match(line.strip())):
                continue
            if not place and is_heading(line):
                close()
                sections.append(Section(_SPACE.sub(" ", line.strip().lstrip("#").strip()), number))
            else:
                buffer.append((line, number))
    close()
    return [s for s in sections if s.sentences or s.title != "(start)"]


def _sentences(lines: list[tuple[str, int]]) -> list[Sentence]:
    """Lines run together (hyphens at line ends joined), then cut at sentence ends; each
    sentence keeps the page its first character is on."""
    text, starts = "", []  # starts: (offset, page)
    for line, page in lines:
        starts.append((len(text), page))
        text += line.rstrip() + "\n"
    joined, offsets = _join_hyphens(text)
    out: list[Sentence] = []
    pos = 0
    for part in _SENTENCE_END.split(joined):
        at = joined.find(part, pos)
        pos = at + len(part)
        norm = _SPACE.sub(" ", part).strip()
        if norm:
            raw = offsets[at] if at < len(offsets) else len(text)
            page = next((p for off, p in reversed(starts) if off <= raw), starts[0][1])
            out.append(Sentence(norm, page))
    return out


def _join_hyphens(text: str) -> tuple[str, list[int]]:
    """The text with 'exam-\\n ple' joined as 'example', and for each of its characters the
    offset it had before (so a sentence's page is still known)."""
    out: list[str] = []
    offsets: list[int] = []
    last = 0
    for m in _HYPHEN.finditer(text):
        for i in range(last, m.start() + 1):
            out.append(text[i])
            offsets.append(i)
        last = m.end() - 1
    for i in range(last, len(text)):
        out.append(text[i])
        offsets.append(i)
    return "".join(out), offsets


# -- the diff -----------------------------------------------------------------------------
def compare(
    filename: str,
    old: tuple[str, Sequence[PageText]],
    new: tuple[str, Sequence[PageText]],
) -> Comparison:
    """The sections added, removed and changed from ``old`` to ``new`` ((label, pages) each)."""
    a, b = sections_of(old[1]), sections_of(new[1])
    out: list[SectionChange] = []
    matcher = difflib.SequenceMatcher(None, [s.key for s in a], [s.key for s in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = op == "equal" or (
            op == "replace"
            and i2 - i1 == j2 - j1
            and all(_alike(x, y) for x, y in zip(a[i1:i2], b[j1:j2], strict=True))
        )
        if pairs:
            for x, y in zip(a[i1:i2], b[j1:j2], strict=True):
                changed = _sentence_changes(x, y)
                if changed or x.key != y.key:
                    title = y.title if x.key == y.key else f"{x.title} → {y.title}"
                    out.append(SectionChange("changed", title, x.page, y.page, changed))
            continue
        out.extend(SectionChange("removed", s.title, s.page, None) for s in a[i1:i2])
        out.extend(SectionChange("added", s.title, None, s.page) for s in b[j1:j2])
    return Comparison(filename, old[0], new[0], out)


def _alike(x: Section, y: Section) -> bool:
    """Two sections under different titles are one renamed section when most of their
    sentences are the same."""
    sa, sb = [s.key for s in x.sentences], [s.key for s in y.sentences]
    return difflib.SequenceMatcher(None, sa, sb, autojunk=False).ratio() >= RENAMED_ALIKE


def _sentence_changes(x: Section, y: Section) -> list[Change]:
    sa = [s.key for s in x.sentences]
    sb = [s.key for s in y.sentences]
    matcher = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
    out: list[Change] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        kind: Kind = {"replace": "changed", "insert": "added", "delete": "removed"}[op]  # type: ignore[assignment]
        out.append(Change(kind, tuple(x.sentences[i1:i2]), tuple(y.sentences[j1:j2])))
    return out


def word_marks(old: str, new: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both sentences as (word, changed) runs, for showing them side by side highlighted."""
    a, b = old.split(), new.split()
    ma: list[tuple[str, bool]] = []
    mb: list[tuple[str, bool]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        ma.extend((w, op != "equal") for w in a[i1:i2])
        mb.extend((w, op != "equal") for w in b[j1:j2])
    return ma, mb


# -- the question -------------------------------------------------------------------------
_ASKED = re.compile(
    r"\bcompare\s+v(?:ersion\s*)?(\d+)\s+(?:and|with|to|vs\.?)\s+v(?:ersion\s*)?(\d+)\s+of\s+(.+?)[?.!]*$",
    re.IGNORECASE,
)
_WHAT_CHANGED = re.compile(r"\bwhat(?:'s| has| have)?\s+changed\s+in\s+(.+?)[?.!]*$", re.IGNORECASE)


@dataclass(frozen=True)
class Asked:
    """A question that asks for a comparison: the document named, the versions (None: the
    one before the current and the current)."""

    document: str
    old: int | None = None
    new: int | None = None


def asked_comparison(question: str) -> Asked | None:
    """'compare v2 and v3 of report.pdf' or 'what changed in the travel policy?'."""
    q = question.strip()
    m = _ASKED.search(q)
    if m:
        lo, hi = sorted((int(m.group(1)), int(m.group(2))))
        return Asked(m.group(3).strip(" \"'“”"), lo, hi)
    m = _WHAT_CHANGED.search(q)
    if m:
        name = re.split(r"\s+since\s+", m.group(1), maxsplit=1, flags=re.IGNORECASE)[0]
        return Asked(re.sub(r"^the\s+", "", name.strip(" \"'“”"), flags=re.IGNORECASE))
    return None
