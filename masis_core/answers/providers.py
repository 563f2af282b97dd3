"""Which answer engine is active (Ollama or offline extractive), why, and how to switch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from masis_core.answers.engine import Engine, OfflineEngine
from masis_core.config import Settings
from masis_core.llm.embeddings import NOMIC
from masis_core.llm.ollama import OllamaStatus, probe, pull_hint

OFFLINE_LABEL = "Offline extractive mode"


@dataclass(frozen=True)
class ProviderStatus:
    mode: Literal["ollama", "offline"]
    ready: bool
    reason: str
    ollama: OllamaStatus | None
    chat_model: str

    @property
    def label(self) -> str:
        return f"Ollama · {self.chat_model}" if self.mode == "ollama" else OFFLINE_LABEL

    @property
    def enable_commands(self) -> list[str]:
        """What an analyst runs to get Ollama mode."""
        return [pull_hint(self.chat_model), pull_hint(NOMIC.split(":", 1)[1])]


def resolve_provider(settings: Settings, status: OllamaStatus | None = None) -> ProviderStatus:
    """``auto`` picks Ollama only when it answers and has the chat model."""
    if settings.provider == "offline":
        return ProviderStatus(
            "offline", True, "MASIS_PROVIDER=offline was set.", None, settings.chat_model
        )
    status = status or probe(settings.ollama_host)
    problem = status.why_not(settings.chat_model)
    if settings.provider == "ollama":
        reason = problem or f"MASIS_PROVIDER=ollama; {settings.chat_model} is available."
        return ProviderStatus("ollama", problem is None, reason, status, settings.chat_model)
    if problem is None:
        reason = f"Ollama answers at {status.host} with {settings.chat_model}."
        return ProviderStatus("ollama", True, reason, status, settings.chat_model)
    return ProviderStatus("offline", True, problem, status, settings.chat_model)


def make_engine(settings: Settings, name: str) -> Engine:
    """The answer engine a run was started with (its name is recorded with the run)."""
    if name == "ollama":
        from masis_core.answers.ollama_engine import OllamaEngine  # langchain only when used

        return OllamaEngine(settings)
    return OfflineEngine()
