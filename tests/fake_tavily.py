"""A fake Tavily server on 127.0.0.1 speaking its wire format (``POST /search``).

Tests script results per query (or an error status, or a hang for a time-out) and read the
request bodies and headers it received.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import LoopbackServer

ERROR_DETAIL = {
    400: "Invalid request: query is too long.",
    401: "Unauthorized: missing or invalid API key.",
    429: "Your request has been blocked due to excessive requests.",
    500: "Internal server error.",
}


def result(title: str, url: str, content: str, score: float = 0.9) -> dict[str, Any]:
    return {"title": title, "url": url, "content": content, "score": score, "raw_content": None}


@dataclass
class FakeTavilyState:
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # query -> results
    status: dict[str, int] = field(default_factory=dict)  # query -> error status to answer
    hang: dict[str, threading.Event] = field(default_factory=dict)  # query -> released when set
    requests: list[dict[str, Any]] = field(default_factory=list)  # {headers, body}


class _Handler(BaseHTTPRequestHandler):
    state: FakeTavilyState

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out)
            pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.state.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path != "/search":
            self._send(404, {"detail": {"error": "Not found"}})
            return
        query = body.get("query", "")
        if query in self.state.hang:
            self.state.hang[query].wait(timeout=30)
        if query in self.state.status:
            code = self.state.status[query]
            self._send(code, {"detail": {"error": ERROR_DETAIL.get(code, "error")}})
            return
        found = self.state.results.get(query, [])[: int(body.get("max_results") or 5)]
        domains = body.get("include_domains")
        if domains:
            found = [r for r in found if any(d.lstrip(".") in r["url"] for d in domains)]
        self._send(
            200,
            {"query": query, "answer": None, "images": [], "results": found, "response_time": 0.1},
        )


class FakeTavily(LoopbackServer):
    """``with FakeTavily() as fake: fake.url`` — point ``MASIS_TAVILY_BASE_URL`` at it."""

    def __init__(self) -> None:
        super().__init__(_Handler, FakeTavilyState())

    def release(self) -> None:
        for event in self.state.hang.values():
            event.set()

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.state.requests]
