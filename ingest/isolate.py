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
from multiprocessing.connection import Connection

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


def parse_isolated(data: bytes, filename: str, timeout_s: float) -> ParsedDocument:
    receive, send = _CONTEXT.Pipe(duplex=False)
    proc = _CONTEXT.Process(target=_worker, args=(data, filename, send), daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            proc.kill()
            raise DocumentError(
                f"timeout: reading the file took longer than {timeout_s:g} s "
                "(MASIS_PARSE_TIMEOUT_S); it may be malformed"
            )
        try:
            kind, payload = receive.recv()
        except EOFError:
            proc.join(5)
            raise DocumentError(
                f"corrupt: the PDF parser crashed on this file (exit code {proc.exitcode})"
            ) from None
    finally:
        receive.close()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    if kind == "ok":
        return payload
    if kind == "document":
        raise DocumentError(payload)
    log.error("parser crashed on %s: %s", filename, payload)
    raise DocumentError(f"corrupt: parser failed ({payload})")
