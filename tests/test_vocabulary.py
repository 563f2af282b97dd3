"""Questions in another language than the documents, and words no document uses: what the run
records (``retrieval/vocabulary.py``) and what the analyst reads in the browser (AppTest).

Retrieval matches words and does not translate; a French question of an English manual had
paused with its French words listed as "missing" from the answer and no reason given.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from masis_core.__main__ import main
from masis_core.graph.nodes.researcher import LANGUAGE_PASSAGES
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.vocabulary import language_notice, other_language, unknown_words
from masis_core.services.runs import RunService
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app
from tests.test_app import ask

ROOT = Path(__file__).resolve().parents[1]
# The pump page's question in nine languages (tests/texts.py: PUMP).
FOREIGN = [
    "À quelle fréquence faut-il inspecter la pompe hydraulique ?",
    "Wie oft muss die Hydraulikpumpe geprüft werden?",
    "¿Con qué frecuencia se debe inspeccionar la bomba hidráulica?",
    "Ogni quante ore si deve ispezionare la pompa idraulica?",
    "Com que frequência deve ser inspecionada a bomba hidráulica?",
    "Hoe vaak moet de hydraulische pomp worden geïnspecteerd?",
    "Jak często należy sprawdzać pompę hydrauliczną?",
    "Как часто нужно проверять гидравлический насос?",
    "油圧ポンプはどのくらいの頻度で点検しますか？",
]


@pytest.fixture
def app(bench: Workbench) -> AppTest:
    return fresh_app()


def index_of(bench: Workbench, ws: Workspace):
    return bench.keyword_index(ws.id).index(ws.id)


def passages_of(bench: Workbench, ws: Workspace, question: str) -> list[str]:
    """The texts the question's search ranks first, as the researcher passes them."""
    ranked = retrieve(bench.index(ws.id, ws.embed_model), [question], 10)
    return [c.text for c in ranked[:LANGUAGE_PASSAGES]]


def test_questions_in_other_languages_are_told_apart_from_english_ones(bench, plant) -> None:
    index = index_of(bench, plant)
    for question in FOREIGN:
        assert other_language(question, passages_of(bench, plant, question)), question
        # Decomposed accents (a question pasted from some editors) read the same.
        decomposed = unicodedata.normalize("NFD", question)
        assert other_language(decomposed, passages_of(bench, plant, decomposed)), question
    english = [
        "How often must the hydraulic pump be inspected?",
        "hydraulic pump inspection interval",  # a keyword query: no function word, known words
        "pump pressure",
        "What was the population of Mongolia's capital city in 1990?",  # off topic, English
        "Wie Ventil?",  # too short to call a language, and ASCII
    ]
    for question in english:
        assert not other_language(question, passages_of(bench, plant, question)), question
    said = unknown_words(index, "How often is the hydrolic pump inspected?")
    assert said == ["often", "hydrolic"]  # "how", a question word, is no word to look up
    assert unknown_words(None, "anything at all") == []  # no keyword index yet


def test_every_english_question_of_the_development_sets_reads_as_english(bench, plant) -> None:
    """The measurement the module docstring gives, kept true: not one English question of the
    evaluation sets is taken for another language, even against the plant's few words."""
    questions = [
        json.loads(line)["query"]
        for line in (ROOT.parent / "shared/eval/fitzgov-dev/governance_cases.jsonl").open()
    ]
    for name in ("manual-answerable.json", "unseen-answerable.json", "unseen-unanswerable.json"):
        questions += [q["question"] for q in json.loads((ROOT / "bench/data" / name).read_text())]
    assert len(questions) > 500
    # Without passages the documents count as English: only a question taken for another
    # language then needs its search (no passages can turn an English question foreign).
    maybe = [q for q in questions if other_language(q, [])]
    assert [q for q in maybe if other_language(q, passages_of(bench, plant, q))] == []


def test_a_question_in_its_documents_language_is_not_told_otherwise(bench) -> None:
    """A French note asked in French: the passages found are French, so nothing is said."""
    from ingest.pipeline import Ingestor

    ws = bench.create_workspace("notes", "wordllama")
    note = (
        "La pompe hydraulique doit être inspectée toutes les 500 heures de fonctionnement. "
        "Pendant l'inspection, le technicien vérifie les joints, la soupape de sécurité et le "
        "niveau d'huile. Un joint usé provoque une perte de pression et doit être remplacé."
    )
    assert Ingestor(bench).ingest_bytes(ws, note.encode(), "pompe.txt").status == "ingested"
    question = "À quelle fréquence faut-il inspecter la pompe hydraulique ?"
    assert not other_language(question, passages_of(bench, ws, question))
    assert other_language(question, ["The hydraulic pump is inspected every 500 hours."])


def test_a_french_question_says_why_it_found_little(app: AppTest, plant, bench) -> None:
    question = FOREIGN[0]
    at = ask(app.run(), question)
    rec = RunService(bench).get(at.query_params["run"])
    (entry,) = [e for e in rec.trace if e.get("node") == "researcher"][:1]
    assert entry["other_language"] is True
    assert {"quelle", "fréquence", "pompe"} <= set(entry["unknown_words"])
    notice = language_notice(rec.trace)
    assert notice is not None and "does not translate" in notice
    shown = [w.value for w in at.warning]
    assert any("does not look written in English" in w and "fréquence" in w for w in shown)


def test_the_notice_shows_a_questions_markup_and_address_as_text(app: AppTest, plant) -> None:
    question = "Où [voir](https://evil.example/x) la <b>pompe</b> du bateau ?"
    at = ask(app.run(), question)
    (notice,) = [w.value for w in at.warning if "does not look written in English" in w.value]
    assert "](" not in notice and "<b>" not in notice  # no live link, no HTML
    # The address's parts are words the notice names, as text: no scheme, so nothing to link.
    assert "evil.example/x" in notice and "https://" not in notice


def test_an_english_review_lists_the_words_no_document_uses(app: AppTest, plant) -> None:
    at = ask(app.run(), "Who manufactures the hydrolic pump's flange gaskets?")
    assert not any("does not look written in English" in w.value for w in at.warning)
    (said,) = [c.value for c in at.caption if c.value.startswith("No document of this work")]
    assert said.endswith(": manufactures, hydrolic, flange, gaskets")  # not "s" of "pump's"


def test_the_command_line_says_it_too(plant, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--workspace", plant.id, FOREIGN[1]]) == 0
    out = capsys.readouterr().out
    assert "note: Your question does not look written in English" in out
    assert "hydraulikpumpe" in out
