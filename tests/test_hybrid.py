"""Keyword search, fusion and the evaluation harness on real Chroma, SQLite and bm25s."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from evaluation.retrieval import evaluate_retrieval, page_hit
from ingest import pipeline
from ingest.pipeline import Ingestor
from masis_core.__main__ import main as masis_main
from masis_core.errors import StoreError
from masis_core.graph.nodes import researcher
from masis_core.retrieval.bm25 import Bm25Store, tokenize
from masis_core.retrieval.hybrid import retrieve, rrf
from masis_core.retrieval.metrics import mrr_at, ndcg_at, recall_at
from masis_core.storage.registry import Registry
from masis_core.workspaces.workbench import Workbench
from tests.graphs import researcher_state, runtime_for
from tests.pdfs import make_pdf

# Fault-code paragraphs that look alike to a dense embedder: only the code tells them apart.
CODES = {
    f"E-{n}": (
        f"Fault code E-{n} on the controller display means the {part} reported an error. "
        f"Switch the unit off, wait one minute and check the {part} connector before restarting. "
        "If the fault returns, call service with the code and the serial number of the unit."
    )
    for n, part in zip(
        range(4101, 4121),
        [
            "pump",
            "fan",
            "valve",
            "sensor",
            "heater",
            "motor",
            "relay",
            "filter",
            "panel",
            "board",
            "switch",
            "cable",
            "meter",
            "drive",
            "brake",
            "clutch",
            "gear",
            "coil",
            "lamp",
            "timer",
        ],
        strict=True,
    )
}


@pytest.fixture
def faults(bench: Workbench):
    ws = bench.create_workspace("faults", "wordllama")
    ingestor = Ingestor(bench)
    for code, text in CODES.items():
        assert ingestor.ingest_bytes(ws, text.encode(), f"{code}.txt").status == "ingested"
    return ws


def filenames(found) -> list[str]:
    return [c.metadata["filename"] for c in found]


def test_tokenizer_keeps_codes_whole_and_in_parts() -> None:
    tokens = tokenize("Error E-1042 after firmware 2.7.4 on the pumps")
    assert {"e1042", "1042", "274", "pump", "firmwar"} <= set(tokens)
    assert "the" not in tokens and "on" not in tokens


def test_exact_code_found_by_hybrid_that_dense_alone_misses(bench, faults) -> None:
    misses = 0
    for code in CODES:
        question = f"What does fault {code} mean?"
        dense = filenames(
            retrieve(bench.index(faults.id, "wordllama"), [question], 3, mode="dense")
        )
        hybrid = filenames(
            retrieve(bench.index(faults.id, "wordllama"), [question], 3, mode="hybrid")
        )
        assert hybrid[0] == f"{code}.txt", (code, hybrid)
        misses += dense[0] != f"{code}.txt"
    assert misses >= len(CODES) // 2, "the dense side was expected to confuse the codes"


def test_keyword_hits_record_why_they_were_kept(bench, faults) -> None:
    out = researcher.node(
        researcher_state("faults", "fault E-4117 gear", retrieval_mode="hybrid"),
        runtime_for(bench),
    )
    top = out["evidence"][0]
    assert top["filename"] == "E-4117.txt"
    assert top["kept_by"] in ("keyword", "both")
    assert top["keyword_rank"] == 1 and top["coverage"] >= researcher.KEYWORD_COVERAGE
    (trace,) = out["trace"]
    assert trace["mode"] == "hybrid"
    assert sum(trace["kept_by"].values()) == trace["chunks"]


def test_keyword_only_chunk_survives_a_strict_similarity_threshold(bench, faults) -> None:
    strict = {"threshold_override": 0.99}
    hybrid = researcher.node(
        researcher_state("faults", "E-4105", retrieval_mode="hybrid", **strict), runtime_for(bench)
    )
    dense = researcher.node(
        researcher_state("faults", "E-4105", retrieval_mode="dense", **strict), runtime_for(bench)
    )
    assert [e["filename"] for e in hybrid["evidence"]] == ["E-4105.txt"]
    assert hybrid["evidence"][0]["kept_by"] == "keyword"
    assert hybrid["trace"][0]["filtered_out"] >= 1  # the other candidates still count
    assert dense["evidence"] == [] and dense["hitl"]["kind"] == "no_evidence"


@pytest.mark.usefixtures("backend")
def test_deleted_documents_disappear_from_keyword_results(bench, faults) -> None:
    doc = next(d for d in bench.documents("faults") if d.filename == "E-4107.txt")
    assert filenames(retrieve(bench.index("faults", "wordllama"), ["E-4107"], 3, "bm25"))[0] == (
        "E-4107.txt"
    )
    bench.delete_document("faults", doc.doc_id)
    found = filenames(retrieve(bench.index("faults", "wordllama"), ["E-4107"], 3, "bm25"))
    assert "E-4107.txt" not in found
    assert doc.doc_id not in set(bench.bm25.rows("faults").values())


@pytest.mark.usefixtures("backend")
def test_keyword_search_never_crosses_workspaces(bench, faults) -> None:
    other = bench.create_workspace("other", "wordllama")
    Ingestor(bench).ingest_bytes(other, b"Secret project E-4101 budget is 9 million.", "x.txt")
    for mode in ("bm25", "hybrid"):
        mine = retrieve(bench.index("faults", "wordllama"), ["E-4101 secret budget"], 20, mode)
        theirs = retrieve(bench.index("other", "wordllama"), ["E-4101 secret budget"], 20, mode)
        assert {c.metadata["workspace_id"] for c in mine} == {"faults"}
        assert filenames(theirs) == ["x.txt"]
    bench.delete_workspace("other")
    assert bench.bm25.rows("other") == {}
    assert not (bench.settings.data_dir / "bm25" / "other").exists()


def test_excluded_documents_are_masked_inside_the_keyword_search(bench, faults) -> None:
    doc = next(d for d in bench.documents("faults") if d.filename == "E-4103.txt")
    hits = bench.keyword_index("faults").search("faults", "E-4103", 5, exclude_docs=[doc.doc_id])
    assert doc.doc_id not in {h.doc_id for h in hits}


@pytest.mark.usefixtures("backend")
def test_index_is_built_once_per_change_not_per_query(bench, faults) -> None:
    index = bench.keyword_index("faults")
    index.search("faults", "pump", 3)
    built = index._built["faults"]
    index.search("faults", "fan", 3)
    assert index._built["faults"] is built
    Ingestor(bench).ingest_bytes(
        bench.registry.require_workspace("faults"), b"Fault E-4200: the door is open.", "d.txt"
    )
    assert index.search("faults", "E-4200", 1)[0].chunk_id.startswith("faults/")
    assert index._built["faults"] is not built


@pytest.mark.usefixtures("backend")
def test_keyword_rows_are_repaired_from_chroma_after_a_crash(bench, faults, settings) -> None:
    # A crash between the two writes: rows lost for one document, a stray row for another.
    rows = bench.bm25.rows("faults")
    lost = next(cid for cid, doc in rows.items())
    with bench.bm25._conn() as conn:
        conn.execute("DELETE FROM bm25_chunks WHERE chunk_id = ?", (lost,))
        conn.execute(
            "INSERT INTO bm25_chunks (workspace_id, chunk_id, doc_id, tokens)"
            " VALUES ('faults', 'faults/ghost/000000', 'ghost', 'e4101')"
        )
    restarted = Workbench(settings)  # a new process checks once, on first use
    restarted.keyword_index("faults")
    repaired = restarted.bm25.rows("faults")
    assert repaired == rows
    assert "faults/ghost/000000" not in repaired


@pytest.mark.usefixtures("backend")
def test_another_process_drops_its_index_of_a_deleted_workspace_made_again(bench, settings):
    other = Workbench(settings)  # another process on the same database
    ws = bench.create_workspace("again", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"Fault E-4500: the old boiler alarm.", "old.txt")
    assert filenames(retrieve(other.index(ws.id, "wordllama"), ["E-4500"], 3, "bm25")) == [
        "old.txt"
    ]
    bench.delete_workspace(ws.id)
    ws = bench.create_workspace("again", "wordllama")
    Ingestor(bench).ingest_bytes(ws, b"Fault E-4500: the new pump alarm.", "new.txt")
    assert filenames(retrieve(other.index(ws.id, "wordllama"), ["E-4500"], 3, "bm25")) == [
        "new.txt"
    ]


LATE = b"Fault E-4300 means the hatch sensor lost contact; reseat the hatch sensor plug."


def ingest_repairing_midway(bench, settings, monkeypatch) -> tuple[Workbench, list[str]]:
    """Ingest LATE into 'faults' while another process (a new Workbench) runs its first-use
    repair at the riskiest moment: the keyword rows are written, the chunks not yet visible.
    Right after that repair has read Chroma's visible chunks, the rest of the ingest happens:
    the chunks turn visible and the document ready. Returns the other process and those ids."""
    other = Workbench(settings)
    read_visible = other.store.visible_ids
    published: list[str] = []

    def visible_then_publish(embed_model: str, ws_id: str) -> set[str]:
        visible = read_visible(embed_model, ws_id)
        rows = other.bm25.rows(ws_id)
        published.extend(cid for cid in rows if cid not in visible)
        bench.store.make_visible(embed_model, published)
        for doc_id in {rows[cid] for cid in published}:
            bench.registry.mark_ready(ws_id, doc_id, 1, len(published), [])
        return visible

    def hook(name: str) -> None:
        if name == "keyword rows written":
            other.keyword_index("faults")

    monkeypatch.setattr(other.store, "visible_ids", visible_then_publish)
    monkeypatch.setattr(pipeline, "crash_point", hook)
    ws = bench.registry.require_workspace("faults")
    assert Ingestor(bench).ingest_bytes(ws, LATE, "late.txt").status == "ingested"
    assert published  # the document did turn visible between the repair's reads
    return other, published


def test_repair_keeps_the_rows_of_a_document_published_while_it_reads(
    bench, faults, settings, monkeypatch
) -> None:
    other, published = ingest_repairing_midway(bench, settings, monkeypatch)
    assert set(published) <= set(other.bm25.rows("faults"))
    assert not other.bm25.needs_check("faults")
    (hit,) = other.keyword_index("faults").search("faults", "E-4300 hatch", 1)
    assert hit.chunk_id in published


def test_repair_rereads_visibility_before_it_drops_a_row(
    bench, faults, settings, monkeypatch
) -> None:
    # No document counts as being ingested, so the repair's read of the visible chunks is
    # simply out of date by the time it decides: only looking again saves the rows.
    monkeypatch.setattr(Registry, "stale_documents", lambda self: [])
    other, published = ingest_repairing_midway(bench, settings, monkeypatch)
    assert set(published) <= set(other.bm25.rows("faults"))


def test_a_repair_that_failed_runs_again_on_next_use(bench, faults, settings, monkeypatch):
    lost = next(iter(bench.bm25.rows("faults")))
    with bench.bm25._conn() as conn:
        conn.execute("DELETE FROM bm25_chunks WHERE chunk_id = ?", (lost,))
    other = Workbench(settings)

    def down(embed_model: str, ws_id: str) -> set[str]:
        raise StoreError("Chroma is not answering")

    monkeypatch.setattr(other.store, "visible_ids", down)
    with pytest.raises(StoreError):
        other.keyword_index("faults")
    assert other.bm25.needs_check("faults")
    monkeypatch.undo()
    other.keyword_index("faults")
    assert lost in other.bm25.rows("faults")


def test_one_workspaces_index_build_does_not_hold_up_anothers(bench, monkeypatch) -> None:
    store = bench.bm25
    store.add("a", "doc-a", ["a/doc-a/0"], ["The pump seal is replaced every year."])
    store.add("b", "doc-b", ["b/doc-b/0"], ["The boiler is descaled every year."])
    a_building, release_a, b_done = threading.Event(), threading.Event(), threading.Event()
    build = Bm25Store._build

    def slow_for_a(self, workspace_id, version, rows):
        if workspace_id == "a":
            a_building.set()
            release_a.wait(timeout=60)
        return build(self, workspace_id, version, rows)

    monkeypatch.setattr(Bm25Store, "_build", slow_for_a)
    found: list = []
    a = threading.Thread(target=store.scores, args=("a", "pump"))
    b = threading.Thread(target=lambda: (found.append(store.scores("b", "boiler")), b_done.set()))
    a.start()
    try:
        assert a_building.wait(timeout=60)
        b.start()
        # B's index is built and queried while A's build still holds A's lock.
        assert b_done.wait(timeout=60), "workspace b waited for workspace a's build"
        assert not release_a.is_set() and found[0] is not None
    finally:
        release_a.set()
        a.join(timeout=60)
        b.join(timeout=60)


IRRIGATION = {
    "drip.txt": "Calibration of drip emitters: cup-test ten emitters for fifteen minutes, "
    "measure the water collected and compute the flow per hour before setting run times.",
    "flood.txt": "Flood irrigation of rice fields: the basin is levelled, bunded and kept under "
    "standing water for most of the season; drainage happens before the harvest.",
    "tractor.txt": "Tractor maintenance: change the engine oil every 250 hours, grease the "
    "joints weekly and check the tyre pressure before field work.",
}


def test_soft_match_rewards_related_words_and_weighs_rare_ones(bench) -> None:
    from masis_core.retrieval.softmatch import ChunkWords, soft_matches

    texts = list(IRRIGATION.values())
    chunks = ChunkWords(bench.word_vectors, size=0).pool(texts, list(IRRIGATION))

    def soft_match(vectors, query, weight_of, pool) -> np.ndarray:
        return soft_matches(vectors, [query], weight_of, pool)[0]

    def uniform(words: list[str]) -> np.ndarray:
        return np.ones(len(words))

    query = "How do I calibrate a drip emitter?"
    scores = soft_match(bench.word_vectors, query, uniform, chunks)
    # 'calibrate'/'emitter' are not the chunk's exact words ('calibration', 'emitters').
    assert scores[0] == scores.max() > scores[2]
    assert scores[0] < 1.0
    # Weight only 'tractor': the tractor chunk wins although 'calibrate' matches elsewhere.
    rare = soft_match(
        bench.word_vectors,
        "calibrate tractor",
        lambda words: np.array([0.1 if w == "calibrate" else 5.0 for w in words]),
        chunks,
    )
    assert int(np.argmax(rare)) == 2
    assert soft_match(bench.word_vectors, "the and of", uniform, chunks).tolist() == [0, 0, 0]


def test_hybrid_scores_every_candidate_on_all_three_signals(bench) -> None:
    ws = bench.create_workspace("farm", "wordllama")
    ingestor = Ingestor(bench)
    for name, text in IRRIGATION.items():
        assert ingestor.ingest_bytes(ws, text.encode(), name).status == "ingested"
    question = ["How do I calibrate a drip emitter?"]
    found = retrieve(bench.index(ws.id, "wordllama"), question, 3, mode="hybrid")
    assert filenames(found)[0] == "drip.txt"
    assert all(len(c.per_query[0]) == 3 and c.soft > 0 for c in found)
    assert found[0].soft == max(c.soft for c in found)
    # The soft signal alone decides when it has all the weight; the other modes skip it.
    only_soft = retrieve(
        bench.index(ws.id, "wordllama"), question, 3, mode="hybrid", dense_weight=0, soft_weight=1
    )
    assert [c.chunk_id for c in only_soft] == [
        c.chunk_id for c in sorted(only_soft, key=lambda c: -c.soft)
    ]
    assert all(
        c.soft == 0 for c in retrieve(bench.index(ws.id, "wordllama"), question, 3, mode="bm25")
    )


def test_variants_share_one_store_query_with_the_same_hits(bench, faults) -> None:
    embedder = bench.embedder("wordllama")
    # Embedded in one call, each variant gets the vector it gets alone.
    together = embedder.embed_queries(["pump fault", "E-4107 relay"])
    assert np.array_equal(together[1], embedder.embed_query("E-4107 relay"))
    vectors = [embedder.embed_query(q) for q in ("pump fault", "E-4107 relay", "serial number")]
    batched, _ = bench.store.query_many("wordllama", faults.id, vectors, 5, exclude_docs=["x"])
    alone = [bench.store.query("wordllama", faults.id, v, 5, exclude_docs=["x"]) for v in vectors]
    assert [[h.chunk_id for h in hits] for hits in batched] == [
        [h.chunk_id for h in hits] for hits in alone
    ]
    assert len({tuple(h.chunk_id for h in hits) for hits in batched}) == 3


def test_the_knn_reads_the_keyword_sides_rows_with_its_own_visible_only(bench, faults) -> None:
    """Hybrid asks for its keyword candidates' rows in the kNN's row read: a hidden chunk (a
    document mid-ingest) or an unknown id comes back without a row."""
    shown, hidden = sorted(bench.bm25.rows(faults.id))[:2]
    bench.store.collection("wordllama", faults.id).update(
        ids=[hidden], metadatas=[{"visible": False}]
    )
    vector = bench.embedder("wordllama").embed_query("pump fault")
    (hits,), rows = bench.store.query_many(
        "wordllama", faults.id, [vector], 3, embeddings=True, also=[shown, hidden, "faults/x/0"]
    )
    assert len(hits) == 3 and hidden not in {h.chunk_id for h in hits}
    assert set(rows) == {shown}
    text, meta, embedding = rows[shown]
    assert (text, meta) == bench.store.get_chunks("wordllama", faults.id, [shown])[shown]
    assert embedding.shape == (len(vector),)


def test_keyword_rows_of_a_document_still_being_ingested_match_nothing(bench) -> None:
    from ingest.pipeline import OWNER

    ws = bench.create_workspace("busy", "wordllama")
    # This process is ingesting 'doc': its keyword rows are written just before its chunks
    # become visible.
    assert bench.registry.claim_document(ws.id, "doc", "relay.txt", 40, OWNER)
    bench.bm25.add(ws.id, "doc", ["busy/doc/00000"], ["Relay fault E-4107 on the panel."])
    for mode in ("hybrid", "bm25"):
        assert retrieve(bench.index(ws.id, "wordllama"), ["E-4107 relay"], 5, mode=mode) == []


def test_rrf_on_known_rankings() -> None:
    fused = rrf([["a", "b", "c"], ["b", "c", "d"]], k=60)
    assert list(fused) == ["b", "c", "a", "d"]
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    weighted = rrf([["a"], ["b"]], k=1, weights=[1.0, 3.0])
    assert weighted == {"b": pytest.approx(1.5), "a": pytest.approx(0.5)}


def test_metrics_against_hand_computed_values() -> None:
    ranked = ["x", "r1", "y", "r2", "z"]
    relevant = {"r1", "r2", "r3"}
    assert recall_at(ranked, relevant, 2) == pytest.approx(1 / 3)
    assert recall_at(ranked, relevant, 5) == pytest.approx(2 / 3)
    dcg = 1 / 1.584962500721156 + 1 / 2.321928094887362  # ranks 2 and 4
    ideal = 1 + 1 / 1.584962500721156 + 1 / 2.0  # three relevant at ranks 1..3
    assert ndcg_at(ranked, relevant, 10) == pytest.approx(dcg / ideal)
    assert mrr_at(ranked, relevant, 10) == pytest.approx(0.5)
    assert mrr_at(["x"], relevant, 10) == 0.0 and ndcg_at([], relevant) == 0.0


def test_page_hit_accepts_the_gold_page_or_the_next() -> None:
    meta = {"filename": "m.pdf", "page_start": 5, "page_end": 6}
    assert page_hit(meta, "m.pdf", 5) and page_hit(meta, "m.pdf", 4)
    assert not page_hit(meta, "m.pdf", 7) and not page_hit(meta, "n.pdf", 5)


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    d = tmp_path / "beir"
    (d / "qrels").mkdir(parents=True)
    docs = {code.lower(): text for code, text in CODES.items()}
    (d / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": i, "title": "", "text": t}) for i, t in docs.items())
    )
    queries = [
        {"_id": f"q{n}", "text": f"What does {code} mean?", "metadata": {"category": cat}}
        for n, (code, cat) in enumerate(zip(CODES, ["codes", "names"] * 10, strict=True))
    ]
    (d / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    qrels = ["query-id\tcorpus-id\tscore"] + [
        f"q{n}\t{code.lower()}\t1" for n, code in enumerate(CODES)
    ]
    (d / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return d


def test_evaluation_harness_reports_per_mode_and_category(beir, settings) -> None:
    report = evaluate_retrieval(beir, k=5, use_variants=False)
    assert set(report["modes"]) == {"dense", "bm25", "hybrid"}
    hybrid = report["modes"]["hybrid"]
    assert set(hybrid["by_category"]) == {"codes", "names"}
    assert hybrid["by_category"]["codes"]["queries"] == 10
    assert hybrid["overall"]["ndcg@10"] == pytest.approx(1.0)
    assert report["modes"]["dense"]["overall"]["ndcg@10"] < 0.9


def test_eval_commands_print_json(beir, tmp_path, capsys, settings) -> None:
    assert (
        masis_main(
            ["eval", "retrieval", "--dataset", str(beir), "--mode", "bm25", "--k", "3", "--json"]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert list(report["modes"]) == ["bm25"] and report["k"] == 3
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "faults.pdf").write_bytes(make_pdf([CODES["E-4101"], CODES["E-4113"]]))
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps(
            [
                {"doc": "faults.pdf", "question": "What does E-4113 mean?", "gold_page": 2},
                {"doc": "missing.pdf", "question": "Anything?", "gold_page": 1},
            ]
        )
    )
    assert (
        masis_main(["eval", "pages", "--pdfs", str(pdfs), "--questions", str(questions), "--json"])
        == 0
    )
    pages = json.loads(capsys.readouterr().out)
    assert pages["questions"] == 2 and pages["page_hit@5"] == 0.5
    assert [r["hit"] for r in pages["results"]] == [True, False]
    assert pages["files"][0]["status"] == "ingested"


def test_calibrate_reports_distributions_and_a_threshold(bench, tmp_path, capsys) -> None:
    ws = bench.create_workspace("cal", "wordllama")
    Ingestor(bench).ingest_bytes(
        ws, make_pdf([CODES["E-4101"], CODES["E-4102"], CODES["E-4103"]]), "codes.pdf"
    )
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps(
            [
                {"doc": "codes.pdf", "question": f"What does {c} mean?", "gold_page": n}
                for n, c in enumerate(["E-4101", "E-4102", "E-4103"], start=1)
            ]
        )
    )
    assert masis_main(["calibrate", "-w", "cal", "--questions", str(questions), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["relevant"] >= 3
    assert 0 < report["suggested_threshold"] <= report["similarity"]["relevant"]["p50"]
    assert report["current_threshold"] == 0.27


def test_one_shared_word_does_not_make_an_off_topic_question_a_keyword_match(bench, faults):
    out = researcher.node(
        researcher_state(
            "faults",
            "What was the population of Mongolia's capital city in 1990 near the pump?",
            retrieval_mode="hybrid",
            threshold_override=0.99,
        ),
        runtime_for(bench),
    )
    assert out["evidence"] == []
    assert out["hitl"]["kind"] == "no_evidence"


def test_soft_match_over_the_pool_equals_each_chunks_own_maximum(bench, monkeypatch) -> None:
    """The pooled product gives what each chunk's own word matrix gives; a chunk's words are
    kept by id but never reused for another text under the same id (a re-ingest), and an
    emptied word table voids the kept rows instead of misreading them."""
    from masis_core.retrieval import softmatch
    from masis_core.retrieval.bm25 import content_words
    from masis_core.retrieval.softmatch import ChunkWords, soft_matches

    vectors = bench.word_vectors
    texts = [*IRRIGATION.values(), "", "the and of"]
    ids = ["ws/a/0", "ws/b/0", "ws/c/0", "ws/d/0", "ws/e/0"]
    queries = ["How do I calibrate a drip emitter?", "tractor engine oil", "the"]

    def weights(words: list[str]) -> np.ndarray:
        return np.arange(1, len(words) + 1, dtype=np.float64)

    def expected(query: str, text: str) -> float:
        asked, held = content_words(query), content_words(text)
        if not asked or not held:
            return 0.0
        best = (vectors.of(asked) @ vectors.of(held).T).max(axis=1)
        return float(best @ weights(asked) / weights(asked).sum())

    kept = ChunkWords(vectors, size=3)
    got = soft_matches(vectors, queries, weights, kept.pool(texts, ids))
    for q, scores in zip(queries, got, strict=True):
        assert scores.tolist() == pytest.approx([expected(q, t) for t in texts], abs=1e-5)
    assert got[0][0] > got[0][2] and got[1][2] > got[1][0]
    assert len(kept._kept) == 3  # bounded

    # Same ids, other texts: the tractor chunk's id now holds the drip text.
    swapped = [texts[0], texts[1], texts[0], texts[3], texts[4]]
    again = soft_matches(vectors, queries, weights, kept.pool(swapped, ids))
    assert again[0][2] == pytest.approx(got[0][0], abs=1e-5)

    # The word table is emptied when full, here by the pool's own look-up: the kept rows
    # are void and all are looked up again (a second pass), scores unchanged.
    monkeypatch.setattr(softmatch, "MAX_CACHED_WORDS", 5)
    before = vectors.generation
    lookups: list[int] = []
    real_rows = vectors.rows

    def counted_rows(words):
        lookups.append(len(words))
        return real_rows(words)

    monkeypatch.setattr(vectors, "rows", counted_rows)
    pooled = kept.pool(texts, ids)
    assert vectors.generation > before
    assert len(lookups) == 2  # the pool looked its words up again after the table emptied
    after = soft_matches(vectors, queries, weights, pooled)
    for a, b in zip(after, got, strict=True):
        assert a.tolist() == pytest.approx(b.tolist(), abs=1e-5)


def test_blas_runs_one_thread_unless_the_operator_chose(monkeypatch) -> None:
    """Small products from several workers: OpenBLAS's extra threads only wait for cores."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from masis_core.workspaces.workbench import single_threaded_blas

    def threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with threadpool_limits(2, user_api="blas"):
        if threads() != {2}:
            pytest.skip("this BLAS cannot run two threads here")
        single_threaded_blas()
        assert threads() == {1}
    with threadpool_limits(2, user_api="blas"):
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        single_threaded_blas()
        assert threads() == {2}
