"""Scripting the fake Ollama server: a plan, a draft, a review, replied by requested schema."""

from __future__ import annotations

import json
from collections.abc import Callable

from ingest.pipeline import Ingestor
from masis_core.services.runs import RunService
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama

PLAN = {
    "rag_queries": [],
    "web_queries": [],
    "alternatives": ["pump inspection interval"],
    "strategy": "documents first",
}
REVIEW_OK = {
    "confidence": 0.9,
    "unsupported_claims": [],
    "logical_gaps": [],
    "hallucination": False,
    "conflicts": [],
    "recommend_retry": False,
}


def draft(*sentences: tuple[str, list[int]]) -> str:
    return json.dumps({"sentences": [{"text": t, "citations": c} for t, c in sentences]})


def scripted(script: dict[str, list[str]]) -> Callable[[dict], str]:
    """Reply by the schema the client asked for (``format`` carries the JSON schema)."""

    def reply(body: dict) -> str:
        title = body.get("format", {}).get("title", "")
        queue = script[title]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return reply


def replies(*drafts: str, review: dict | None = None) -> Callable[[dict], str]:
    """The usual script: the plan, then each of ``drafts`` in turn (the last one repeated),
    then ``review`` (``REVIEW_OK`` unless given) for every review."""
    return scripted(
        {
            "StrategicPlan": [json.dumps(PLAN)],
            "Draft": list(drafts),
            "Review": [json.dumps(REVIEW_OK if review is None else review)],
        }
    )


def ollama_plant(bench: Workbench, fake_ollama: FakeOllama) -> tuple[RunService, FakeOllama]:
    """A workspace whose runs use the Ollama engine against the fake server."""
    bench.settings.ollama_host = fake_ollama.url
    ws = bench.create_workspace("plant", "wordllama")
    text = (
        "The hydraulic pump must be inspected every 500 operating hours by a technician. "
        "The technician checks the seals and the relief valve during each inspection. "
    ) * 3
    Ingestor(bench).ingest_bytes(ws, text.encode(), "pump.txt")
    return RunService(bench), fake_ollama


def ask(research: RunService):
    return research.ask("plant", "How often is the pump inspected?", engine="ollama")
