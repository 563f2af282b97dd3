"""A fake Ollama server on 127.0.0.1 speaking the real wire format (/api/tags, /api/show,
/api/embed, /api/chat with and without streaming). Tests script its replies and read what it
received.

Besides the happy path it behaves as the real server (v0.33's source) does when things go
wrong: a thinking model thinks unless told ``think: false`` (and may put its whole reply in
``message.thinking``); a scripted reply may end ``done_reason: "length"`` or break off with an
``{"error": ...}`` line; a prompt longer than the window is cut as ``llm/llama_server.go``
cuts it (the first ``num_keep`` tokens and the end, about half the window) and
``prompt_eval_count`` says how many tokens the model saw; a full queue answers 503; an embed
input longer than the embedding model's window answers 400 (Ollama 0.13.5 to 0.15.6); a chat
request without messages loads the model (``done_reason: "load"``)."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from tests.loopback import LoopbackServer

CREATED = "2026-11-22T12:00:00.000000Z"
BUSY = "server busy, please try again.  maximum pending requests exceeded"
TOO_LONG = "the input length exceeds the context length"
NUM_KEEP = 5  # Ollama's default num_keep (4) and the BOS token
Reply = str | dict[str, Any]


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
    models: list[str] = field(default_factory=lambda: ["llama3.1:8b", "nomic-embed-text:latest"])
    dim: int = 64  # nomic-embed-text's real vectors have 768
    # Replies for /api/chat, consumed in order; a callable gets the request body. A dict
    # reply may give ``content``, ``thinking``, ``done_reason`` and ``error`` (sent as a
    # line after the first chunk: the stream breaks off).
    chat_replies: list[Reply | Callable[[dict], Reply]] = field(default_factory=list)
    default_reply: Reply | Callable[[dict], Reply] = "{}"
    # A thinking model (``capabilities`` has "thinking"): unless the request says
    # ``think: false`` it thinks first, and with ``answer_in_thinking`` all its output
    # lands in ``message.thinking``, the content empty.
    thinks: bool = False
    answer_in_thinking: bool = True
    context_length: int = 131072  # the model's trained window, in /api/show
    chars_per_token: float = 4.0  # the fake tokenizer: English near 4, dense text fewer
    embed_context: int | None = None  # tokens an embed input may have (None: any)
    busy: bool = False  # the queue is full: 503
    # Set to make every request hang until released (a slow server).
    hang: threading.Event | None = None
    # An /api/embed request with a text holding one of these words waits for its event.
    embed_gates: dict[str, threading.Event] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # each chat prompt as the model saw it

    def has(self, model: str) -> bool:
        full = model if ":" in model else f"{model}:latest"
        return full in self.models or model in self.models

    def tokens(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def window(self, body: dict) -> int:
        """The context the server uses: the request's ``num_ctx`` (4096 unset: the
        small-GPU default), never above the trained window."""
        asked = int((body.get("options") or {}).get("num_ctx") or 4096)
        return min(asked, self.context_length)

    def read_prompt(self, body: dict) -> tuple[str, int]:
        """What the model sees of the templated prompt and its token count: a prompt of a
        full window or more keeps ``NUM_KEEP`` tokens and the end (``contextShiftPromptLimit``)."""
        prompt = "".join(f"<|{m.get('role')}|>\n{m.get('content', '')}\n" for m in body["messages"])
        count, ctx = self.tokens(prompt), self.window(body)
        if count <= ctx - 1:
            return prompt, count
        limit = ctx - max((ctx - NUM_KEEP) // 2, 1)
        cpt = self.chars_per_token
        head = prompt[: int(NUM_KEEP * cpt)]
        tail = prompt[len(prompt) - int((limit - NUM_KEEP) * cpt) :]
        return head + tail, limit


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
            self._send(200, {"version": "0.33.0"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.state.requests.append((self.path, body))
        self._wait_if_hanging()
        model = body.get("model", "")
        if self.path in ("/api/embed", "/api/chat", "/api/show") and not self.state.has(model):
            self._send(404, {"error": f"model '{model}' not found"})  # routes.go's own words
        elif self.path in ("/api/embed", "/api/chat") and self.state.busy:
            self._send(503, {"error": BUSY})
        elif self.path == "/api/embed":
            self._embed(body, model)
        elif self.path == "/api/chat":
            self._chat(body, model)
        elif self.path == "/api/show":
            self._show(model)
        else:
            self._send(404, {"error": "not found"})

    def _show(self, model: str) -> None:
        family = "llama"
        self._send(
            200,
            {
                "details": {"family": family, "parameter_size": "8.0B"},
                "model_info": {
                    "general.architecture": family,
                    f"{family}.context_length": self.state.context_length,
                },
                "capabilities": ["completion", *(["thinking"] if self.state.thinks else [])],
            },
        )

    def _embed(self, body: dict, model: str) -> None:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        for word, gate in self.state.embed_gates.items():
            if any(word in str(t) for t in inputs):
                gate.wait(timeout=300)
        limit = self.state.embed_context
        if limit is not None and any(self.state.tokens(str(t)) > limit for t in inputs):
            self._send(400, {"error": TOO_LONG})
            return
        vectors = [fake_vector(str(t), self.state.dim) for t in inputs]
        self._send(200, {"model": model, "embeddings": vectors})

    def _reply(self, body: dict) -> dict[str, Any]:
        state = self.state
        reply: Any = state.chat_replies.pop(0) if state.chat_replies else state.default_reply
        reply = reply(body) if callable(reply) else reply
        reply = {"content": reply} if isinstance(reply, str) else dict(reply)
        if state.thinks and body.get("think") is not False and "thinking" not in reply:
            reply["thinking"] = "The passages say the pump is inspected; let me write it."
            if state.answer_in_thinking:
                reply["thinking"] += " " + reply["content"]
                reply["content"] = ""
        return reply

    def _chat(self, body: dict, model: str) -> None:
        if not body.get("messages"):  # a load request: routes.go answers once loaded
            loaded = {"role": "assistant", "content": ""}
            self._send(
                200,
                {"model": model, "created_at": CREATED, "message": loaded, "done": True,
                 "done_reason": "load"},
            )  # fmt: skip
            return
        reply = self._reply(body)
        seen, count = self.state.read_prompt(body)
        self.state.seen.append(seen)
        message = {"role": "assistant", "content": reply["content"]}
        if reply.get("thinking"):
            message["thinking"] = reply["thinking"]
        final = {
            "model": model,
            "created_at": CREATED,
            "message": message,
            "done": True,
            "done_reason": reply.get("done_reason", "stop"),
            "total_duration": 1000,
            "prompt_eval_count": count,
            "eval_count": self.state.tokens(reply["content"]) + 1,
        }
        if not body.get("stream", True):
            if reply.get("error"):
                self._send(500, {"error": reply["error"]})
            else:
                self._send(200, final)
            return
        first = {k: final[k] for k in ("model", "created_at", "message")} | {"done": False}
        last = {**final, "message": {"role": "assistant", "content": ""}}
        ending = {"error": reply["error"]} if reply.get("error") else last
        lines = json.dumps(first) + "\n" + json.dumps(ending) + "\n"
        self._send(200, lines.encode(), "application/x-ndjson")


class FakeOllama(LoopbackServer):
    """Context manager: ``with FakeOllama() as fake: fake.url``."""

    def __init__(self, state: FakeOllamaState | None = None) -> None:
        super().__init__(_Handler, state or FakeOllamaState())

    def release(self) -> None:
        if self.state.hang is not None:
            self.state.hang.set()

    def requests_to(self, path: str) -> list[dict]:
        return [body for p, body in self.state.requests if p == path]
