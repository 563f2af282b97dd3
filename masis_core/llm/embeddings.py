"""Embedders: bundled WordLlama (offline) and Ollama models such as ``nomic-embed-text``.

An embedder is named by a canonical id that is recorded with each workspace:
``wordllama`` or ``ollama:<model>``. Queries always embed with the workspace's id.
"""

from __future__ import annotations

import logging
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import httpx
import numpy as np

from masis_core.errors import ConfigError, MalformedOutput
from masis_core.llm.ollama import OllamaStatus, call_ollama, probe, timeouts

if TYPE_CHECKING:
    from masis_core.config import Settings

log = logging.getLogger(__name__)

WORDLLAMA = "wordllama"
NOMIC = "ollama:nomic-embed-text"
WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256
OLLAMA_BATCH = 64

# Models trained with task prefixes (document, query); without them retrieval quality drops.
TASK_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),  # v1 and v1.5
    "nomic-embed-text-v2-moe": ("search_document: ", "search_query: "),
    "embeddinggemma": ("title: none | text: ", "task: search result | query: "),
}
# nomic-embed-text reads 2,048 tokens; Ollama 0.13.5 to 0.15.6 refused a longer input (and
# with it the batch, so the file), later versions cut it silently. Inputs are cut here, with
# a record, at an estimate that errs long: a CJK character a token, other text 3 a token.
MAX_EMBED_TOKENS = 1800
CHARS_PER_TOKEN = 3


def token_estimate(text: str) -> float:
    wide = sum(1 for c in text if ord(c) >= 0x2E80)  # CJK and beyond: about one token each
    return wide + (len(text) - wide) / CHARS_PER_TOKEN


def capped(text: str, limit: int = MAX_EMBED_TOKENS) -> str:
    """``text`` cut to about ``limit`` tokens (unchanged when it fits)."""
    if len(text) <= limit or token_estimate(text) <= limit:
        return text
    lo, hi = 0, len(text)  # the longest prefix that fits: the estimate grows with length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if token_estimate(text[:mid]) <= limit else (lo, mid - 1)
    return text[:lo]


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

    def __init__(self, model: str, host: str, timeout: float | httpx.Timeout = 300.0) -> None:
        import ollama

        self.model = model
        self.name = f"ollama:{model}"
        self.host = host
        self._client = ollama.Client(host=host, timeout=timeout)
        base = model.split(":", 1)[0].rsplit("/", 1)[-1]
        self._doc_prefix, self._query_prefix = TASK_PREFIXES.get(base, ("", ""))
        self.cut = 0  # inputs cut to the model's window so far

    def _embed(self, texts: list[str]) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), OLLAMA_BATCH):
            batch = [
                self._capped(t, start + i)
                for i, t in enumerate(texts[start : start + OLLAMA_BATCH])
            ]
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

    def _capped(self, text: str, index: int) -> str:
        kept = capped(text)
        if kept is not text:
            self.cut += 1
            log.warning(
                "embedding input %d cut to about %d tokens for %s (%d of %d characters kept)",
                index,
                MAX_EMBED_TOKENS,
                self.model,
                len(kept),
                len(text),
            )
        return kept

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([self._doc_prefix + t for t in texts])

    def cut_count(self, texts: list[str]) -> int:
        """How many of these documents the model reads only in part (its window)."""
        return sum(1 for t in texts if capped(self._doc_prefix + t) != self._doc_prefix + t)

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
        name.split(":", 1)[1], host=settings.ollama_host, timeout=timeouts(settings)
    )
