"""Workspaces never see each other's data: 20 workspaces with overlapping content, 10,000
randomized queries through every retrieval path, and deletion that leaves nothing behind."""

from __future__ import annotations

import json
import random

import pytest

from ingest.pipeline import Ingestor
from masis_core.modes import MODES
from masis_core.retrieval.hybrid import retrieve
from masis_core.retrieval.store import collection_name
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.proc import run_module

pytestmark = pytest.mark.slow

WORKSPACES = 20
QUERIES = 10_000
COMMON = (
    "pump", "valve", "seal", "pressure", "inspection",
    "boiler", "filter", "motor", "oil", "hours",
)  # fmt: skip


def text_for(n: int, doc: int) -> str:
    rng = random.Random(n * 100 + doc)
    shared = " ".join(rng.choice(COMMON) for _ in range(60))
    return (
        f"Workspace secret ws{n:02d}code appears only here. Project ws{n:02d}name budget. "
        f"{shared}. The {COMMON[doc]} of unit ws{n:02d}code is checked every {n + doc} hours."
    )


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory):
    from masis_core.config import Settings

    data_dir = tmp_path_factory.mktemp("iso") / "data"
    bench = Workbench(Settings(data_dir=data_dir, provider="offline"))
    ingestor = Ingestor(bench)
    for n in range(WORKSPACES):
        ws = bench.create_workspace(f"ws{n:02d}", "wordllama")
        for doc in range(3):
            report = ingestor.ingest_bytes(ws, text_for(n, doc).encode(), f"doc{doc}.txt")
            assert report.status == "ingested"
    # the same file in two workspaces is two documents
    for n in (0, 1):
        ingestor.ingest_bytes(
            bench.registry.require_workspace(f"ws{n:02d}"), b"shared pump manual " * 40, "s.txt"
        )
    return bench


def test_ten_thousand_random_queries_never_cross_workspaces(many: Workbench) -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(QUERIES):
        mine = rng.randrange(WORKSPACES)
        other = rng.randrange(WORKSPACES)
        words = [f"ws{other:02d}code", f"ws{other:02d}name", *rng.sample(COMMON, 3)]
        rng.shuffle(words)
        mode = rng.choice(MODES)
        ws_id = f"ws{mine:02d}"
        found = retrieve(
            many.index(ws_id, "wordllama"), [" ".join(words)], rng.choice([3, 10, 20]), mode
        )
        for c in found:
            assert c.metadata["workspace_id"] == ws_id, (ws_id, mode, c.chunk_id)
            assert c.chunk_id.startswith(f"{ws_id}/")
            assert f"ws{mine:02d}code" in c.text or "shared pump manual" in c.text
        checked += len(found)
    assert checked > QUERIES  # the queries did return results, all of them checked


def test_the_command_line_stays_in_its_workspace(many: Workbench) -> None:
    for mine, other in ((3, 4), (11, 2)):
        proc = run_module(
            [
                "masis_core",
                "ask",
                "-w",
                f"ws{mine:02d}",
                f"How often is unit ws{mine:02d}code checked? And ws{other:02d}code?",
                "--json",
            ],
            many.settings.data_dir,
        )
        out = json.loads(proc.stdout)
        for c in out["citations"]:
            assert c["chunk_id"].startswith(f"ws{mine:02d}/")
        assert f"ws{other:02d}code appears" not in json.dumps(out)
        assert out["citations"], "the question still found its own workspace's passages"


def test_deleting_a_workspace_removes_chunks_keywords_files_and_runs(many: Workbench) -> None:
    research = RunService(many)
    rec = research.ask("ws05", "How often is the pump of unit ws05code checked?")
    shared_doc = next(d for d in many.documents("ws00") if d.filename == "s.txt")
    own_docs = [d.doc_id for d in many.documents("ws05")]
    assert research.delete_workspace("ws05") == 1
    assert many.registry.get_workspace("ws05") is None
    names = {c.name for c in many.store.client.list_collections()}
    assert collection_name("ws05") not in names and collection_name("ws04") in names
    assert many.bm25.rows("ws05") == {}
    assert all(not many.file_path(d).exists() for d in own_docs)
    assert research.store.get(rec.run_id) is None
    assert research.graph.get_state({"configurable": {"thread_id": rec.run_id}}).values == {}
    # a file shared with a workspace that remains is kept for it
    research.delete_workspace("ws01")
    assert many.file_path(shared_doc.doc_id).exists()
    assert [d.filename for d in many.documents("ws00")].count("s.txt") == 1
