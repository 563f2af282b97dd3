"""Ollama mode through a fake Ollama server on loopback and the real clients."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ingest.pipeline import Ingestor
from masis_core.answers.providers import resolve_provider
from masis_core.config import Settings
from masis_core.errors import ModelMissing, ProviderUnavailable
from masis_core.llm.embeddings import NOMIC, WORDLLAMA, OllamaEmbedder, resolve_embedder_name
from masis_core.llm.ollama import chat_model, probe
from masis_core.workspaces.workbench import Workbench
from tests.conftest import DEAD_HOST
from tests.fake_ollama import FakeOllama, FakeOllamaState
from tests.pdfs import filler, make_pdf


def test_embedder_sends_task_prefixes_and_batches(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder("nomic-embed-text", host=fake_ollama.url)
    docs = [f"document number {i}" for i in range(70)]
    vectors = embedder.embed_documents(docs)
    query = embedder.embed_query("which document?")

    calls = fake_ollama.requests_to("/api/embed")
    assert [len(c["input"]) for c in calls] == [64, 6, 1]
    assert all(t.startswith("search_document: ") for c in calls[:2] for t in c["input"])
    assert calls[2]["input"] == ["search_query: which document?"]
    assert vectors.shape == (70, 64)
    assert query.shape == (64,)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # A retrieval's variants go in one request, each embedded as its own query.
    variants = embedder.embed_queries(["which document?", "what file?", "which page?"])
    assert fake_ollama.requests_to("/api/embed")[3]["input"] == [
        "search_query: which document?",
        "search_query: what file?",
        "search_query: which page?",
    ]
    assert np.allclose(variants[0], query)


def test_missing_model_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.state.models = ["llama3:latest"]
    embedder = OllamaEmbedder("nomic-embed-text", host=fake_ollama.url)
    with pytest.raises(ModelMissing, match="ollama pull nomic-embed-text"):
        embedder.embed_query("anything")


def test_server_down_is_a_clear_error() -> None:
    embedder = OllamaEmbedder("nomic-embed-text", host=DEAD_HOST)
    with pytest.raises(ProviderUnavailable, match="not reachable"):
        embedder.embed_documents(["text"])


def test_slow_server_times_out_with_a_clear_error() -> None:
    state = FakeOllamaState(hang=threading.Event())
    with FakeOllama(state) as fake:
        embedder = OllamaEmbedder("nomic-embed-text", host=fake.url, timeout=0.2)
        with pytest.raises(ProviderUnavailable, match="did not answer in time"):
            embedder.embed_query("anything")
        status = probe(fake.url, timeout=0.2)
    assert not status.reachable
    assert "no answer within" in status.error


def test_probe_lists_models_and_says_what_to_run(fake_ollama: FakeOllama) -> None:
    fake_ollama.state.models = ["nomic-embed-text:latest"]
    status = probe(fake_ollama.url)
    assert status.reachable
    assert status.has("nomic-embed-text")
    assert not status.has("llama3")
    assert "ollama pull llama3" in status.why_not("llama3")
    down = probe(DEAD_HOST)
    assert not down.reachable
    assert "ollama serve" in down.why_not("llama3")


def test_auto_picks_ollama_only_when_it_has_the_model(fake_ollama: FakeOllama) -> None:
    settings = Settings(provider="auto", ollama_host=fake_ollama.url)
    assert resolve_provider(settings).mode == "ollama"
    assert resolve_provider(settings).label == "Ollama · llama3.1:8b"
    assert resolve_embedder_name("auto", settings) == NOMIC

    fake_ollama.state.models = ["tinyllama:latest"]
    offline = resolve_provider(settings)
    assert offline.mode == "offline"
    assert "ollama pull llama3.1:8b" in offline.reason
    assert resolve_embedder_name("auto", settings) == WORDLLAMA

    down = resolve_provider(Settings(provider="auto", ollama_host=DEAD_HOST))
    assert down.mode == "offline"
    assert down.label == "Offline extractive mode"
    assert down.enable_commands == ["ollama pull llama3.1:8b", "ollama pull nomic-embed-text"]

    forced = resolve_provider(Settings(provider="ollama", ollama_host=DEAD_HOST))
    assert (forced.mode, forced.ready) == ("ollama", False)


def test_chat_model_factory_asks_for_a_large_context(fake_ollama: FakeOllama) -> None:
    fake_ollama.state.chat_replies = ["Hello from the fake."]
    model = chat_model(Settings(ollama_host=fake_ollama.url))
    assert model.invoke("hi").content == "Hello from the fake."
    body = fake_ollama.requests_to("/api/chat")[0]
    assert body["model"] == "llama3.1:8b"
    assert body["options"]["num_ctx"] >= 8192
    assert body["options"]["temperature"] == 0


def test_a_workspace_is_made_for_an_ollama_embedder_only_when_ollama_has_it(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    settings.ollama_host = fake_ollama.url
    bench = Workbench(settings)
    with pytest.raises(ProviderUnavailable, match="does not have the model 'mxbai-embed-large'"):
        bench.create_workspace("other", "mxbai-embed-large")
    assert bench.workspaces() == []
    assert bench.create_workspace("nomic", "nomic-embed-text").embed_model == NOMIC


def test_with_provider_offline_auto_never_picks_an_ollama_embedder(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    """The sidebar says Ollama is not used even when it runs: a new workspace's "auto"
    embedder had still become nomic-embed-text, embedding every upload through Ollama."""
    settings.ollama_host = fake_ollama.url
    assert settings.provider == "offline" and fake_ollama.state.has("nomic-embed-text")
    assert Workbench(settings).create_workspace("notes", "auto").embed_model == WORDLLAMA
    assert fake_ollama.state.requests == []  # Ollama was not even asked


def test_ingest_into_a_nomic_workspace_through_ollama(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    settings.ollama_host, settings.provider = fake_ollama.url, "auto"
    bench = Workbench(settings)
    ws = bench.create_workspace("nomic", "auto")
    assert ws.embed_model == NOMIC
    assert len(fake_ollama.requests_to("/api/tags")) == 1  # one look at Ollama, not two
    report = Ingestor(bench).ingest_bytes(ws, make_pdf([filler("turbine", 300)]), "t.pdf")
    assert report.status == "ingested", report.error
    assert bench.store.count(NOMIC, "nomic") == report.chunks

    fake_ollama.state.models = []  # the model was removed: the file fails alone, nothing stays
    failed = Ingestor(bench).ingest_bytes(ws, make_pdf([filler("boiler", 300)]), "b.pdf")
    assert failed.status == "failed"
    assert "ollama pull nomic-embed-text" in failed.error
    assert bench.store.count(NOMIC, "nomic", visible_only=False) == report.chunks
