"""A collection per workspace: queries without a workspace filter stay exact, and data dirs
from the shared per-embedder collections migrate on first start, crash-safe."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings

from ingest.pipeline import Ingestor
from masis_core.config import Settings, get_settings
from masis_core.errors import EmbedderMismatch
from masis_core.retrieval.store import OVERFETCH, chunk_id, collection_name, legacy_collection_name
from masis_core.storage.db import SqliteDatabase
from masis_core.storage.registry import Registry
from masis_core.workspaces.workbench import Workbench
from tests.pdfs import make_pdf
from tests.proc import run_module
from tests.servers import ChromaServer
from tests.texts import BOILER, PUMP

DIM = 8
# alpha spans two pages of the migration's copy (2,000 chunks a page), beta one.
SIZES = {"alpha": 2500, "beta": 300, "gone": 40}


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def legacy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir as the shared-collection release left it: 'gone' was deleted from the
    registry but its chunks stayed behind; a tenth of the chunks are still invisible."""
    data = tmp_path_factory.mktemp("legacy") / "data"
    registry = Registry(SqliteDatabase(data / "masis.db"))
    for ws in ("alpha", "beta"):
        registry.create_workspace(ws, "wordllama")
    client = chromadb.PersistentClient(
        path=str(data / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    shared = client.create_collection(
        legacy_collection_name("wordllama"),
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"embed_model": "wordllama"},
    )
    rng = np.random.default_rng(7)
    for ws, n in SIZES.items():
        ids = [chunk_id(ws, f"doc{i // 100}", i) for i in range(n)]
        shared.add(
            ids=ids,
            embeddings=unit(rng, n),
            documents=[f"{ws} chunk {i}" for i in range(n)],
            metadatas=[
                {"workspace_id": ws, "doc_id": f"doc{i // 100}", "visible": i % 10 != 0}
                for i in range(n)
            ],
        )
    return data


def snapshot(data_dir: Path) -> dict[str, Any]:
    """Every collection with every row: ids, texts, metadata and vectors."""
    client = chromadb.PersistentClient(
        path=str(data_dir / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    out: dict[str, Any] = {}
    for col in client.list_collections():
        got = col.get(include=["documents", "metadatas", "embeddings"])
        rows = zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True)
        out[col.name] = (
            dict(col.metadata or {}),
            sorted((i, d, sorted(m.items()), np.round(e, 5).tolist()) for i, d, m, e in rows),
        )
    return out


def start(data_dir: Path, kill_at: int | None) -> subprocess.CompletedProcess[str]:
    """The command line starting on the data dir (``status``), SIGKILLed after ``kill_at``
    chunks of a workspace are copied."""
    extra = {"MASIS_TEST_KILL_MIGRATION_AT": str(kill_at)} if kill_at else {}
    return run_module(["masis_core", "status"], data_dir, extra)


@pytest.fixture(scope="module")
def migrated(legacy_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("clean") / "data"
    shutil.copytree(legacy_dir, data)
    proc = start(data, None)
    assert proc.returncode == 0, proc.stderr
    assert "alpha: 2500/2840 chunks copied" in proc.stderr  # progress on the terminal
    return snapshot(data)


def test_migration_moves_each_workspace_into_its_own_collection(
    migrated: dict[str, Any],
) -> None:
    assert set(migrated) == {collection_name("alpha"), collection_name("beta")}
    for ws in ("alpha", "beta"):
        meta, rows = migrated[collection_name(ws)]
        assert meta == {"embed_model": "wordllama", "workspace_id": ws}
        assert len(rows) == SIZES[ws]
        assert all(r[0].startswith(f"{ws}/") for r in rows)
        assert sum(dict(r[2])["visible"] for r in rows) == SIZES[ws] * 9 // 10


@pytest.mark.parametrize("kill_at", [2000, 2500, 300])
def test_a_killed_migration_ends_like_an_uninterrupted_one_after_a_restart(
    legacy_dir: Path, migrated: dict[str, Any], tmp_path: Path, kill_at: int
) -> None:
    data = tmp_path / "data"
    shutil.copytree(legacy_dir, data)
    killed = start(data, kill_at)
    assert killed.returncode == -9, killed.stderr
    assert legacy_collection_name("wordllama") in snapshot(data)  # nothing dropped yet
    again = start(data, None)
    assert again.returncode == 0, again.stderr
    assert snapshot(data) == migrated


def test_a_fresh_data_dir_has_nothing_to_migrate(bench: Workbench) -> None:
    assert bench.store.migrate_shared(bench.workspaces()) == 0


def test_queries_skip_hidden_and_excluded_chunks_even_when_they_rank_first(
    bench: Workbench,
) -> None:
    """The kNN runs unfiltered and drops hidden or excluded chunks from its answer; when more
    of them than its margin outrank the rest, the filtered query answers instead."""
    ws = bench.create_workspace("near", "wordllama")
    rng = np.random.default_rng(3)
    target = unit(rng, 1)[0]
    # 2 * OVERFETCH + 10 chunks almost on the query, all hidden or excluded; 30 farther away.
    close = target + 0.01 * unit(rng, 2 * OVERFETCH + 10)
    far = unit(rng, 30)
    vectors = np.vstack([close / np.linalg.norm(close, axis=1, keepdims=True), far])
    n_close = len(close)
    docs = ["hidden" if i < OVERFETCH + 5 else "excluded" for i in range(n_close)]
    docs += ["kept"] * len(far)
    ids = [chunk_id(ws.id, d, i) for i, d in enumerate(docs)]
    metas = [{"workspace_id": ws.id, "doc_id": d} for d in docs]
    bench.store.add_chunks("wordllama", ids, vectors, [f"t{i}" for i in range(len(ids))], metas)
    bench.store.make_visible(
        "wordllama", [i for i, d in zip(ids, docs, strict=True) if d != "hidden"]
    )
    hits = bench.store.query("wordllama", ws.id, target, 5, exclude_docs=["excluded"])
    assert [h.metadata["doc_id"] for h in hits] == ["kept"] * 5
    expected = sorted(range(n_close, len(ids)), key=lambda i: -float(vectors[i] @ target))[:5]
    assert [h.chunk_id for h in hits] == [ids[i] for i in expected]
    # The same through the path hybrid retrieval takes: with the stored vectors.
    (with_vectors,), _ = bench.store.query_many(
        "wordllama", ws.id, [target], 5, ["excluded"], embeddings=True
    )
    assert [h.chunk_id for h in with_vectors] == [h.chunk_id for h in hits]
    for h in with_vectors:
        assert h.embedding is not None
        assert np.allclose(h.embedding, vectors[ids.index(h.chunk_id)], atol=1e-5)
    # With few hidden chunks on top, the unfiltered answer alone is the same ranking.
    visible_close = bench.store.query("wordllama", ws.id, target, 3)
    assert all(h.metadata["doc_id"] == "excluded" for h in visible_close)


def test_a_collection_remembers_its_embedder(bench: Workbench) -> None:
    ws = bench.create_workspace("rec", "wordllama")
    bench.store.collection("wordllama", ws.id)
    other = Workbench(bench.settings)
    with pytest.raises(EmbedderMismatch, match="made with 'wordllama'"):
        other.store.collection("nomic-embed-text", ws.id)


def test_deleting_a_workspace_drops_its_collection_only(bench: Workbench) -> None:
    for name in ("keep", "drop"):
        ws = bench.create_workspace(name, "wordllama")
        ids = [chunk_id(ws.id, "d", 0)]
        bench.store.add_chunks(
            "wordllama", ids, unit(np.random.default_rng(1), 1), ["x"], [{"doc_id": "d"}]
        )
    bench.delete_workspace("drop")
    names = {c.name for c in bench.store.client.list_collections()}
    assert names == {collection_name("keep")}
    # the workspace may be created again, empty
    again = bench.create_workspace("drop", "wordllama")
    assert bench.store.count("wordllama", again.id, visible_only=False) == 0


@pytest.mark.slow
def test_through_a_chroma_server_each_workspace_is_its_own_collection(
    settings: Settings,
    chroma: ChromaServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same layout in server mode: another client, and another process (the command
    line), see the workspace's chunks in its collection; a delete drops it on the server."""
    monkeypatch.setenv("MASIS_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("MASIS_CHROMA_PORT", str(chroma.port))
    get_settings.cache_clear()
    one, two = Workbench(get_settings()), Workbench(get_settings())
    ws = one.create_workspace("plant", "wordllama")
    report = Ingestor(one).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "m.pdf")
    assert report.status == "ingested"
    assert two.store.count("wordllama", ws.id) == report.chunks > 0
    hits = two.store.query("wordllama", ws.id, two.embedder("wordllama").embed_query("pump"), 3)
    assert hits and all(h.chunk_id.startswith("plant/") for h in hits)
    server = {"MASIS_CHROMA_HOST": "127.0.0.1", "MASIS_CHROMA_PORT": str(chroma.port)}
    question = "How often must the hydraulic pump be inspected?"
    asked = run_module(
        ["masis_core", "ask", "-w", ws.id, question, "--json"], settings.data_dir, server
    )
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert "500 operating hours" in answer["answer"]
    assert {c["chunk_id"].split("/")[0] for c in answer["citations"]} == {"plant"}
    one.delete_workspace(ws.id)
    assert collection_name(ws.id) not in {c.name for c in two.store.client.list_collections()}
