"""Ingestion into real Chroma and SQLite on tmp_path, with the bundled WordLlama embedder."""

from __future__ import annotations

import pytest
from chromadb.api.models.Collection import Collection

from ingest import pipeline
from ingest.pipeline import Ingestor, Source, doc_id_for
from masis_core.errors import DocumentError, EmbedderMismatch
from masis_core.retrieval.store import chunk_id
from masis_core.workspaces.workbench import Workbench
from tests.conftest import FIXTURES
from tests.pdfs import filler, make_pdf

TOPICS = ["hydraulic pump", "ledger reconciliation", "volcanic basalt", "orchestra tuning"]


@pytest.fixture
def manual() -> bytes:
    return make_pdf([filler(topic, 260) for topic in TOPICS])


def all_chunks(bench: Workbench, ws_id: str) -> dict:
    ws = bench.registry.require_workspace(ws_id)
    return bench.store.collection(ws.embed_model, ws.id).get(include=["metadatas"])


def test_multi_page_pdf_is_ingested_with_pages_on_every_chunk(
    bench: Workbench, manual: bytes
) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, manual, "manual.pdf")
    assert report.status == "ingested", report.error
    assert report.pages == 4
    assert report.chunks >= 4

    got = all_chunks(bench, "demo")
    assert len(got["ids"]) == report.chunks
    for meta in got["metadatas"]:
        assert 1 <= meta["page_start"] <= meta["page_end"] <= 4
        assert meta["visible"] is True
        assert meta["filename"] == "manual.pdf"
        assert meta["doc_id"] == doc_id_for(manual)
    assert set(got["ids"]) == {chunk_id("demo", report.doc_id, i) for i in range(report.chunks)}

    # The page about basalt is found on page 3.
    embedder = bench.embedder(ws.embed_model)
    hits = bench.store.query(ws.embed_model, ws.id, embedder.embed_query("volcanic basalt"), 3)
    assert hits[0].metadata["page_start"] <= 3 <= hits[0].metadata["page_end"]
    assert all(0.0 < h.score <= 1.0 for h in hits)

    stored = bench.file_path(report.doc_id)
    assert stored.read_bytes() == manual
    assert "manual" not in str(stored)
    assert bench.registry.get_document("demo", report.doc_id).status == "ready"


def test_same_file_again_is_a_duplicate_and_adds_nothing(bench: Workbench, manual: bytes) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    ingestor = Ingestor(bench)
    first = ingestor.ingest_bytes(ws, manual, "a.pdf")
    before = all_chunks(bench, "demo")["ids"]
    again = ingestor.ingest_bytes(ws, manual, "renamed copy.pdf")
    assert again.status == "duplicate"
    assert again.doc_id == first.doc_id
    assert all_chunks(bench, "demo")["ids"] == before
    assert len(bench.documents("demo")) == 1


