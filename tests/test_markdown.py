"""Markdown notes are cited by heading path and paragraph (``ingest.markdown``), as Word files
are, and the source view shows the passage at that place."""

from __future__ import annotations

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
    assert parsed.pages[3].text == "Part | Interval\npart 1 | 100 h\npart 2 | 200 h"


def test_a_long_table_keeps_its_header_in_every_block() -> None:
    tables = [p for p in parse_bytes(note(rows=60), "plant.md").pages if "table 1" in p.place]
    assert len(tables) > 1
    assert all(t.text.startswith("Part | Interval\n") for t in tables)
    assert tables[-1].place.endswith("–61")  # the header is row 1


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
