"""Which answer engine is active (Ollama or offline extractive), why, and how to switch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from masis_core.answers.engine import Engine, OfflineEngine
from masis_core.config import Settings
from masis_core.llm.embeddings import NOMIC
from masis_core.llm.ollama import OllamaStatus, choose_chat_model, probe, pull_hint

OFFLINE_LABEL = "Offline extractive mode"
# The restart that lets ``auto`` pick Ollama once it runs with the models.
RESTART_AUTO = "MASIS_PROVIDER=auto streamlit run app.py"


@dataclass(frozen=True)
class ProviderStatus:
    mode: Literal["ollama", "offline"]
    ready: bool
    reason: str
    ollama: OllamaStatus | None
    chat_model: str
    forced_offline: bool = False  # MASIS_PROVIDER=offline: pulling models changes nothing

    @property
    def label(self) -> str:
        return f"Ollama · {self.chat_model}" if self.mode == "ollama" else OFFLINE_LABEL

    @property
    def enable_commands(self) -> list[str]:
        """What an analyst runs to get Ollama mode; when offline was chosen by setting, the
        restart without it too."""
        pulls = [pull_hint(self.chat_model), pull_hint(NOMIC.split(":", 1)[1])]
        return [*pulls, RESTART_AUTO] if self.forced_offline else pulls


def resolve_provider(settings: Settings, status: OllamaStatus | None = None) -> ProviderStatus:
    """``auto`` picks Ollama only when it answers and has the chat model (the configured one,
    or when that was left at its default, the first installed of a preference list)."""
    if settings.provider == "offline":
        return ProviderStatus(
            "offline",
            True,
            "MASIS_PROVIDER=offline was set, so Ollama is not used even when it runs.",
            None,
            settings.chat_model,
            forced_offline=True,
        )
    status = status or probe(settings.ollama_host)
    model = choose_chat_model(settings, status)
    problem = status.why_not(model)
    if settings.provider == "ollama":
        reason = problem or f"MASIS_PROVIDER=ollama; {model} is available."
        return ProviderStatus("ollama", problem is None, reason, status, model)
    if problem is None:
        reason = f"Ollama answers at {status.host} with {model}."
        if model != settings.chat_model:
            reason += (
                f" The default {settings.chat_model} is not installed; {model} is the first "
                "installed of the recommended models (MASIS_CHAT_MODEL names another)."
            )
        return ProviderStatus("ollama", True, reason, status, model)
    return ProviderStatus("offline", True, problem, status, model)


def make_engine(settings: Settings, name: str) -> Engine:
    """The answer engine a run was started with (its name is recorded with the run)."""
    if name == "ollama":
        from masis_core.answers.ollama_engine import OllamaEngine  # langchain only when used

        return OllamaEngine(settings)
    return OfflineEngine()
