"""The soft match's words stored in the keyword rows at ingest: the same scores as splitting
the texts per query, kept in step with re-ingests and deletes, and backfilled (crash-safe)
into rows written before the column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ingest.pipeline import Ingestor
from masis_core.retrieval.bm25 import chunk_words
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.softmatch import ChunkWords, soft_matches
from masis_core.retrieval.store import chunk_id
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench
from tests.proc import run_module
from tests.test_hybrid import IRRIGATION

QUERIES = ["How do I calibrate a drip emitter?", "tractor engine oil", "rice basin water"]


@pytest.fixture
def farm(bench: Workbench) -> Workspace:
    ws = bench.create_workspace("farm", "wordllama")
    ingestor = Ingestor(bench)
    for name, text in IRRIGATION.items():
        assert ingestor.ingest_bytes(ws, text.encode(), name).status == "ingested"
    return ws


def chunks_of(bench: Workbench, ws_id: str) -> tuple[list[str], list[str]]:
    ids = sorted(bench.bm25.rows(ws_id))
    got = bench.store.get_chunks("wordllama", ws_id, ids)
    return ids, [got[cid][0] for cid in ids]


def ranked(bench: Workbench, ws_id: str) -> list[list[tuple[str, float]]]:
    bench.chunk_words.clear()
    return [
        [(c.chunk_id, round(c.fused, 6)) for c in retrieve(bench.index(ws_id, "wordllama"), [q], 3)]
        for q in QUERIES
    ]


def stored_words(bench: Workbench, ws_id: str, ids: list[str]) -> Any:
    index = bench.bm25.index(ws_id)
    assert index is not None
    return index.stored_words(ids)


def null_words(bench: Workbench, ws_id: str) -> None:
    """The rows as a data dir from before the column holds them."""
    with bench.db.connect() as conn:
        conn.execute("UPDATE bm25_chunks SET words = NULL WHERE workspace_id = ?", (ws_id,))


@pytest.mark.usefixtures("backend")
def test_stored_words_score_as_splitting_the_texts(bench, farm) -> None:
    ids, texts = chunks_of(bench, farm.id)
    stored = stored_words(bench, farm.id, ids)
    assert stored is not None

    def weights(words: list[str]) -> np.ndarray:
        return np.arange(1, len(words) + 1, dtype=np.float64)

    split = ChunkWords(bench.word_vectors, size=0).pool(texts, ids)
    from_rows = bench.chunk_words.pool(["not read"] * len(ids), ids, stored)
    for a, b in zip(
        soft_matches(bench.word_vectors, QUERIES, weights, split),
        soft_matches(bench.word_vectors, QUERIES, weights, from_rows),
        strict=True,
    ):
        assert a.tolist() == pytest.approx(b.tolist(), abs=1e-6)
        assert a.max() > 0
    words, positions = stored
    assert [" ".join(words.words[n] for n in words.of_chunks([p])[0]) for p in positions] == [
        chunk_words(t) for t in texts
    ]


@pytest.mark.usefixtures("backend")
def test_a_chunk_without_stored_words_falls_back_to_its_text(bench, farm) -> None:
    """A row from before the column (or not yet in the index) makes the pool split texts:
    the ranking is the same either way."""
    with_words = ranked(bench, farm.id)
    null_words(bench, farm.id)
    with bench.db.connect() as conn:  # the index is rebuilt without them
        bench.bm25._bump(conn, farm.id)
    ids, _ = chunks_of(bench, farm.id)
    assert stored_words(bench, farm.id, ids) is None
    assert stored_words(bench, farm.id, ["farm/unknown/000000"]) is None
    assert ranked(bench, farm.id) == with_words


@pytest.mark.usefixtures("backend")
def test_stored_words_follow_reingests_and_deletes(bench, farm) -> None:
    ids, texts = chunks_of(bench, farm.id)
    drip = next(cid for cid, t in zip(ids, texts, strict=True) if "emitters" in t)
    doc = drip.split("/")[1]
    before = stored_words(bench, farm.id, [drip])
    assert before is not None
    assert "emitters" in before[0].words
    # A re-ingest keeps the chunk's id and writes another text (other chunking settings).
    bench.bm25.add(farm.id, doc, [drip], ["Sprinkler nozzles: clean the strainer monthly."])
    after = stored_words(bench, farm.id, [drip])
    assert after is not None and after[0] is not before[0]
    held = {after[0].words[n] for n in after[0].of_chunks(after[1])[0]}
    assert held == {"sprinkler", "nozzles", "clean", "strainer", "monthly"}
    bench.delete_document(farm.id, doc)
    assert stored_words(bench, farm.id, [drip]) is None
    rest = [cid for cid in ids if cid != drip]
    assert stored_words(bench, farm.id, rest) is not None


@pytest.mark.usefixtures("backend")
def test_start_backfills_rows_written_before_the_column(bench, farm, settings) -> None:
    ids, texts = chunks_of(bench, farm.id)
    with_words = ranked(bench, farm.id)
    null_words(bench, farm.id)
    version = bench.bm25.version(farm.id)
    restarted = Workbench(settings)  # a new process fills them on start
    assert restarted.bm25.version(farm.id) == version + 1  # indexes rebuild with them
    with restarted.db.connect() as conn:
        rows = conn.execute(
            "SELECT chunk_id, words FROM bm25_chunks WHERE workspace_id = ? ORDER BY chunk_id",
            (farm.id,),
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        (i, chunk_words(t)) for i, t in zip(ids, texts, strict=True)
    ]
    assert stored_words(restarted, farm.id, ids) is not None
    assert ranked(restarted, farm.id) == with_words
    assert restarted.bm25.backfill_words(restarted.workspaces(), restarted.store) == 0


def test_a_killed_backfill_resumes_to_the_same_rows(tmp_path: Path, settings) -> None:
    """SIGKILL after the first batch of 2,000 rows, then a start: every row filled, as by an
    uninterrupted backfill; the progress shows on the terminal."""
    bench = Workbench(settings)
    ws = bench.create_workspace("big", "wordllama")
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(vocab, 12)) for _ in range(2300)]
    ids = [chunk_id(ws.id, "doc", i) for i in range(len(texts))]
    vectors = rng.normal(size=(len(texts), 8)).astype(np.float32)
    meta = [{"workspace_id": ws.id, "doc_id": "doc", "chunk_index": i} for i in range(len(ids))]
    bench.store.add_chunks("wordllama", ids, vectors, texts, meta)
    bench.bm25.add(ws.id, "doc", ids, texts)
    bench.store.make_visible("wordllama", ids)
    null_words(bench, ws.id)

    def filled() -> dict[str, str | None]:
        with bench.db.connect() as conn:
            return dict(conn.execute("SELECT chunk_id, words FROM bm25_chunks").fetchall())

    killed = run_module(
        ["masis_core", "status"], settings.data_dir, {"MASIS_TEST_KILL_BACKFILL_AT": "2000"}
    )
    assert killed.returncode == -9
    assert "big: soft-match words stored for 2000 chunks" in killed.stderr
    assert sum(w is not None for w in filled().values()) == 2000
    resumed = run_module(["masis_core", "status"], settings.data_dir)
    assert resumed.returncode == 0, resumed.stderr
    assert "big: soft-match words stored for 300 chunks" in resumed.stderr
    assert filled() == {cid: chunk_words(t) for cid, t in zip(ids, texts, strict=True)}


def test_a_new_process_loads_the_words_saved_with_the_index(bench, farm, settings, monkeypatch):
    """Numbering the chunks' words is saved beside the keyword index, so a process opening a
    large workspace does not redo it; saved words that no longer match the rows are not used."""
    from masis_core.retrieval import bm25

    ids, texts = chunks_of(bench, farm.id)
    built = stored_words(bench, farm.id, ids)
    assert built is not None
    saved = next((settings.data_dir / "bm25" / farm.id).glob("v*"))
    assert (saved / "words.npz").exists()

    def no_numbering(columns):
        raise AssertionError("words numbered again")

    with monkeypatch.context() as m:
        m.setattr(bm25.StoredWords, "of", staticmethod(no_numbering))
        loaded = stored_words(Workbench(settings), farm.id, ids)
    assert loaded is not None
    assert loaded[0].words == built[0].words
    assert [a.tolist() for a in loaded[0].of_chunks(loaded[1])] == [
        a.tolist() for a in built[0].of_chunks(built[1])
    ]
    # A backfill killed before its version bump: rows filled under the version whose saved
    # index has none; the words are numbered from the rows, not taken from the file.
    null_words(bench, farm.id)
    with bench.db.connect() as conn:
        bench.bm25._bump(conn, farm.id)
    assert stored_words(bench, farm.id, ids) is None  # built and saved without words
    with bench.db.connect() as conn:
        conn.executemany(
            "UPDATE bm25_chunks SET words = ? WHERE chunk_id = ?",
            [(chunk_words(t), cid) for cid, t in zip(ids, texts, strict=True)],
        )
    assert stored_words(Workbench(settings), farm.id, ids) is not None


def test_a_vocabulary_the_word_table_cannot_hold_splits_texts_instead(
    bench, farm, settings, monkeypatch
) -> None:
    """Large vocabularies must not empty the word table for one another on every pass: one
    that does not fit beside the others' is not added, and the soft match scores as before the
    words were stored (splitting the texts)."""
    from masis_core.retrieval import softmatch

    with_room = ranked(bench, farm.id)
    other = Workbench(settings)  # a process whose word table is empty
    index = other.bm25.index(farm.id)
    assert index is not None and len(index.words.words) > 10
    monkeypatch.setattr(softmatch, "MAX_CACHED_WORDS", 10)
    assert other.word_vectors.rows_if_room(index.words.words) is None
    assert other.word_vectors._row == {}  # nothing added
    assert ranked(other, farm.id) == with_room
    assert index.words.rows is None  # the stored words were not used


def test_a_retrieval_reads_the_stored_words_not_the_texts(bench, farm, monkeypatch) -> None:
    """Through the hybrid retrieval itself: with every row's words stored, no chunk text is
    split; a vocabulary the word table has no room for is asked about once per table
    generation, not on every query."""
    from masis_core.retrieval import softmatch

    with_words = ranked(bench, farm.id)

    def no_split(text: str) -> str:
        raise AssertionError("a chunk's text was split at query time")

    monkeypatch.setattr(softmatch, "chunk_words", no_split)
    assert ranked(bench, farm.id) == with_words
    monkeypatch.undo()

    asked: list[int] = []

    def no_room(words):
        asked.append(len(words))

    bench.bm25.index(farm.id).words.rows = None  # type: ignore[union-attr]
    monkeypatch.setattr(bench.word_vectors, "rows_if_room", no_room)
    assert ranked(bench, farm.id) == with_words  # the texts are split instead
    assert ranked(bench, farm.id) == with_words
    assert len(asked) == 1


def test_a_backfill_that_fails_leaves_the_start_working(settings, bench, farm, monkeypatch):
    """The Chroma server gone mid-backfill: the workbench starts, says so on the terminal,
    and the rows stay without words for the next start; a row whose chunk Chroma lacks is
    left alone (not marked as holding no words)."""
    from masis_core.retrieval.store import VectorStore

    ids, texts = chunks_of(bench, farm.id)
    null_words(bench, farm.id)

    def gone(self, *args):
        raise ConnectionError("connection refused")

    with monkeypatch.context() as m:
        m.setattr(VectorStore, "texts", gone)
        restarted = Workbench(settings)
    assert ranked(restarted, farm.id)
    with bench.db.connect() as conn:
        assert {r[0] for r in conn.execute("SELECT words FROM bm25_chunks")} == {None}
    real = VectorStore.texts

    def without_first(self, embed_model, ws_id, wanted):
        return {k: v for k, v in real(self, embed_model, ws_id, wanted).items() if k != ids[0]}

    with monkeypatch.context() as m:
        m.setattr(VectorStore, "texts", without_first)
        Workbench(settings)  # the next start
    with bench.db.connect() as conn:
        rows = dict(conn.execute("SELECT chunk_id, words FROM bm25_chunks").fetchall())
    assert rows[ids[0]] is None
    assert [rows[i] for i in ids[1:]] == [chunk_words(t) for t in texts[1:]]
