"""A fake Ollama server on 127.0.0.1 speaking the real wire format (/api/tags, /api/embed,
/api/chat with and without streaming). Tests script its replies and read what it received."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from tests.loopback import LoopbackServer

CREATED = "2026-11-22T12:00:00.000000Z"


def fake_vector(text: str, dim: int = 64) -> list[float]:
    """Deterministic bag-of-words vector: texts sharing words point the same way."""
    vec = np.zeros(dim, dtype=np.float64)
    for word in text.lower().split():
        h = int(hashlib.md5(word.strip(".,;:?!").encode()).hexdigest(), 16)
        vec[h % dim] += 1.0
    if not vec.any():
        vec[0] = 1.0
    return (vec / np.linalg.norm(vec)).tolist()


@dataclass
class FakeOllamaState:
    models: list[str] = field(default_factory=lambda: ["llama3:latest", "nomic-embed-text:latest"])
    dim: int = 64
    # Replies for /api/chat, consumed in order; a callable gets the request body.
    chat_replies: list[str | Callable[[dict], str]] = field(default_factory=list)
    default_reply: str = "{}"
    # Set to make every request hang until released (a slow server).
    hang: threading.Event | None = None
    # An /api/embed request with a text holding one of these words waits for its event.
    embed_gates: dict[str, threading.Event] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def has(self, model: str) -> bool:
        full = model if ":" in model else f"{model}:latest"
        return full in self.models or model in self.models


class _Handler(BaseHTTPRequestHandler):
    state: FakeOllamaState  # set per server

    def log_message(self, *args: Any) -> None:  # keep test output clean
        return

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _wait_if_hanging(self) -> None:
        if self.state.hang is not None:
            self.state.hang.wait(timeout=30)

    def do_GET(self) -> None:
        self.state.requests.append((self.path, {}))
        self._wait_if_hanging()
        if self.path == "/api/tags":
            models = [
                {"name": m, "model": m, "modified_at": CREATED, "size": 1, "digest": "0" * 64}
                for m in self.state.models
            ]
            self._send(200, {"models": models})
        elif self.path == "/api/version":
            self._send(200, {"version": "0.12.0"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.state.requests.append((self.path, body))
        self._wait_if_hanging()
        model = body.get("model", "")
        if self.path in ("/api/embed", "/api/chat") and not self.state.has(model):
            self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        if self.path == "/api/embed":
            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
            for word, gate in self.state.embed_gates.items():
                if any(word in str(t) for t in inputs):
                    gate.wait(timeout=300)
            self._send(
                200,
                {"model": model, "embeddings": [fake_vector(t, self.state.dim) for t in inputs]},
            )
        elif self.path == "/api/chat":
            self._chat(body, model)
        else:
            self._send(404, {"error": "not found"})

    def _chat(self, body: dict, model: str) -> None:
        reply: Any = (
            self.state.chat_replies.pop(0) if self.state.chat_replies else self.state.default_reply
        )
        content = reply(body) if callable(reply) else reply
        message = {"role": "assistant", "content": content}
        final = {
            "model": model,
            "created_at": CREATED,
            "message": message,
            "done": True,
            "done_reason": "stop",
            "total_duration": 1000,
            "prompt_eval_count": 10,
            "eval_count": 10,
        }
        if body.get("stream", True):
            first = {**final, "done": False, "message": message}
            for key in ("done_reason", "total_duration", "prompt_eval_count", "eval_count"):
                first.pop(key)
            last = {**final, "message": {"role": "assistant", "content": ""}}
            lines = json.dumps(first) + "\n" + json.dumps(last) + "\n"
            self._send(200, lines.encode(), "application/x-ndjson")
        else:
            self._send(200, final)


class FakeOllama(LoopbackServer):
    """Context manager: ``with FakeOllama() as fake: fake.url``."""

    def __init__(self, state: FakeOllamaState | None = None) -> None:
        super().__init__(_Handler, state or FakeOllamaState())

    def release(self) -> None:
        if self.state.hang is not None:
            self.state.hang.set()

    def requests_to(self, path: str) -> list[dict]:
        return [body for p, body in self.state.requests if p == path]
