"""Sections stored at ingest (``ingest.sections``): each chunk knows, from the PDF's outline or
its headings, the section it lies in, and the composer ranks a section as one whole even when
its chunks were retrieved apart (issue 51, point 1)."""

from __future__ import annotations

import json
import unicodedata

from ingest.chunking import chunk_pages
from ingest.document import Page
from ingest.outline import Heading, sections_of
from ingest.parsing import parse_pdf
from ingest.pipeline import Ingestor, chunked
from ingest.sections import assign_sections
from masis_core.answers import sections
from masis_core.answers.compose import sectioned_windows
from masis_core.state import Evidence
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import filler, make_outlined_pdf

TOPICS = [
    ("Relief valve settings", "valve"),
    ("Boiler feed pump maintenance", "pump"),
    ("Cooling tower water treatment", "tower"),
]


def long_sections() -> list[tuple[str, str]]:
    """Three sections of about 380 words: each spans two chunks or more."""
    return [(title, filler(word, 380)) for title, word in TOPICS]


def test_every_chunk_knows_the_outline_section_it_lies_in() -> None:
    parsed = parse_pdf(make_outlined_pdf(long_sections()))
    assert [t for t, _, _ in parsed.outline] == [t for t, _ in TOPICS]
    chunks, _ = chunked(parsed, 200, 40)
    assert len(chunks) > 3
    for c in chunks:
        first = c.sections[0]
        # The section a chunk starts in is the one of its first page, or the one before it
        # when the chunk starts in the previous section's words.
        assert first[2] in {TOPICS[c.page_start - 1][0], TOPICS[max(0, c.page_start - 2)][0]}
        words = c.text.split()
        for at, number, title in c.sections[1:]:  # a section starting inside: at its title
            assert words[at : at + len(title.split())] == title.split()
            assert number == [t for t, _ in TOPICS].index(title)
    assert {s[2] for c in chunks for s in c.sections} == {t for t, _ in TOPICS}


def test_without_an_outline_the_numbered_headings_are_the_sections() -> None:
    parsed = parse_pdf(make_outlined_pdf(long_sections(), outline=False))
    assert parsed.outline == []
    chunks, _ = chunked(parsed, 200, 40)
    titles = [s[2] for c in chunks for s in c.sections]
    assert set(titles) == {t for t, _ in TOPICS}


def test_a_heading_in_the_overlap_starts_the_next_chunk_part_way() -> None:
    """The chunk after the one a heading was found in repeats its last 40 words: the heading
    found there again starts its section where it stands, not at the chunk's first word."""
    body = filler("valve", 170)
    pages = [Page(1, f"{body} 2 Pump care {filler('pump', 300)}")]
    chunks = chunk_pages(pages, 200, 40)
    headings = [Heading("Valve care", 1, 0), Heading("Pump care", 1, 0)]
    made = assign_sections(chunks, headings, 40)
    assert made[0].sections[0][:2] == (0, 0)  # a missed first title: from the page's start
    found = [(c.index, s[0], s[2]) for c in made for s in c.sections if s[2] == "Pump care"]
    assert found[0][0] == 0 and found[0][1] > 160  # found in the first chunk
    second = made[1].sections
    assert second[0][2] == "Valve care" and second[1][2] == "Pump care" and second[1][0] > 0


def test_a_coarse_outline_gives_way_to_the_texts_finer_headings() -> None:
    names = [f"Care of unit {chr(65 + n % 26)}{chr(65 + n // 26)}" for n in range(1, 41)]
    pages = [(n, f"{n}.1 {names[n - 1]}\n{filler('pump', 80)}") for n in range(1, 41)]
    coarse = [Heading("Everything", 1, 0)]
    assert len(sections_of(coarse, pages, 40)) == 40
    fine = [Heading(names[n - 1], n, 1) for n in range(1, 41)]
    assert sections_of(fine, pages, 40) == fine


def evidence_of(bench: Workbench, pdf: bytes) -> list[Evidence]:
    ws = bench.create_workspace("plant", "wordllama")
    assert Ingestor(bench).ingest_bytes(ws, pdf, "plant.pdf").status == "ingested"
    doc = bench.registry.list_documents(ws.id)[0]
    rows = bench.store.document_chunks(ws.embed_model, ws.id, doc.doc_id)
    return [
        Evidence(
            chunk_id=i,
            doc_id=str(m["doc_id"]),
            filename="plant.pdf",
            page_start=int(m["page_start"]),
            page_end=int(m["page_end"]),
            text=text,
            sections=str(m.get("sections") or ""),
            score=0.5,
            source="kb",
        )
        for i, text, m in sorted(rows, key=lambda r: r[2]["chunk_index"])
    ]


def test_stored_sections_reach_the_composer_and_join_chunks_retrieved_apart(
    bench: Workbench,
) -> None:
    """The store keeps each chunk's sections. Two chunks of the pump section that are not
    neighbours (the retriever found the one its heading is in and one two chunks on) are one
    section, headed by its title; without stored sections the second was a headless section
    of its own."""
    evidence = evidence_of(bench, make_outlined_pdf(long_sections()))
    assert all(json.loads(ev["sections"]) for ev in evidence)
    pump = TOPICS[1][0]
    holding = [n for n, ev in enumerate(evidence) if pump in ev["sections"]]
    picked = [evidence[holding[0]], evidence[holding[0] + 2]]
    assert pump in picked[1]["sections"] and pump not in picked[1]["text"]
    question = "How is the boiler feed pump maintained?"

    def pump_sections(chosen: list[Evidence]) -> list[sections.Section]:
        found, headings = sectioned_windows(question, chosen)
        return [s for s in sections.group(found, headings) if "pump" in s.text]

    stored = pump_sections(picked)
    assert [s.heading for s in stored] == [pump]
    assert {w.passage for w in stored[0].windows} == {0, 1}
    bare = [Evidence(**{k: v for k, v in ev.items() if k != "sections"}) for ev in picked]
    assert len(pump_sections(bare)) == 2


def test_an_outline_title_written_decomposed_or_with_ligatures_is_found_in_the_text() -> None:
    """Page text is NFKC (``clean_text``); an outline's own title may not be."""
    pages = [Page(1, f"{filler('valve', 120)} 2 Résumé of ﬁlter care {filler('filter', 150)}")]
    pages = [Page(1, unicodedata.normalize("NFKC", pages[0].text))]
    chunks = chunk_pages(pages, 200, 40)
    title = unicodedata.normalize("NFD", "Résumé of \ufb01lter care")
    made = assign_sections(chunks, [Heading("Valve care", 1, 0), Heading(title, 1, 0)], 40)
    starts = [(w, n) for w, n, _ in made[0].sections]
    assert starts[0] == (0, 0) and starts[1][1] == 1 and starts[1][0] > 100
