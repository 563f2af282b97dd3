"""Talking to Ollama: the status probe, error translation and the chat-model factory."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import httpx
import ollama

from masis_core.config import ollama_url
from masis_core.errors import ModelMissing, ProviderError, ProviderUnavailable

if TYPE_CHECKING:
    from langchain_ollama import ChatOllama

    from masis_core.config import Settings

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.0
SHOW_TIMEOUT_S = 30.0  # /api/show reads the model's file header, not the model
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
    host = ollama_url(host)
    url = host + "/api/tags"
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
        raise _refusal(exc, host, model) from exc
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


def _refusal(exc: ollama.ResponseError, host: str, model: str) -> ProviderError:
    """What an error reply of the server means: a missing model, a full queue (503, Ollama's
    ``OLLAMA_MAX_QUEUE``), an error line in the middle of a stream (the client's status -1,
    which had read "HTTP -1"), or a refusal with the server's own words."""
    said = str(exc.error).splitlines()[0][:300] if exc.error else type(exc).__name__
    if exc.status_code == 404:
        return ModelMissing(f"Ollama at {host} has no model '{model}'. Run `{pull_hint(model)}`.")
    if exc.status_code == 503:
        return ProviderUnavailable(
            f"The Ollama server at {host} is busy (queue full): other requests are waiting "
            f"for '{model}'. Try again when they finish, or raise OLLAMA_NUM_PARALLEL or "
            f"OLLAMA_MAX_QUEUE where Ollama runs (server said: {said})."
        )
    if exc.status_code == -1:
        return ProviderError(f"Ollama at {host} stopped answering for '{model}': {said}")
    return ProviderError(
        f"Ollama at {host} refused the request for '{model}' (HTTP {exc.status_code}): {said}"
    )


def timeouts(settings: Settings) -> httpx.Timeout:
    """A short connect and a long read: a cold load of a large model counts in the read."""
    return httpx.Timeout(settings.ollama_timeout_s, connect=settings.ollama_connect_timeout_s)


def keep_alive(settings: Settings) -> int | str:
    """Ollama reads a number as seconds (negative: stay loaded) and a string as a Go
    duration; ``"-1"`` as a string would be refused, so numbers go as numbers."""
    try:
        return int(settings.ollama_keep_alive)
    except ValueError:
        return settings.ollama_keep_alive


def think_value(settings: Settings, model: str) -> bool | str:
    """``think`` for a request: Ollama 0.12.4+ thinks when it is left out. gpt-oss cannot
    stop thinking, so ``false`` asks it for the least."""
    wanted = settings.ollama_think
    value: bool | str = wanted == "true" if wanted in ("true", "false") else wanted
    if value is False and _base(model) == "gpt-oss":
        return "low"
    return value


def _base(model: str) -> str:
    return model.split(":", 1)[0].rsplit("/", 1)[-1]


# Chat models auto mode takes when the configured one is not installed, best first
# (Ollama's recommended local models in 2026, then older families that follow a schema).
PREFERRED_CHAT_MODELS = (
    "llama3.1", "qwen3.5", "gemma4", "qwen3", "gemma3", "mistral-small3.2",
    "llama3.2", "mistral", "llama3",
)  # fmt: skip
FALLBACK_CTX = 8192


def choose_chat_model(settings: Settings, status: OllamaStatus) -> str:
    """The configured model; when it was left at the default and is not installed, the
    first installed model of ``PREFERRED_CHAT_MODELS`` (the default if there is none)."""
    wanted = settings.chat_model
    if "chat_model" in settings.model_fields_set or status.has(wanted):
        return wanted
    for family in PREFERRED_CHAT_MODELS:
        found = sorted(m for m in status.models if _base(m) == family)
        if found:
            return found[0]
    return wanted


@dataclass(frozen=True)
class ModelFacts:
    """What ``/api/show`` says of a model; ``present`` is False when the server said 404."""

    present: bool = True
    context_length: int | None = None
    thinks: bool = False


def model_facts(settings: Settings, model: str) -> ModelFacts:
    """The trained window and whether it thinks. Never raises: a missing model is
    ``present=False``, a server that cannot say is no facts (the defaults then apply)."""
    quick = httpx.Timeout(
        min(settings.ollama_timeout_s, SHOW_TIMEOUT_S), connect=settings.ollama_connect_timeout_s
    )
    client = ollama.Client(host=settings.ollama_host, timeout=quick)
    try:
        shown = client.show(model)
    except ollama.ResponseError as exc:
        return ModelFacts(present=exc.status_code != 404)
    except (httpx.HTTPError, ConnectionError, ValueError) as exc:
        log.warning("could not read %s's facts from Ollama: %s", model, _short(exc))
        return ModelFacts()
    info = dict(shown.modelinfo or {})
    lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
    return ModelFacts(
        True, lengths[0] if lengths else None, "thinking" in (shown.capabilities or [])
    )


def context_window(settings: Settings, facts: ModelFacts) -> int:
    """``num_ctx`` for a model: the setting, else the model's trained window, within
    ``MASIS_OLLAMA_MAX_CTX``; never above the trained window, which Ollama clamps to."""
    trained = facts.context_length or None
    wanted = settings.ollama_num_ctx or min(trained or FALLBACK_CTX, settings.ollama_max_ctx)
    return min(wanted, trained) if trained else wanted


def warm(settings: Settings, model: str) -> str | None:
    """Load the model before the first real call (a chat request without messages answers
    ``done_reason: "load"`` once it is in memory) and keep it loaded for ``keep_alive``."""
    client = ollama.Client(host=settings.ollama_host, timeout=timeouts(settings))
    reply = call_ollama(
        lambda: client.chat(model=model, messages=[], keep_alive=keep_alive(settings)),
        host=settings.ollama_host,
        model=model,
    )
    return reply.done_reason


def chat_model(
    settings: Settings,
    *,
    model: str | None = None,
    num_ctx: int | None = None,
    temperature: float = 0.0,
) -> ChatOllama:
    """The chat model every LLM node uses: its window, no thinking unless asked
    (``MASIS_OLLAMA_THINK``), kept loaded, with a short connect and a long read timeout."""
    from langchain_ollama import ChatOllama

    name = model or settings.chat_model
    return ChatOllama(
        model=name,
        base_url=settings.ollama_host,
        temperature=temperature,
        num_ctx=num_ctx or settings.ollama_num_ctx or FALLBACK_CTX,
        reasoning=think_value(settings, name),
        keep_alive=keep_alive(settings),
        client_kwargs={"timeout": timeouts(settings)},
    )
