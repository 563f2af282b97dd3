"""Contents, index and list-of-figures pages are recognised at ingest and kept for navigation,
never quoted as evidence; an answer never says the same sentence twice (issue 54, point 2: a
question on the NUT FAQ cited its contents, pp. 5-6, and the same sentence led and came again
under "Also relevant")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingest.parsing import navigation_page, parse_pdf
from ingest.pipeline import Ingestor
from masis_core.answers.offline import render_answer
from masis_core.graph.nodes import researcher
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.graphs import researcher_state, runtime_for
from tests.pdfs import filler, make_pdf

MANUALS = Path(os.environ.get("MASIS_PDF_CORPUS", "/nonexistent")) / "manuals"

CONTENTS = "\n".join(
    ["Contents"]
    + [
        f"{n} {title} . . . . . . . . . . . . . . . . . . . . {n + 1}"
        for n, title in enumerate(
            [
                "Safety notes",
                "Unpacking the unit",
                "Replacing the pump seal",
                "Bleeding the hydraulic circuit",
                "Setting the relief valve",
                "Warranty",
            ],
            start=1,
        )
    ]
)
SEAL = (
    "Replacing the pump seal. Drain the circuit first, then unscrew the four bolts of the "
    "pump cover and lift the old seal out with a plastic hook. Press the new seal in evenly "
    "and torque the bolts to 12 Nm. "
) + filler("seal", 120)


def test_a_printed_contents_page_is_recognised_and_the_text_pages_are_not() -> None:
    parsed = parse_pdf(make_pdf([CONTENTS, filler("safety", 150), SEAL, filler("valve", 150)]))
    assert [p.number for p in parsed.pages if p.navigation] == [1]
    rows = "\n".join(f"{c} {n}" for c, n in [("Sweden", 123), ("Norway", 456), ("Chile", 78)] * 3)
    assert not navigation_page(f"Exports by country\n{rows}")  # data rows: no leaders, no title
    index = "Index\n" + "\n".join(f"{w}, {n}, {n + 7}" for n, w in enumerate("abcdefgh", 3))
    assert navigation_page(index)


@pytest.mark.skipif(not MANUALS.is_dir(), reason="needs MASIS_PDF_CORPUS (fetch-pdf-corpus.sh)")
@pytest.mark.parametrize(
    ("name", "contents", "text"),
    [
        # The NUT user manual's contents (pp. 3-12; p. 13 is its first text page) and Debian
        # Reference's (pp. 5-22, its tables' list included).
        ("user-manual.pdf", range(3, 13), [1, 2, 13, 14, 40]),
        ("debian-reference.en.pdf", range(5, 23), [3, 23, 24, 40]),
        ("R-intro.pdf", [3, 4, 5, 6, 109, 110, 111, 112], [7, 8, 60, 108]),  # contents, index
    ],
)
def test_the_contents_and_index_pages_of_real_manuals_are_recognised(
    name: str, contents: list[int], text: list[int]
) -> None:
    parsed = parse_pdf((MANUALS / name).read_bytes())
    marked = {p.number for p in parsed.pages if p.navigation}
    assert set(contents) <= marked
    assert not marked & set(text)


def test_contents_chunks_are_stored_for_navigation_but_never_evidence(bench: Workbench) -> None:
    ws = bench.create_workspace("plant", "wordllama")
    pdf = make_pdf([CONTENTS, filler("safety", 150), SEAL, filler("valve", 150)])
    assert Ingestor(bench).ingest_bytes(ws, pdf, "pump-manual.pdf").status == "ingested"
    stored = bench.store.collection("wordllama", ws.id).get(include=["metadatas"])
    flags = {(m["page_start"], bool(m.get("navigation"))) for m in stored["metadatas"]}
    assert (1, True) in flags and (3, False) in flags

    question = "Replacing the pump seal"  # the contents line's own words
    out = researcher.node(researcher_state(ws.id, question), runtime_for(bench))
    assert out["evidence"], out["trace"]
    assert all(e["page_start"] != 1 for e in out["evidence"])
    assert out["trace"][0]["navigation_dropped"] >= 1

    rec = RunService(bench).ask(ws.id, "How is the pump seal replaced?")
    assert rec.citations and all(c["page"] != 1 for c in rec.citations), rec.citations


def test_a_sentence_is_never_said_twice_in_one_answer() -> None:
    said = "Drain the circuit first, then unscrew the four bolts."
    parts = [
        {"text": said, "citations": [1], "passage": 1},
        {"text": "Torque the bolts to 12 Nm.", "citations": [2], "passage": 2},
        {"text": f"  {said.upper()} ", "citations": [3], "passage": 3},
    ]
    answer = render_answer(parts)
    assert answer.casefold().count(said.casefold()) == 1
    assert answer == f"{said} [1]\n\nTorque the bolts to 12 Nm. [2]"
