"""'What changed?': the structured diff by section and sentence (issue 56)."""

from __future__ import annotations

import gzip
import textwrap
from pathlib import Path

import pytest

from masis_core.answers.changes import asked_comparison, compare, sections_of, word_marks

NEWS = Path("/usr/share/doc/apt/NEWS.Debian.gz")


def as_pages(text: str, width: int, lines_per_page: int) -> list[tuple[int, str, str]]:
    """The text re-wrapped at ``width`` and cut into pages of ``lines_per_page`` lines, each
    page with a running header and its number: what a different layout of it makes."""
    lines: list[str] = []
    for para in text.split("\n\n"):
        first = para.splitlines()[0] if para.strip() else ""
        if first and sections_of([(1, "", first)])[0].title == first.strip():
            lines += [first, *textwrap.wrap(" ".join(para.splitlines()[1:]), width), ""]
        else:
            lines += [*textwrap.wrap(" ".join(para.split()), width), ""]
    pages = []
    for n, start in enumerate(range(0, len(lines), lines_per_page), 1):
        body = "\n".join(lines[start : start + lines_per_page])
        pages.append((n, "", f"Release notes\n{body}\n{n}"))
    return pages


POLICY = """TRAVEL POLICY

1. Booking

Staff book trains for trips under four hours. Flights need a manager's approval.
The travel desk books hotels within the city rate.

2. Expenses

Meals are refunded up to 40 euros a day. Taxis are refunded when no public transport
runs. Receipts are kept for seven years.

3. Insurance

Every trip abroad is insured by the company. Staff report accidents within two days.
"""


def test_reflowed_lines_page_breaks_and_hyphens_are_no_change():
    a = as_pages(POLICY, 50, 6)
    b = as_pages(POLICY, 83, 4)
    # A word hyphenated at a line end in one layout only.
    b = [(n, p, t.replace("approval.", "ap-\nproval.")) for n, p, t in b]
    assert compare("policy.pdf", ("v1", a), ("v2", b)).unchanged


def test_a_changed_sentence_an_added_and_a_removed_section_are_cited_to_both_versions():
    revised = POLICY.replace("40 euros", "55 euros").replace(
        "3. Insurance\n\nEvery trip abroad is insured by the company. Staff report accidents "
        "within two days.\n",
        "3. Remote work\n\nStaff may work abroad for up to ten days a year.\n",
    )
    diff = compare("policy.pdf", ("v2", as_pages(POLICY, 60, 5)), ("v3", as_pages(revised, 70, 5)))
    kinds = {(s.kind, s.title) for s in diff.sections}
    assert kinds == {
        ("changed", "2. Expenses"),
        ("removed", "3. Insurance"),
        ("added", "3. Remote work"),
    }
    changed = next(s for s in diff.sections if s.kind == "changed")
    (ch,) = changed.changes
    assert "40 euros" in ch.old[0].text and "55 euros" in ch.new[0].text
    text = "\n".join(diff.lines())
    assert "[policy.pdf, v2, p. " in text and "[policy.pdf, v3, p. " in text
    old_marks, new_marks = word_marks(ch.old[0].text, ch.new[0].text)
    assert [w for w, hot in old_marks if hot] == ["40"]
    assert [w for w, hot in new_marks if hot] == ["55"]


@pytest.mark.skipif(not NEWS.exists(), reason="apt's NEWS.Debian is not installed")
def test_a_real_news_file_from_two_releases_names_the_new_entry_and_nothing_else():
    """apt's NEWS.Debian as shipped, against the same file one release earlier (its first
    entry dropped), each laid out differently (wrap width, page length)."""
    full = gzip.decompress(NEWS.read_bytes()).decode()
    entries = full.split("\n\n -- ")
    first_end = full.index(entries[0]) + len(entries[0])
    older = full[full.index("\n", first_end + 5) + 1 :].lstrip("\n")
    diff = compare("NEWS.Debian", ("v1", as_pages(older, 64, 30)), ("v2", as_pages(full, 90, 22)))
    assert [(s.kind, s.title) for s in diff.sections] == [("added", full.splitlines()[0].strip())]


def test_questions_that_ask_for_a_comparison():
    asked = asked_comparison("Compare v3 and v2 of report.pdf?")
    assert asked is not None and (asked.document, asked.old, asked.new) == ("report.pdf", 2, 3)
    asked = asked_comparison("What changed in the travel policy since March?")
    assert asked is not None and (asked.document, asked.old) == ("travel policy", None)
    assert asked_comparison("What is the travel policy?") is None
