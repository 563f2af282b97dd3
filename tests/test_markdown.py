"""Markdown notes are cited by heading path and paragraph (``ingest.markdown``), as Word files
are, and the source view shows the passage at that place."""

from __future__ import annotations

import re
import unicodedata

import pytest

from ingest.parsing import parse_bytes
from ingest.pipeline import Ingestor
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app

NOTE = """Written after the spring audit.

# Pumps

The hydraulic pump must be inspected every 500 operating hours by the shift lead.

## Maintenance

- drain the oil into the red drum
- replace the filter

```sh
# stop it first: a comment, not a heading
pumpctl --stop
```

| Part | Interval |
|------|----------|
{rows}

Seals
-----

Seals are replaced when they weep.

# Boilers

The boiler is descaled once a year.
"""


def note(rows: int = 2) -> bytes:
    body = "\n".join(f"| part {n} | {n * 100} h |" for n in range(1, rows + 1))
    return NOTE.format(rows=body).encode()


def test_each_block_is_placed_by_its_heading_path() -> None:
    parsed = parse_bytes(note(), "plant.md")
    places = [p.place for p in parsed.pages]
    assert places == [
        "paragraph 1",
        "Pumps, paragraph 1",
        "Pumps › Maintenance, paragraphs 1–2",
        "Pumps › Maintenance, table 1, rows 2–3",
        "Pumps › Seals, paragraph 1",  # a setext heading of level 2
        "Boilers, paragraph 1",  # a new first-level heading ends the Pumps path
    ]
    maintenance = parsed.pages[2].text
    # The heading path heads the block; the list keeps its bullets, the code its comment line.
    assert maintenance.startswith("Pumps › Maintenance\n")
    assert "- drain the oil into the red drum\n- replace the filter" in maintenance
    assert "# stop it first: a comment, not a heading" in maintenance
    # A table's blocks start with the heading path, then the header row: found by both.
    assert parsed.pages[3].text == (
        "Pumps › Maintenance\nPart | Interval\npart 1 | 100 h\npart 2 | 200 h"
    )


def test_a_long_table_keeps_its_header_in_every_block() -> None:
    tables = [p for p in parse_bytes(note(rows=60), "plant.md").pages if "table 1" in p.place]
    assert len(tables) > 1
    assert all(t.text.startswith("Pumps › Maintenance\nPart | Interval\n") for t in tables)
    assert tables[-1].place.endswith("–61")  # the header is row 1


def words(text: str) -> set[str]:
    """Composed first: pages hold text in NFC, so "contrôlée" typed decomposed is one word."""
    return set(re.findall(r"\w+", unicodedata.normalize("NFC", text)))


@pytest.mark.parametrize(
    "source",
    [
        "# Call the supplier about the V-12 seals before Q3\n",  # a to-do note: a heading alone
        "# A\n## Important: valve V-12 is closed\n# B\n\nbody",
        "# A\n\nbody\n\n## Trailing: order spare filters\n",
        # "---" under a sentence makes it a heading, as CommonMark says
        "# Notes\n\nThe pump must be inspected every 500 hours.\n---\n# Next\n\nx",
        "---\ntitle: Pump audit 2024\nowner: J. Smith\n---\n\nThe seals leak.\n",
        "# H\n\nintro\n\n| Only | Header |\n|---|---|\n\nafter",
        "## What the suite proves\n\n| Test | Proves |\n|---|---|\n| a | b |\n",
        '[ref]: http://example.com/manual "Manual"\n',  # a link definition holds no block
        "> quoted\n> # not a heading of the note\n\n1. one\n   - nested\n\n<div>raw</div>\n",
        unicodedata.normalize("NFD", "# Pompe à chaleur\n\nLa pompe est contrôlée à 500 h.\n"),
    ],
)
def test_no_word_of_a_note_is_lost(source: str) -> None:
    parsed = parse_bytes(source.encode(), "note.md")
    kept = set().union(*(words(p.text) for p in parsed.pages))
    assert words(source) <= kept, words(source) - kept


def test_a_heading_alone_is_a_block_but_a_parent_heading_heads_its_children() -> None:
    places = [p.place for p in parse_bytes(b"# A\n## B\n# C\n## D\n\ntext", "n.md").pages]
    assert places == ["A › B", "C › D, paragraph 1"]  # no block of "A" or "C" alone


def test_front_matter_is_its_own_block_and_a_header_row_is_the_header() -> None:
    source = b"---\ntitle: Pump audit\n---\n\n| 1990 | 2000 |\n|---|---|\n| 3 | 4 |\n"
    pages = parse_bytes(source, "audit.md").pages
    assert [(p.place, p.text) for p in pages] == [
        ("front matter", "title: Pump audit"),
        ("table 1, row 2", "1990 | 2000\n3 | 4"),  # figures, but Markdown marks them a header
    ]


def test_plain_text_still_has_pages() -> None:
    parsed = parse_bytes(b"# not a heading in a .txt\n\nfirst\fsecond", "notes.txt")
    assert [(p.number, p.place) for p in parsed.pages] == [(1, ""), (2, "")]


def test_a_citation_of_a_note_names_its_place_and_shows_the_passage(bench: Workbench) -> None:
    ws = bench.create_workspace("notes", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, note(), "plant.md").status == "ingested"
    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    assert rec.answer.startswith("The hydraulic pump must be inspected every 500 operating hours")
    assert rec.citations[0]["place"] == "Pumps, paragraph 1"
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception
    shown = [m.value for m in at.markdown]
    assert "**plant.md** — Pumps, paragraph 1" in shown, shown
    assert not any("no page to draw" in i.value for i in at.info)


def test_a_heading_with_markup_and_addresses_is_shown_as_text(bench: Workbench) -> None:
    """A place is the document's words: its link, HTML and address never become live."""
    heading = "Pumps <b>now</b> see https://evil.example and [manual](https://evil.example/t.gif)"
    ws = bench.create_workspace("notes", "wordllama")
    text = f"# {heading}\n\nThe hydraulic pump must be inspected every 500 operating hours.\n"
    assert Ingestor(bench).ingest_bytes(ws, text.encode(), "plant.md").status == "ingested"
    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    assert rec.citations[0]["place"] == f"{heading}, paragraph 1"
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception
    escaped = (
        "Pumps \\<b>now\\</b> see `https://evil.example` and "
        "\\[manual\\](`https://evil.example/t.gif`), paragraph 1"
    )
    shown = [m.value for m in at.markdown]
    assert f"**plant.md** — {escaped}" in shown, shown
    assert not any("](https://" in m or re.search(r"(?<!\\)<b>", m) for m in shown)