def test_failure_mid_ingest_leaves_nothing_behind(
    bench: Workbench, manual: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    monkeypatch.setattr(bench.store, "batch_size", 2)  # several writes, so some land
    real_upsert = Collection.upsert
    calls = {"n": 0}

    def failing_upsert(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real_upsert(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "upsert", failing_upsert)
    report = Ingestor(bench).ingest_bytes(ws, manual, "manual.pdf")
    assert report.status == "failed"
    assert "disk full" in report.error
    assert calls["n"] == 3
    assert all_chunks(bench, "demo")["ids"] == []
    assert bench.registry.list_documents("demo", status=None) == []
    assert not bench.file_path(report.doc_id).exists()

    monkeypatch.setattr(Collection, "upsert", real_upsert)
    retry = Ingestor(bench).ingest_bytes(ws, manual, "manual.pdf")
    assert retry.status == "ingested"


def test_chunks_are_invisible_until_the_document_is_complete(
    bench: Workbench, manual: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    embedder = bench.embedder(ws.embed_model)
    seen_during_ingest: list[int] = []

    def spy_visible(embed_model, ids):
        query = embedder.embed_query("hydraulic pump")
        seen_during_ingest.append(len(bench.store.query(embed_model, ws.id, query, 10)))
        raise RuntimeError("crash before publishing")

    monkeypatch.setattr(bench.store, "make_visible", spy_visible)
    report = Ingestor(bench).ingest_bytes(ws, manual, "manual.pdf")
    assert report.status == "failed"
    assert seen_during_ingest == [0]
    assert bench.store.count(ws.embed_model, ws.id, visible_only=False) == 0


def test_workspaces_never_see_each_others_chunks(bench: Workbench, manual: bytes) -> None:
    ingestor = Ingestor(bench)
    alpha = bench.create_workspace("alpha", "wordllama")
    beta = bench.create_workspace("beta", "wordllama")
    other = make_pdf([filler("volcanic basalt", 300)])
    assert ingestor.ingest_bytes(alpha, manual, "manual.pdf").status == "ingested"
    # beta holds the best match for the query and the same manual under its own ids
    assert ingestor.ingest_bytes(beta, other, "basalt.pdf").status == "ingested"
    assert ingestor.ingest_bytes(beta, manual, "manual.pdf").status == "ingested"

    query = bench.embedder("wordllama").embed_query("volcanic basalt")
    for ws in (alpha, beta):
        hits = bench.store.query(ws.embed_model, ws.id, query, 50)
        assert hits
        assert {h.metadata["workspace_id"] for h in hits} == {ws.id}
        assert all(h.chunk_id.startswith(f"{ws.id}/") for h in hits)
    alpha_files = {
        h.metadata["filename"] for h in bench.store.query("wordllama", "alpha", query, 50)
    }
    assert alpha_files == {"manual.pdf"}

    bench.delete_document("beta", doc_id_for(manual))
    assert bench.store.count("wordllama", "alpha") == len(all_chunks(bench, "alpha")["ids"]) > 0
    assert bench.file_path(doc_id_for(manual)).exists()  # alpha still holds it
    bench.delete_workspace("alpha")
    assert not bench.file_path(doc_id_for(manual)).exists()
    assert bench.store.count("wordllama", "beta") > 0


@pytest.mark.parametrize(
    ("fixture", "prefix", "phrase"),
    [
        ("encrypted.pdf", "encrypted:", "password"),
        ("corrupt.pdf", "corrupt:", "not a readable PDF"),
        ("image_only.pdf", "no text layer:", "OCR is off (MASIS_OCR_ENGINE=off)"),
    ],
)
def test_hard_pdfs_fail_alone_with_a_specific_reason(
    bench: Workbench, manual: bytes, fixture: str, prefix: str, phrase: str
) -> None:
    bench.settings.ocr_engine = "off"  # tests/test_ocr.py reads scans
    ws = bench.create_workspace("demo", "wordllama")
    ingestor = Ingestor(bench)
    bad = ingestor.ingest_bytes(ws, (FIXTURES / fixture).read_bytes(), fixture)
    good = ingestor.ingest_bytes(ws, manual, "manual.pdf")
    assert bad.status == "failed"
    assert bad.error.startswith(prefix)
    assert phrase in bad.error
    assert good.status == "ingested"
    assert {d.filename for d in bench.documents("demo")} == {"manual.pdf"}


def test_pages_without_text_are_reported_but_the_rest_is_ingested(bench: Workbench) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    data = make_pdf([filler("boiler", 120), "", filler("valve", 120)])
    report = Ingestor(bench).ingest_bytes(ws, data, "mixed.pdf")
    assert report.status == "ingested"
    # Nothing is drawn on page 2: blank, not a scan (test_hostile_inputs has the scanned case).
    assert (report.blank_pages, report.empty_pages) == ([2], [])
    assert not any("OCR" in note for note in report.notes)


def test_text_and_markdown_files_are_ingested(bench: Workbench) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    ingestor = Ingestor(bench)
    txt = ingestor.ingest_bytes(ws, filler("granary", 120).encode(), "notes.txt")
    md = ingestor.ingest_bytes(ws, ("# Title\n\n" + filler("mill", 80)).encode(), "readme.md")
    assert (txt.status, md.status) == ("ingested", "ingested")
    bogus = ingestor.ingest_bytes(ws, b"\x89PNG\r\n\x1a\n....", "photo.png")
    assert bogus.status == "failed"
    assert bogus.error.startswith("unsupported:")


def test_small_text_files_are_read_without_a_child_but_pdfs_never(
    bench: Workbench, manual: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork costs more than decoding a note; PDF bytes go to the child whatever the name."""
    from ingest import isolate

    children: list[str] = []
    real_child = isolate.ChildCall

    def counting_child(target, args, *rest):
        children.append(args[1])
        return real_child(target, args, *rest)

    monkeypatch.setattr(isolate, "ChildCall", counting_child)
    ws = bench.create_workspace("demo", "wordllama")
    ingestor = Ingestor(bench)
    assert ingestor.ingest_bytes(ws, filler("granary", 120).encode(), "notes.md").status == (
        "ingested"
    )
    binary = ingestor.ingest_bytes(ws, b"\x00\x01\x02binary", "blob.txt")
    assert binary.error is not None and binary.error.startswith("unreadable: binary content")
    assert children == []
    assert ingestor.ingest_bytes(ws, manual, "manual-renamed.txt").status == "ingested"
    assert children == ["manual-renamed.txt"]
    assert bench.registry.get_document(ws.id, doc_id_for(manual)).pages > 1


def test_a_page_of_figures_keeps_its_text_layer(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of numbers has no letters but is text, not a scan: it is kept as it is (with
    OCR off nothing else could read it); a lone page number over a picture is not text."""
    from ingest.parsing import usable_text

    monkeypatch.setenv("MASIS_OCR_ENGINE", "off")
    bench.settings.ocr_engine = "off"
    figures = "2019 4,210 3,980 1,115\n2020 4,655 4,012 1,230\n2021 5,102 4,390 1,318"
    ws = bench.create_workspace("demo", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, make_pdf([figures]), "figures.pdf")
    assert report.status == "ingested", report.error
    assert report.empty_pages == [] and report.pages == 1
    assert usable_text(figures) and not usable_text("12") and not usable_text("- 3 -")


def test_files_over_the_upload_limit_are_refused(bench: Workbench, manual: bytes) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    bench.settings.max_upload_mb = 1
    report = Ingestor(bench).ingest_bytes(ws, manual + b" " * (1024 * 1024), "big.pdf")
    assert report.status == "failed"
    assert "MASIS_MAX_UPLOAD_MB" in report.error


def test_uploaded_name_is_display_text_only(bench: Workbench, manual: bytes) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, manual, "../../etc/passwd.pdf")
    assert report.status == "ingested"
    assert report.file == "passwd.pdf"
    assert bench.file_path(report.doc_id).is_relative_to(bench.settings.files_dir)


def test_a_crashed_ingest_is_swept_on_the_next_run(bench: Workbench, manual: bytes) -> None:
    from datetime import UTC, datetime, timedelta

    ws = bench.create_workspace("demo", "wordllama")
    doc_id = doc_id_for(manual)
    assert bench.registry.claim_document(ws.id, doc_id, "manual.pdf", len(manual))
    vec = bench.embedder("wordllama").embed_documents(["orphan chunk text"])
    meta = {"workspace_id": ws.id, "doc_id": doc_id, "filename": "manual.pdf"}
    bench.store.add_chunks("wordllama", [chunk_id(ws.id, doc_id, 0)], vec, ["orphan"], [meta])
    ingestor = Ingestor(bench)
    assert ingestor.sweep_stale() == 0  # a fresh claim may be another process at work
    assert ingestor.sweep_stale(now=datetime.now(UTC) + timedelta(hours=1)) == 1
    assert bench.store.count("wordllama", ws.id, visible_only=False) == 0
    assert ingestor.ingest_bytes(ws, manual, "manual.pdf").status == "ingested"


def test_workspace_embedder_is_fixed(bench: Workbench) -> None:
    bench.create_workspace("demo", "wordllama")
    assert bench.open_workspace("demo", "auto", create=True).embed_model == "wordllama"
    with pytest.raises(EmbedderMismatch, match="created with the embedder 'wordllama'"):
        bench.open_workspace("demo", "ollama:nomic-embed-text", create=True)


def test_a_batch_parses_the_next_file_while_storing_the_current_one(
    bench: Workbench, manual: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    events: list[str] = []

    class RecordingParse(pipeline.PendingParse):
        def __init__(self, data: bytes, filename: str, timeout_s: float, ocr=None, **more) -> None:
            events.append(f"parse {filename}")
            super().__init__(data, filename, timeout_s, ocr, **more)

    real_add = bench.store.add_chunks

    def recording_add(model, ids, *args, **kwargs):
        events.append(f"store {ids[0].split('/')[1][:6]}")
        return real_add(model, ids, *args, **kwargs)

    monkeypatch.setattr(pipeline, "PendingParse", RecordingParse)
    monkeypatch.setattr(bench.store, "add_chunks", recording_add)
    other = make_pdf([filler("turbine", 300)])
    sources = [
        Source("manual.pdf", lambda: manual),
        Source("corrupt.pdf", (FIXTURES / "corrupt.pdf").read_bytes),
        Source("copy.pdf", lambda: manual),  # the same bytes again, within the batch
        Source("turbine.pdf", lambda: other),
    ]
    reports = list(Ingestor(bench).ingest_each(ws, sources))

    assert [(r.file, r.status) for r in reports] == [
        ("manual.pdf", "ingested"),
        ("corrupt.pdf", "failed"),
        ("copy.pdf", "duplicate"),
        ("turbine.pdf", "ingested"),
    ]
    manual_id, other_id = doc_id_for(manual)[:6], doc_id_for(other)[:6]
    # Each parse starts before the previous file's chunks are written.
    assert events.index("parse corrupt.pdf") < events.index(f"store {manual_id}")
    assert events.index("parse turbine.pdf") < events.index(f"store {other_id}")
    assert {d.filename for d in bench.documents("demo")} == {"manual.pdf", "turbine.pdf"}


def test_a_large_file_still_parsing_is_set_aside_while_the_files_after_it_are_stored(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """The parent stores the small file after a large one whose parse has not caught up,
    instead of waiting for it; the reports keep the batch's order."""
    import time

    from ingest import isolate

    real_parse = isolate.parse_bytes
    stored_small = tmp_path / "small-stored"

    def parse_after_small(data: bytes, filename: str, *rest):
        if filename == "large.pdf":  # a long parse: it ends once the small file is stored
            for _ in range(400):
                if stored_small.exists():
                    break
                time.sleep(0.05)
        return real_parse(data, filename, *rest)

    order: list[str] = []
    real_add = bench.store.add_chunks

    def recording_add(model, ids, *args, **kwargs):
        real_add(model, ids, *args, **kwargs)
        order.append(ids[0].split("/")[1])
        if len(order) == 1:
            stored_small.touch()

    monkeypatch.setattr(isolate, "parse_bytes", parse_after_small)
    monkeypatch.setattr(pipeline, "ASIDE_BYTES", 1)  # both files count as large
    monkeypatch.setattr(bench.store, "add_chunks", recording_add)
    ws = bench.create_workspace("demo", "wordllama")
    large, small = make_pdf([filler("turbine", 300)]), make_pdf([filler("gearbox", 200)])
    sources = [Source.of_bytes("large.pdf", large), Source.of_bytes("small.pdf", small)]
    reports = list(Ingestor(bench).ingest_each(ws, sources))

    assert [(r.file, r.status) for r in reports] == [
        ("large.pdf", "ingested"),
        ("small.pdf", "ingested"),
    ]
    assert order == [doc_id_for(small), doc_id_for(large)]


def test_a_batch_cancelled_while_a_file_is_aside_stops_its_parser_and_keeps_order(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large file aside whose parse never ends, a corrupt PDF and a small file after it: the
    corrupt one fails alone, the small one is stored with the keyword rows its parse child
    made, and a cancel then reports the file aside cancelled and stops its child."""
    import multiprocessing
    import threading

    from ingest import isolate
    from masis_core.retrieval.bm25 import chunk_words, tokenize

    real_parse = isolate.parse_bytes

    def parse_or_hang(data: bytes, filename: str, *rest):
        if filename == "large.pdf":
            threading.Event().wait()
        return real_parse(data, filename, *rest)

    stop = False
    children_at_stop: list[int] = []
    real_add = bench.store.add_chunks

    def add_then_stop(*args, **kwargs):
        nonlocal stop
        real_add(*args, **kwargs)
        children_at_stop.append(len(multiprocessing.active_children()))
        stop = True

    monkeypatch.setattr(isolate, "parse_bytes", parse_or_hang)
    monkeypatch.setattr(pipeline, "ASIDE_BYTES", 1)
    monkeypatch.setattr(bench.store, "add_chunks", add_then_stop)
    bench.settings.parse_timeout_s = 60  # a batch that missed the cancel ends, as a timeout
    ws = bench.create_workspace("demo", "wordllama")
    sources = [
        Source.of_bytes("large.pdf", make_pdf([filler("turbine", 300)])),
        Source.of_bytes("corrupt.pdf", (FIXTURES / "corrupt.pdf").read_bytes()),
        Source.of_bytes("small.pdf", make_pdf([filler("gearbox", 200)])),
    ]
    reports = list(Ingestor(bench).ingest_each(ws, sources, cancelled=lambda: stop))

    assert [(r.file, r.status, (r.error or "").split(":")[0]) for r in reports] == [
        ("large.pdf", "failed", "cancelled"),
        ("corrupt.pdf", "failed", "corrupt"),
        ("small.pdf", "ingested", ""),
    ]
    assert children_at_stop == [1]  # the large file's parser, still running when stopped
    assert multiprocessing.active_children() == []
    assert [d.filename for d in bench.documents("demo")] == ["small.pdf"]
    stored = bench.store.collection(ws.embed_model, ws.id).get(include=["documents"])
    texts = dict(zip(stored["ids"], stored["documents"], strict=True))
    with bench.bm25._conn() as conn:
        rows = conn.execute(
            "SELECT chunk_id, tokens, words FROM bm25_chunks WHERE workspace_id = ?", (ws.id,)
        ).fetchall()
    assert len(rows) == len(texts) > 0
    for cid, tokens, words in rows:  # made in the parse child, as the parent makes them
        assert (tokens, words) == (" ".join(tokenize(texts[cid])), chunk_words(texts[cid]))


def test_a_parser_that_cannot_start_fails_its_own_file_only(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No fork for b.pdf's parse, started while a.pdf is stored: b.pdf fails, a and c are
    stored (the failure once ended a.pdf's store)."""
    from ingest import isolate

    real_call = isolate.ChildCall

    def no_fork_for_b(target, args, *rest, **kwargs):
        if args[1] == "b.pdf":
            raise OSError(11, "Resource temporarily unavailable")
        return real_call(target, args, *rest, **kwargs)

    monkeypatch.setattr(isolate, "ChildCall", no_fork_for_b)
    ws = bench.create_workspace("demo", "wordllama")
    sources = [Source.of_bytes(f"{n}.pdf", make_pdf([filler(n, 200)])) for n in "abc"]
    reports = list(Ingestor(bench).ingest_each(ws, sources))

    assert [(r.file, r.status) for r in reports] == [
        ("a.pdf", "ingested"),
        ("b.pdf", "failed"),
        ("c.pdf", "ingested"),
    ]
    assert reports[1].error.startswith("busy: the parser could not start ([Errno 11]")
    assert {d.filename for d in bench.documents("demo")} == {"a.pdf", "c.pdf"}


def test_an_abandoned_batch_leaves_no_parser_running(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing
    import threading

    from ingest import isolate

    real_parse = isolate.parse_bytes

    def parse_or_hang(data: bytes, filename: str, *ocr_and_progress):
        if filename == "b.pdf":  # a parser stuck on a hostile file
            threading.Event().wait()
        return real_parse(data, filename, *ocr_and_progress)

    monkeypatch.setattr(isolate, "parse_bytes", parse_or_hang)
    ws = bench.create_workspace("demo", "wordllama")
    sources = [Source(f"{n}.pdf", lambda n=n: make_pdf([filler(n, 200)])) for n in "abc"]
    batch = Ingestor(bench).ingest_each(ws, sources)
    assert next(batch).status == "ingested"
    assert len(multiprocessing.active_children()) == 1  # b.pdf, parsed ahead
    batch.close()
    assert multiprocessing.active_children() == []
    assert [d.filename for d in bench.documents("demo")] == ["a.pdf"]


def test_a_parse_that_hangs_without_ocr_does_not_blame_ocr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The time-out message names OCR's per-page allowance only when OCR ran."""
    import threading

    from ingest import isolate
    from ingest.ocr import OcrOptions

    monkeypatch.setattr(isolate, "parse_bytes", lambda *_: threading.Event().wait())
    pending = isolate.PendingParse(make_pdf(["x"]), "stuck.pdf", 0.5, OcrOptions("auto"))
    with pytest.raises(DocumentError) as err:
        pending.result()
    assert str(err.value).startswith("timeout: reading the file took longer than 0.5 s")
    assert "OCR" not in str(err.value)
