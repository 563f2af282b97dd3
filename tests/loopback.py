"""A threaded HTTP server on a free 127.0.0.1 port, for the fakes at the network edge."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer:
    """``with Fake() as fake: fake.url``; subclasses give the handler and what to release."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], state: Any) -> None:
        self.state = state
        bound = type("Handler", (handler,), {"state": state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def release(self) -> None:
        """Let hanging requests finish so shutdown does not wait on them."""

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()
