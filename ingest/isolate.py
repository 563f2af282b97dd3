"""Parsing in a child process, so a hostile PDF can neither hang nor crash the ingest.

PDFium is C++: a malformed file can loop for minutes or take the process down. The parse runs
in a forked child (a fork costs milliseconds and copies nothing up front; "spawn" and
"forkserver" re-import the main module per child, which costs half a second under pytest or
the CLI); past the time limit it is killed, and a crash becomes a one-line failure of that file
alone. The child only parses and sends the result back: it touches no lock another thread of
the parent might hold.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from multiprocessing.connection import Connection
from typing import Any

from ingest.parsing import ParsedDocument, parse_bytes
from masis_core.errors import DocumentError

log = logging.getLogger(__name__)

_CONTEXT = mp.get_context("fork")


def _worker(data: bytes, filename: str, out: Connection) -> None:
    try:
        out.send(("ok", parse_bytes(data, filename)))
    except DocumentError as exc:
        out.send(("document", str(exc)))
    except Exception as exc:  # a parser bug: reported, not raised across processes
        out.send(("crash", f"{type(exc).__name__}: {exc}"))
    finally:
        out.close()


class PendingParse:
    """A parse running in its own child process; ``result`` collects it.

    Started early, it overlaps with the parent's work on the previous file (embedding and
    store writes), which hides most of the extraction time on a machine with two cores.
    The time limit counts from the start of the child.
    """

    def __init__(self, data: bytes, filename: str, timeout_s: float) -> None:
        self.filename = filename
        self.timeout_s = timeout_s
        self._deadline = time.monotonic() + timeout_s
        self._receive, send = _CONTEXT.Pipe(duplex=False)
        self._proc = _CONTEXT.Process(target=_worker, args=(data, filename, send), daemon=True)
        self._proc.start()
        send.close()

    def result(self) -> ParsedDocument:
        try:
            kind, payload = self._receive_result()
        finally:
            self._close()
        if kind == "ok":
            return payload
        if kind == "document":
            raise DocumentError(payload)
        log.error("parser crashed on %s: %s", self.filename, payload)
        raise DocumentError(f"corrupt: parser failed ({payload})")

    def _receive_result(self) -> tuple[str, Any]:
        if not self._receive.poll(max(0.0, self._deadline - time.monotonic())):
            self._proc.kill()
            raise DocumentError(
                f"timeout: reading the file took longer than {self.timeout_s:g} s "
                "(MASIS_PARSE_TIMEOUT_S); it may be malformed"
            )
        try:
            return self._receive.recv()
        except EOFError:
            self._proc.join(5)
            raise DocumentError(
                f"corrupt: the PDF parser crashed on this file (exit code {self._proc.exitcode})"
            ) from None

    def cancel(self) -> None:
        """Stop the child: the batch was abandoned before its result was wanted."""
        if self._proc.is_alive():
            self._proc.kill()
        self._close()

    def _close(self) -> None:
        self._receive.close()
        self._proc.join(5)  # after sending, the child exits at once
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)


def parse_isolated(data: bytes, filename: str, timeout_s: float) -> ParsedDocument:
    return PendingParse(data, filename, timeout_s).result()
