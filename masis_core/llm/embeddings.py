"""Embedders: bundled WordLlama (offline) and Ollama models such as ``nomic-embed-text``.

An embedder is named by a canonical id that is recorded with each workspace:
``wordllama`` or ``ollama:<model>``. Queries always embed with the workspace's id.
"""

from __future__ import annotations

import logging
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from masis_core.errors import ConfigError, MalformedOutput
from masis_core.llm.ollama import OllamaStatus, call_ollama, probe

if TYPE_CHECKING:
    from masis_core.config import Settings

log = logging.getLogger(__name__)

WORDLLAMA = "wordllama"
NOMIC = "ollama:nomic-embed-text"
WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256
OLLAMA_BATCH = 64

# nomic-embed-text was trained with task prefixes; without them retrieval quality drops.
TASK_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),
}


class Embedder(Protocol):
    name: str

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries in one call: a retrieval's variants (one HTTP request to Ollama
        instead of three)."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


@lru_cache(maxsize=1)
def _load_wordllama():
    import wordllama
    from wordllama import WordLlama

    # The weights ship inside the wheel; disable_download keeps a missing file from
    # turning into a network call.
    package_dir = Path(wordllama.__file__).parent
    return WordLlama.load(
        config=WORDLLAMA_CONFIG,
        dim=WORDLLAMA_DIM,
        cache_dir=package_dir,
        disable_download=True,
    )


class WordLlamaEmbedder:
    """Static token embeddings: fast on a CPU, no server, modest quality."""

    name = WORDLLAMA
    dim = WORDLLAMA_DIM

    def __init__(self) -> None:
        self._model = _load_wordllama()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.asarray(self._model.embed(texts, norm=False), dtype=np.float32))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_documents(texts)


class OllamaEmbedder:
    """An Ollama embedding model through ``/api/embed``, in batches, with task prefixes."""

    def __init__(self, model: str, host: str, timeout: float = 120.0) -> None:
        import ollama

        self.model = model
        self.name = f"ollama:{model}"
        self.host = host
        self._client = ollama.Client(host=host, timeout=timeout)
        base = model.split(":", 1)[0]
        self._doc_prefix, self._query_prefix = TASK_PREFIXES.get(base, ("", ""))

    def _embed(self, texts: list[str]) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), OLLAMA_BATCH):
            batch = texts[start : start + OLLAMA_BATCH]
            resp = call_ollama(
                partial(self._client.embed, model=self.model, input=batch),
                host=self.host,
                model=self.model,
            )
            vectors = list(resp.embeddings or [])
            if len(vectors) != len(batch):
                raise MalformedOutput(
                    f"Ollama returned {len(vectors)} embeddings for {len(batch)} texts "
                    f"from '{self.model}'."
                )
            out.extend(list(v) for v in vectors)
        if not out:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(np.asarray(out, dtype=np.float32))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([self._doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed([self._query_prefix + t for t in texts])


def canonical_name(choice: str) -> str:
    """Map user spellings (``nomic-embed-text``, ``ollama:nomic-embed-text``) to one id."""
    choice = choice.strip()
    if choice in ("", "auto"):
        return "auto"
    if choice == WORDLLAMA:
        return WORDLLAMA
    if choice.startswith("ollama:"):
        model = choice.split(":", 1)[1]
        if not model:
            raise ConfigError(
                "An Ollama embedder needs a model name, e.g. ollama:nomic-embed-text."
            )
        return choice
    return f"ollama:{choice}"


def resolve_embedder_name(
    choice: str, settings: Settings, status: OllamaStatus | None = None
) -> str:
    """``auto`` means nomic-embed-text when Ollama has it, else the bundled WordLlama; with
    MASIS_PROVIDER=offline always WordLlama ("Ollama is not used even when it runs")."""
    name = canonical_name(choice)
    if name != "auto":
        return name
    if settings.provider == "offline":
        return WORDLLAMA
    status = status or probe(settings.ollama_host)
    return NOMIC if status.has(NOMIC.split(":", 1)[1]) else WORDLLAMA


def get_embedder(name: str, settings: Settings) -> Embedder:
    name = canonical_name(name)
    if name == "auto":
        name = resolve_embedder_name(name, settings)
    if name == WORDLLAMA:
        return WordLlamaEmbedder()
    return OllamaEmbedder(
        name.split(":", 1)[1], host=settings.ollama_host, timeout=settings.ollama_timeout_s
    )
