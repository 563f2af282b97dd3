"""What changed, told in a few sentences (issue 56): with Ollama, the chat model summarises
the cited diff, and only it. Each change of the diff is numbered with both versions' places;
the model cites numbers, and each claim is shown with the places of the changes it cites, so
every claim is cited to both versions. Numbers the diff does not have are dropped, and a claim
left without one is not shown.

Offline, or when the model's reply is unusable (malformed, cut off) or the model is missing,
there is no summary: the diff below is the whole answer, and the note says why."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from masis_core.answers.changes import Comparison
from masis_core.config import Settings
from masis_core.errors import ProviderError
from masis_core.text.sentences import defang

if TYPE_CHECKING:
    from masis_core.answers.ollama_engine import DiffSummary
    from masis_core.answers.providers import ProviderStatus

log = logging.getLogger(__name__)

MOST_CLAIMS = 6
QUOTE_CHARS = 400  # of each side of a changed passage, as the model reads it
OFFLINE_NOTE = (
    "Offline extractive mode: the changes below are the computed diff, not summarised by a "
    "model (with Ollama, the chat model writes a short summary of them)."
)


@dataclass(frozen=True)
class Place:
    """One change of the diff as the model reads it and as a claim cites it."""

    line: str  # what the model reads: "[n] Section ... (old place | new place): ..."
    cite: str  # "report.pdf, v1, p. 3; report.pdf, v2, p. 4"


@dataclass
class Summary:
    """The model's claims, each with the places of the changes it cites, or none and why."""

    by: Literal["ollama", "offline"]
    claims: list[tuple[str, list[str]]] = field(default_factory=list)
    note: str | None = None
    model: str = ""

    def lines(self) -> list[str]:
        """The summary as text, a claim a line with its places; then the note."""
        out = [f"{text} [{'; '.join(cites)}]" for text, cites in self.claims]
        return out + ([self.note] if self.note else [])


def numbered(diff: Comparison) -> list[Place]:
    """Every change of the diff, in order: a section added or removed whole, or a passage
    added, removed or reworded in a changed section, with both versions' places."""
    out: list[Place] = []
    for s in diff.sections:
        if not s.changes:
            where = _both(diff, s.old_page, s.new_page)
            out.append(Place(f"Section “{s.title}” {s.kind} ({where})", where))
            continue
        for ch in s.changes:
            old = " ".join(x.text for x in ch.old)[:QUOTE_CHARS]
            new = " ".join(x.text for x in ch.new)[:QUOTE_CHARS]
            where = _both(
                diff,
                ch.old[0].page if ch.old else s.old_page,
                ch.new[0].page if ch.new else s.new_page,
            )
            said = {"changed": f"“{old}” became “{new}”", "added": f"added “{new}”"}
            text = said.get(ch.kind, f"removed “{old}”")
            out.append(Place(f"In section “{s.title}”, {defang(text)} ({where})", where))
    return [Place(f"[{n}] {p.line}", p.cite) for n, p in enumerate(out, start=1)]


def _both(diff: Comparison, old_page: int | None, new_page: int | None) -> str:
    return f"{diff.cite(diff.old_label, old_page)}; {diff.cite(diff.new_label, new_page)}"


def cited_claims(reply: DiffSummary, places: list[Place]) -> list[tuple[str, list[str]]]:
    """The model's claims with the places of the changes they cite; numbers outside the
    diff are dropped, and so is a claim left citing none."""
    out = []
    for claim in reply.claims[:MOST_CLAIMS]:
        nums = [n for n in dict.fromkeys(claim.changes) if 1 <= n <= len(places)]
        text = " ".join(claim.text.split())
        if nums and text:
            out.append((text, [places[n - 1].cite for n in nums]))
    return out


def summarise(settings: Settings, diff: Comparison, status: ProviderStatus) -> Summary:
    """The chat model's summary of ``diff`` when Ollama is the engine; otherwise, or when
    the model's reply cannot be used, no summary and a note saying why."""
    if status.mode != "ollama":
        return Summary("offline", note=OFFLINE_NOTE)
    if not status.ready:
        return Summary("offline", note=f"No summary by the model: {status.reason}")
    if diff.unchanged:
        return Summary("ollama")
    from masis_core.answers.ollama_engine import DiffSummary, OllamaEngine  # langchain when used

    places = numbered(diff)
    heading = f"{diff.lines()[0]} ({diff.old_label} is the older version)"
    try:
        engine = OllamaEngine(settings)
        said = engine.summarise_diff(heading, [p.line for p in places], MOST_CLAIMS)
    except ProviderError as exc:  # the model missing, the server down: the remedy is in it
        log.warning("no summary of the diff: %s", exc)
        return Summary(
            "offline", note=f"No summary by the model: {exc} The diff below is complete."
        )
    claims = cited_claims(said.value, places) if isinstance(said.value, DiffSummary) else []
    if not claims:
        why = said.error or "it cited no change of the diff"
        return Summary(
            "offline",
            note=f"The model's summary could not be used ({why}); the diff below is complete.",
            model=engine.chat_name,
        )
    seen = f"Note: {'; '.join(said.notes)}." if said.notes else None
    return Summary("ollama", claims, seen, engine.chat_name)
