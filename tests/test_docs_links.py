"""Every relative link of the documentation resolves: its file exists and its #anchor is a
heading there, by GitHub's rules (issue 55). Docs are split and moved; a link into a section
that moved must follow it, or a reader lands on a page without what the link promised."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "bench" / "README.md",
        *(ROOT / "docs").rglob("*.md"),
    ]
)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks (a link inside one is an example)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        lines.append("" if fenced else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its rendered text lower-cased, every character but
    letters, digits, marks, connectors, spaces and hyphens dropped, spaces made hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"(\*\*|__|\*|~~)", "", text)  # emphasis marks (not a word's underscore)
    kept = (c for c in text.lower() if c in " -" or unicodedata.category(c)[0] in "LMN" or c == "_")
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings; a repeated one gets -1, -2, … as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of each relative link or image outside code; a link's text may
    run over a line break."""
    text = "\n".join(INLINE_CODE.sub("", line) for line in prose(path.read_text(encoding="utf-8")))
    found = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto: … the network is not checked
        found.append((text.count("\n", 0, m.start(1)) + 1, target))
    return found


def broken(path: Path, root: Path = ROOT) -> list[str]:
    """Each link of the page that names a missing file or a heading its file does not have."""
    out = []
    for number, target in links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not dest.exists():
            out.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and unquote(anchor).lower() not in anchors(dest):
            out.append(f"{where} (no heading #{anchor} in {dest.relative_to(root)})")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_anchors_follow_githubs_rules() -> None:
    assert slug("Confidence fitted to each workspace") == "confidence-fitted-to-each-workspace"
    assert slug("What is not met, and why") == "what-is-not-met-and-why"
    assert slug("Figures: before and after issue 51") == "figures-before-and-after-issue-51"
    assert slug("`MASIS_READER` and **the reader**") == "masis_reader-and-the-reader"
    assert slug("2026-11-27 — the judge's ceiling") == "2026-11-27--the-judges-ceiling"


def test_a_missing_heading_or_file_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# Title\n\n## Same\n\n## Same\n", encoding="utf-8")
    page.write_text(
        "[ok](b.md#same-1) [gone](b.md#other) [none](c.md) [self](#here)\n\n"
        "[over two\nlines](d.md)\n\n"
        "```\n[in code](nowhere.md)\n```\n\n## Here\n",
        encoding="utf-8",
    )
    assert broken(page, tmp_path) == [
        "a.md:1: b.md#other (no heading #other in b.md)",
        "a.md:1: c.md (no such file)",
        "a.md:4: d.md (no such file)",
    ]
