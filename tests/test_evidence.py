"""Checkable answers: support per sentence (``masis_core.answers.support``), flags marked in
place, the highlighted page on the research page, and the PDF export
(``masis_core.services.report_pdf``)."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
from PIL import Image

from ingest.pipeline import Ingestor
from masis_core.answers.support import (
    LEVELS_TEXT,
    NO_CITATION,
    cited_sentences,
    sentence_support,
)
from masis_core.graph.nodes.evaluator import check
from masis_core.services import report_pdf
from masis_core.services.report_pdf import PageShot, run_pdf
from masis_core.services.runs import RunRecord, RunService, RunStore
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.fake_ollama import FakeOllama
from tests.ollama_helpers import ask as ask_ollama
from tests.ollama_helpers import draft, ollama_plant, replies
from tests.test_reports import record
from tests.texts import BOILER, PUMP

PUMP_CITATION = {"n": 1, "filename": "plant.pdf", "page": 2, "page_end": 2, "text": PUMP}
BOILER_CITATION = {"n": 2, "filename": "plant.pdf", "page": 1, "page_end": 1, "text": BOILER}


def pdf_text(data: bytes) -> str:
    pdf = pdfium.PdfDocument(data)
    try:
        out = []
        for page in pdf:
            textpage = page.get_textpage()
            out.append(textpage.get_text_bounded())
            textpage.close()
            page.close()
        return "\n".join(out)
    finally:
        pdf.close()


# -- support per sentence ---------------------------------------------------------------------
def test_each_sentence_gets_the_evidence_sentence_that_backs_it() -> None:
    answer = (
        "The hydraulic pump is inspected every 500 operating hours. [1] "
        "The boiler is descaled once a year by a contractor. [2]"
    )
    rows = sentence_support(answer, [PUMP_CITATION, BOILER_CITATION])
    ((pump, boiler),) = rows
    assert pump.backing is not None and pump.backing.n == 1
    assert pump.backing.sentence.startswith("The hydraulic pump must be inspected every 500")
    assert pump.level == "strong" and pump.issue is None  # its words, not word for word
    ((quoted,),) = sentence_support(pump.backing.sentence + " [1]", [PUMP_CITATION])
    assert quoted.level == "quoted" and LEVELS_TEXT[quoted.level] == "quoted word for word"
    # Part of a sentence is no quote of it: "It is not true that …" would lose its "not".
    part = pump.backing.sentence.split(" every ")[0] + ". [1]"
    ((cut,),) = sentence_support(part, [PUMP_CITATION])
    assert cut.level != "quoted"
    assert boiler.backing is not None and boiler.backing.n == 2
    assert "descaled once a year" in boiler.backing.sentence
    assert cited_sentences(rows) == {1: (pump.backing.sentence,), 2: (boiler.backing.sentence,)}


def test_flags_match_the_evaluator_and_are_per_sentence() -> None:
    draft = (
        "The pump is inspected every 600 operating hours. [1] "
        "The relief valve was built by Siemens. [1] "
        "Nobody knows why."
    )
    evaluated = check(draft, [{"text": PUMP}])
    rows = sentence_support(evaluated["answer"], [PUMP_CITATION])
    issues = [s.issue for row in rows for s in row]
    assert issues == [f["issue"] for f in evaluated["flagged"]]
    assert issues == [
        "not in the cited passage: 600",
        "not in the cited passage: Siemens",
        NO_CITATION,
    ]
    levels = [s.level for row in rows for s in row]
    assert levels == ["flagged", "flagged", "flagged"]
    assert rows[0][2].backing is None  # uncited: nothing backs it


def test_a_paraphrase_is_partly_backed() -> None:
    rows = sentence_support("Operators write every inspection into a ledger. [1]", [PUMP_CITATION])
    ((s,),) = rows
    assert s.backing is not None and "maintenance ledger" in s.backing.sentence
    assert s.level in ("partial", "strong") and 0.3 <= s.backing.score < 1.0


# -- PDF export -------------------------------------------------------------------------------
def hostile_record() -> RunRecord:
    return record(
        question="Wie oft wird die Pumpe geprüft — и когда? 東京 😀",
        answer="The hydraulic pump is inspected every 500 operating hours. [1] ﬁne “quoted” ✓ [2]",
        citations=[PUMP_CITATION, {**BOILER_CITATION, "text": "Ζ Ω 東京 " + BOILER}],
    )


def page_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (300, 400), (255, 214, 0)).save(out, format="PNG")
    return out.getvalue()


def test_pdf_export_holds_answer_citations_and_the_page_images() -> None:
    data = run_pdf(hostile_record(), {1: PageShot(page_png(), 2, True, 300, 400), 2: None})
    assert data.startswith(b"%PDF-")
    text = pdf_text(data)
    assert "inspected every 500 operating hours" in text
    assert "plant.pdf, page 2" in text and "Appendix" in text
    assert "и когда" in text  # Cyrillic kept with the bundled Unicode font
    assert "strongly backed" in text  # the support per sentence
    pdf = pdfium.PdfDocument(data)
    images = sum(
        1 for page in pdf for _ in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE])
    )
    pdf.close()
    assert images == 1  # the one highlighted page; the other citation says why it has none


def test_pdf_export_without_a_unicode_font_folds_to_latin1(monkeypatch) -> None:
    monkeypatch.setattr(report_pdf, "FONT_CANDIDATES", ())
    data = run_pdf(hostile_record())
    text = pdf_text(data)
    assert "Wie oft wird die Pumpe geprüft - ? ?" in text  # "—" folded, Cyrillic replaced
    assert 'fine "quoted"' in text


# -- the research page ------------------------------------------------------------------------
def test_support_panel_and_the_highlighted_page(bench: Workbench, plant: Workspace) -> None:
    at = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input("How often must the hydraulic pump be inspected?")
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    assert any(m.value == "**Support per sentence**" for m in at.markdown)
    panels = [e for e in at.main.expander if "quoted" in e.label or "flagged" in e.label]
    assert panels, [e.label for e in at.main.expander]
    first = panels[0]
    # An offline sentence is its source's own: the panel says so, with no score beside it.
    assert first.label.startswith("📄 1.") and first.label.endswith("— quoted word for word")
    assert any(
        m.value.startswith("Quoted from [1] plant.pdf, pages 1–2") for m in first.markdown
    ), [m.value for m in first.markdown]
    assert any("500 operating hours" in m.value for m in first.markdown)
    at.toggle(key=f"page-{at.query_params['run']}-1").set_value(True).run()
    assert not at.exception
    (image,) = at.get("image")
    # The passage spans both pages: the one holding the cited sentence is drawn.
    assert image.proto.imgs[0].caption == "plant.pdf, page 2", image.proto
    assert not at.warning  # the passage was found on its page
    key = f"page-{at.query_params['run']}-1"
    assert at.button_group(key=f"{key}-page").value == 2  # the control shows the page drawn
    at.button_group(key=f"{key}-page").set_value(1).run()
    (image,) = at.get("image")
    assert image.proto.imgs[0].caption == "plant.pdf, page 1"
    assert any("not on this page" in c.value for c in at.caption)
    at.button_group(key=f"{key}-zoom").set_value(3).run()
    assert not at.exception and at.get("image")


def test_a_notes_citation_shows_its_words_without_a_zoom_for_a_page_it_lacks(
    bench: Workbench,
) -> None:
    ws = bench.create_workspace("notes", "wordllama")
    note = "The hydraulic pump must be inspected every 500 operating hours by the shift lead."
    assert Ingestor(bench).ingest_bytes(ws, note.encode(), "pump.txt").status == "ingested"
    rec = RunService(bench).ask(ws.id, "How often must the hydraulic pump be inspected?")
    at = fresh_app()
    at.query_params["run"] = rec.run_id
    at.run().switch_page("pages/research.py").run()
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception
    assert any("A text or Markdown note has no page to draw" in i.value for i in at.info)
    assert not at.get("button_group") and not at.get("image")  # no zoom, no page


def test_flagged_sentence_is_marked_in_place(bench: Workbench, plant: Workspace) -> None:
    rec = RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    assert rec.answer and not rec.metrics.get("flagged_sentences")
    # An answer as a model might write it: one sentence names what the passage does not.
    rec.answer += " The pump was built by Siemens. [1]"
    RunStore(bench).save(rec)
    at = fresh_app().run().switch_page("pages/runs.py").run()
    assert not at.exception
    answer = next(m.value for m in at.markdown if "500 operating hours" in m.value)
    assert ":orange-background[⚠️ The pump was built by Siemens.] [1]" in answer
    assert answer.count(":orange-background[") == 1  # only the flagged sentence
    flagged = next(e for e in at.main.expander if e.label.startswith("⚠️"))
    assert "The pump was built by Siemens" in flagged.label
    assert any("cited passage" in w.value and "Siemens" in w.value for w in flagged.warning)
    assert any("1 flagged sentence(s), marked in the answer" in c.value for c in at.caption)


def test_an_offline_answer_shows_its_lead_then_also_relevant(
    bench: Workbench, plant: Workspace
) -> None:
    """The lead passage first, alone; the other passages under "Also relevant"."""
    rec = RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    assert rec.answer and rec.engine == "offline"
    lead = rec.answer.split("\n\n")[0]
    assert "500 operating hours" in lead
    boiler = {**rec.citations[0], "n": 2, "text": BOILER, "page": 1, "page_end": 1}
    rec.answer = (
        f"{lead}\n\nThe steam boiler is descaled once a year by a certified contractor. [2]"
    )
    rec.citations = [rec.citations[0], boiler]
    RunStore(bench).save(rec)
    at = fresh_app().run().switch_page("pages/runs.py").run()
    assert not at.exception
    blocks = [m.value for m in at.markdown]
    at_lead = next(n for n, b in enumerate(blocks) if "500 operating hours" in b)
    assert "descaled" not in blocks[at_lead]
    assert blocks[at_lead + 1] == "**Also relevant**"
    assert blocks[at_lead + 2].startswith("The steam boiler is descaled once a year")


def test_an_also_relevant_passage_that_says_no_is_named_against_the_lead(
    bench: Workbench, plant: Workspace
) -> None:
    """A completed answer's option that answers "no" where the lead does not is named as
    disagreeing with it, above the passages, not left to read as a second answer."""
    rec = RunService(bench).ask(plant.id, "How often must the hydraulic pump be inspected?")
    lead = rec.answer.split("\n\n")[0]
    rec.question = "Can more than one technician inspect the hydraulic pump?"
    rec.answer = f"{lead}\n\nOnly one technician may inspect the hydraulic pump. [1]"
    RunStore(bench).save(rec)
    at = fresh_app().run().switch_page("pages/runs.py").run()
    assert not at.exception
    blocks = [m.value for m in at.markdown]
    at_label = blocks.index("**Also relevant**")
    note = blocks[at_label + 1]
    assert note.startswith("⚖️ *“Also relevant” passage 1 and the lead disagree")
    assert "Only one technician may inspect the hydraulic pump." in note
    assert blocks[at_label + 2].startswith("Only one technician may inspect")


def test_an_ollama_answer_on_a_text_note(bench: Workbench, fake_ollama: FakeOllama) -> None:
    """The Ollama engine paraphrases: its sentences are backed partly, a figure it added is
    flagged in place, and a .txt source says it has no page and quotes the cited words."""
    research, fake = ollama_plant(bench, fake_ollama)
    fake.state.default_reply = replies(
        draft(
            ("A technician inspects the pump after 500 hours of operation.", [1]),
            ("Each inspection takes 45 minutes.", [1]),
        )
    )
    rec = ask_ollama(research)
    # The added figure keeps the confidence low: the run asks, and the analyst accepts.
    assert rec.status == "needs_human", rec.error
    rec = research.resume(rec.run_id, {"action": "accept"})
    assert rec.status == "completed" and rec.engine == "ollama", rec.error
    at = fresh_app().run().switch_page("pages/runs.py").run()
    assert not at.exception
    answer = next(m.value for m in at.markdown if "500 hours of operation" in m.value)
    assert ":orange-background[⚠️ Each inspection takes 45 minutes.] [1]" in answer
    labels = [e.label for e in at.main.expander]
    backed = next(label for label in labels if label.startswith(("✅ 1.", "🟡 1.")))
    assert "A technician inspects the pump" in backed
    assert any(label.startswith("⚠️ 2.") for label in labels)
    at.toggle(key=f"page-{rec.run_id}-1").set_value(True).run()
    assert not at.exception and not at.get("image")
    assert any("text or Markdown note" in i.value for i in at.info)
    cited = next(e for e in at.main.expander if e.label.startswith("[1] pump.txt"))
    assert any("must be inspected every 500 operating hours" in m.value for m in cited.markdown)
