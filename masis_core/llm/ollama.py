"""Talking to Ollama: the status probe, error translation and the chat-model factory."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import httpx
import ollama

from masis_core.errors import ModelMissing, ProviderError, ProviderUnavailable

if TYPE_CHECKING:
    from langchain_ollama import ChatOllama

    from masis_core.config import Settings

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.0
T = TypeVar("T")


def model_present(wanted: str, available: list[str]) -> bool:
    """Ollama names carry a tag (``llama3:latest``); an untagged request means ``:latest``."""
    wanted_full = wanted if ":" in wanted else f"{wanted}:latest"
    return wanted in available or wanted_full in available


def pull_hint(model: str) -> str:
    return f"ollama pull {model}"


@dataclass(frozen=True)
class OllamaStatus:
    """What the probe learned; ``reason`` is a sentence for the analyst."""

    host: str
    reachable: bool
    models: list[str] = field(default_factory=list)
    error: str | None = None

    def has(self, model: str) -> bool:
        return self.reachable and model_present(model, self.models)

    def why_not(self, model: str) -> str | None:
        """None when ``model`` is usable, else why not and what to run."""
        if not self.reachable:
            return (
                f"Ollama is not reachable at {self.host} ({self.error}). "
                f"Start it with `ollama serve` and run `{pull_hint(model)}`, "
                "or set OLLAMA_HOST to where it runs."
            )
        if not self.has(model):
            listed = ", ".join(self.models) or "none"
            return (
                f"Ollama at {self.host} does not have the model '{model}' "
                f"(installed: {listed}). Run `{pull_hint(model)}`."
            )
        return None


def probe(host: str, timeout: float = PROBE_TIMEOUT_S) -> OllamaStatus:
    """GET /api/tags with a short timeout; never raises."""
    url = host.rstrip("/") + "/api/tags"
    try:
        resp = httpx.get(url, timeout=timeout)
        resp.raise_for_status()
        models = [m.get("name") or m.get("model", "") for m in resp.json().get("models", [])]
    except httpx.TimeoutException:
        return OllamaStatus(host, False, error=f"no answer within {timeout:g} s")
    except httpx.HTTPStatusError as exc:
        return OllamaStatus(host, False, error=f"HTTP {exc.response.status_code} from /api/tags")
    except httpx.HTTPError as exc:
        return OllamaStatus(host, False, error=_short(exc))
    except ValueError:
        return OllamaStatus(host, False, error="/api/tags did not return JSON")
    return OllamaStatus(host, True, models=[m for m in models if m])


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def call_ollama(fn: Callable[[], T], *, host: str, model: str) -> T:
    """Run one Ollama call, turning transport and API failures into our error tree."""
    try:
        return fn()
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            raise ModelMissing(
                f"Ollama at {host} has no model '{model}'. Run `{pull_hint(model)}`."
            ) from exc
        raise ProviderError(
            f"Ollama at {host} refused the request for '{model}' "
            f"(HTTP {exc.status_code}): {_short(exc)}"
        ) from exc
    except (ConnectionError, httpx.ConnectError) as exc:
        raise ProviderUnavailable(
            f"Ollama is not reachable at {host}. Start it with `ollama serve` "
            "or set OLLAMA_HOST to where it runs."
        ) from exc
    except httpx.TimeoutException as exc:
        raise ProviderUnavailable(
            f"Ollama at {host} did not answer in time for '{model}' "
            "(raise MASIS_OLLAMA_TIMEOUT_S for large models on slow machines)."
        ) from exc
    except httpx.HTTPError as exc:
        raise ProviderUnavailable(f"Ollama at {host} failed: {_short(exc)}") from exc


def chat_model(settings: Settings, *, temperature: float = 0.0) -> ChatOllama:
    """The chat model every LLM node uses; ``num_ctx`` ≥ 8192 so evidence is not truncated."""
    from langchain_ollama import ChatOllama

    return ChatOllama(
        model=settings.chat_model,
        base_url=settings.ollama_host,
        temperature=temperature,
        num_ctx=settings.ollama_num_ctx,
        client_kwargs={"timeout": settings.ollama_timeout_s},
    )
