"""Words with accents and in other scripts stay whole in every word split: question words,
gaps, keywords (BM25), the soft match's words, the highlight, and the follow-up's topic.

"Wie oft erfolgt die Ventilprüfung und welche Größe?" once gave the gaps "ventilpr" and
"fung", and no sentence about the size was found: ``words`` split on ASCII letters only.
"""

from __future__ import annotations

import unicodedata

import pytest

from ingest.highlight import align, fold
from masis_core.answers.followup import noun_phrase
from masis_core.answers.question import head_stems
from masis_core.retrieval.bm25 import chunk_words, content_words, keyword_columns, tokenize
from masis_core.retrieval.quality import keywords
from masis_core.text.sentences import content_stems
from masis_core.text.words import words
from tests.apptest import fresh_app, settle

# One sentence per language, and the accented or non-Latin words it must keep whole.
SAMPLES = {
    "de": ("Die Ventilprüfung bestimmt die Größe der Dichtung.", ["ventilprüfung", "größe"]),
    "fr": ("La vérification du débit s'effectue après l'arrêt.", ["vérification", "débit"]),
    "es": ("La inspección del caudal se realiza cada año.", ["inspección", "año"]),
    "el": ("Η πίεση της αντλίας ελέγχεται κάθε εβδομάδα.", ["πίεση", "αντλίας", "εβδομάδα"]),
    "ru": ("Давление насоса проверяется каждую неделю.", ["давление", "насоса", "неделю"]),
}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_every_word_split_keeps_accented_and_non_latin_words_whole(lang: str) -> None:
    text, whole = SAMPLES[lang]
    split = words(text)
    assert set(whole) <= set(split), split
    assert set(whole) <= keywords(text)
    assert set(whole) <= set(content_words(text))
    assert len(tokenize(text)) >= len(whole)
    assert all(len(s) >= 3 for s in content_stems(text)), content_stems(text)
    assert len(split) == len(text.split())  # one word per word, none cut apart


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_decomposed_accents_split_as_composed_ones(lang: str) -> None:
    """A question pasted with combining accents (NFD, as macOS writes file names) asks for the
    same words as the composed text the documents are stored in (NFKC at ingest)."""
    text, _ = SAMPLES[lang]
    decomposed = unicodedata.normalize("NFD", text)
    assert words(decomposed) == words(text)
    assert keywords(decomposed) == keywords(text)
    assert content_words(decomposed) == content_words(text)


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_keyword_rows_from_one_split_match_the_separate_splits(lang: str) -> None:
    """A batch makes a chunk's keyword columns in the parse child from one word split
    (``keyword_columns``); they are the BM25 tokens and soft-match words the parent made
    before, the reindex makes from Chroma and the query side compares, NFD or NFKC."""
    text = f"{SAMPLES[lang][0]} E-1042, 2.7.4 und das \ufb01lter."
    expected = (" ".join(tokenize(text)), chunk_words(text))
    assert "e1042" in expected[0] and "filter" in expected[1]
    assert keyword_columns(text) == expected
    assert keyword_columns(unicodedata.normalize("NFD", text)) == expected


def test_the_question_frame_and_the_follow_up_topic_keep_accents() -> None:
    assert head_stems("What is the Ölstand of the valve?", n=1) == content_stems("Ölstand")
    assert noun_phrase("How often must the Ventilprüfung be done?") == "the Ventilprüfung"


def test_the_highlight_finds_accented_words_on_the_page() -> None:
    page, _ = fold("Η πίεση της αντλίας ελέγχεται κάθε εβδομάδα. Größe: DN 50.")
    mapping, found = align("αντλίας ελέγχεται κάθε εβδομάδα", page)
    assert found == len(fold("αντλίας ελέγχεται κάθε εβδομάδα")[0])
    assert -1 not in mapping


GERMAN_NOTE = (
    "Wartungsnotiz für die Pumpenhalle.\n\n"
    "Die Ventilprüfung erfolgt alle 500 Betriebsstunden durch einen Techniker. "
    "Die Größe des Ventils beträgt DN 50 nach Werksnorm. "
    "Besucher melden sich am Empfang an. Das Mittagessen gibt es in der Kantine. "
    "Die Parkplätze liegen hinter der Halle."
)


def test_a_german_question_is_answered_from_the_german_note(bench) -> None:
    """The path a person takes, offline: ingest the note, ask in German, read the answer."""
    from ingest.pipeline import Ingestor

    ws = bench.create_workspace("werk", "wordllama")
    Ingestor(bench).ingest_bytes(ws, GERMAN_NOTE.encode(), "wartung.txt")
    at = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input("Wie oft erfolgt die Ventilprüfung und welche Größe?")
    at.button(key="FormSubmitter:ask-Ask").click().run()
    at = settle(at)
    shown = " ".join(str(e.value) for e in [*at.markdown, *at.caption])
    (answer,) = [m.value for m in at.markdown if m.value.startswith("Die Ventilprüfung")]
    assert "Die Ventilprüfung erfolgt alle 500 Betriebsstunden durch einen Techniker." in answer
    assert "[1]" in answer
    assert "ventilprüfung" in shown and "größe" in shown  # the planner's keyword phrasing
    for fragment in ("ventilpr ", " fung ", " gr "):
        assert fragment not in shown, shown
