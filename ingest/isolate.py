"""Parsing and page previews in a child process, so a hostile PDF can neither hang nor crash
the ingest or the server.

PDFium is C++: a malformed file can loop for minutes, ask for a 10 GiB bitmap or take the
process down. The work runs in a forked child (a fork costs milliseconds and copies nothing up
front; "spawn" and "forkserver" re-import the main module per child, which costs half a second
under pytest or the CLI); past the time limit it is killed, and a crash becomes a one-line
failure of that file alone. The child only computes and sends the result back: it touches no
lock another thread of the parent might hold.

A child never outlives its parent. It closes the receive ends it inherited (its own and those
of earlier children still open in the parent): otherwise, once the parent is gone, a result
larger than the pipe buffer (64 KiB) blocks the child forever on a pipe it can read itself,
holding its memory and the parent's open files. And it asks the kernel for SIGKILL when its
parent dies (``PR_SET_PDEATHSIG``; elsewhere a thread watches ``getppid``). On Linux that
signal follows the *thread* that forked: start and collect a child from one thread that
outlives it (the CLI's main thread, the UI's ingest worker or script thread).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ingest.document import ParsedDocument
from ingest.highlight import HighlightedPage, highlight_page, sentence_page
from ingest.ocr import OcrOptions, PageWords, ProgressFn, keep_engine, preload
from ingest.parsing import (
    is_plain_text,
    no_progress,
    parse_bytes,
    parse_text,
    read_scans,
    render_page_png,
    with_scans,
)
from masis_core.errors import DocumentError

log = logging.getLogger(__name__)

_CONTEXT = mp.get_context("fork")
PR_SET_PDEATHSIG = 1
PARENT_POLL_S = 0.2  # the fallback watcher's interval: how long an orphan may linger


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, resolved here in the parent: a dlopen in a child forked from a
    threaded server could wait forever on a loader lock another thread held at the fork."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()

# Receive ends of the children this process has running. Every new child closes them all:
# an inherited read end would keep a sibling's pipe open after the parent died. Weak, so an
# abandoned child's end still closes when it is collected.
_RECEIVERS: weakref.WeakSet[Connection] = weakref.WeakSet()


def _exit_if_orphaned(parent_pid: int) -> None:
    if os.getppid() != parent_pid:
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while True:
        _exit_if_orphaned(parent_pid)
        time.sleep(PARENT_POLL_S)


def die_with_parent(parent_pid: int) -> None:
    """Ask for SIGKILL when the parent dies; without prctl, a daemon thread polls instead.
    Also a worker pool's initializer: an evaluation killed mid-run leaves no workers behind."""
    if _prctl is not None and _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
        _exit_if_orphaned(parent_pid)  # the parent died before the request took effect
        return
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _child_main(
    target: Callable[..., Any], args: tuple, out: Connection, parent_pid: int, progress: bool
) -> None:
    for inherited in list(_RECEIVERS):
        inherited.close()
    die_with_parent(parent_pid)

    def report(done: int, total: int) -> None:
        out.send(("progress", done, total))

    try:
        out.send(("ok", target(*args, report) if progress else target(*args)))
    except DocumentError as exc:
        out.send(("document", str(exc)))
    except Exception as exc:  # a bug in the target: reported, not raised across processes
        out.send(("crash", f"{type(exc).__name__}: {exc}"))
    finally:
        out.close()


# How often a wait looks at its ``cancelled`` question.
CANCEL_POLL_S = 0.25


class ChildCall:
    """``target(*args)`` running in a forked child; ``outcome`` waits for it until a deadline
    counted from the start.

    With ``progress_grace_s``, the target gets a last argument ``report(done, total)``; each
    report reaches ``outcome``'s ``on_progress`` and moves the deadline to that many seconds
    from then (OCR of a long scan takes as long as it has pages; a stuck page does not).
    """

    def __init__(
        self,
        target: Callable[..., Any],
        args: tuple,
        timeout_s: float,
        progress_grace_s: float | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self._grace = progress_grace_s
        self._deadline = time.monotonic() + timeout_s
        self.progressed = False  # the target reported progress (OCR ran)
        self._final: tuple[str, Any] | None = None
        self._receive, send = _CONTEXT.Pipe(duplex=False)
        _RECEIVERS.add(self._receive)
        self._proc = _CONTEXT.Process(
            target=_child_main,
            args=(target, args, send, os.getpid(), progress_grace_s is not None),
            daemon=True,
        )
        try:
            self._proc.start()
        except BaseException:
            self._close()
            raise
        finally:
            send.close()

    def outcome(
        self,
        on_progress: ProgressFn | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> tuple[str, Any]:
        """``(kind, payload)``: ``ok`` with the value, ``document`` or ``crash`` with a message,
        ``timeout``, ``cancelled``, or ``died`` with the exit code. The child is gone
        afterwards."""
        try:
            while self._final is None:
                if cancelled():
                    self._proc.kill()
                    return "cancelled", None
                left = self._deadline - time.monotonic()
                # Messages already sent count even when read late: a file parsed ahead reports
                # its OCR pages while the parent is still storing the previous file.
                if self._receive.poll(max(0.0, min(left, CANCEL_POLL_S))):
                    self._take(on_progress)
                elif left <= 0:
                    self._proc.kill()
                    return "timeout", None
            return self._final
        finally:
            self._close()

    def ready(self, on_progress: ProgressFn | None = None, wait_s: float = 0.0) -> bool:
        """Whether the outcome is in, waiting at most ``wait_s`` for a message: what the child
        sent so far is read (its progress reported), and ``outcome`` then returns at once."""
        while self._final is None and not self._receive.closed and self._receive.poll(wait_s):
            self._take(on_progress)
        return self._final is not None

    def overdue(self) -> bool:
        """Past its deadline (``outcome`` would stop it now)."""
        return self._final is None and time.monotonic() >= self._deadline

    def _take(self, on_progress: ProgressFn | None) -> None:
        """Read one message: progress moves the deadline, anything else is the outcome."""
        try:
            message = self._receive.recv()
        except EOFError:
            self._proc.join(5)
            self._final = ("died", self._proc.exitcode)
            return
        if message[0] != "progress":
            self._final = message
            return
        self.progressed = True
        if self._grace is not None:
            self._deadline = time.monotonic() + self._grace
        if on_progress is not None:
            on_progress(message[1], message[2])

    def cancel(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
        self._close()

    def _close(self) -> None:
        _RECEIVERS.discard(self._receive)
        self._receive.close()
        if self._proc.pid is None:
            return
        self._proc.join(5)  # after sending, the child exits at once
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)


def _parse_then(
    data: bytes,
    filename: str,
    ocr: OcrOptions | None,
    progress: ProgressFn,
    ocr_later: bool,
    then: Callable[[ParsedDocument], Any],
) -> tuple[ParsedDocument, Any]:
    """``parse_bytes`` and what ``then`` makes of its document, unless pages wait for OCR
    (the document is then finished by ``with_scans``, and ``then`` runs on that, in the
    parent)."""
    parsed = parse_bytes(data, filename, ocr, progress, ocr_later)
    return parsed, None if parsed.ocr_pending else then(parsed)


# A small text file is decoded here: no PDF code runs on it, and decoding and cleaning a
# megabyte of text is linear. The fork it saves costs 30-100 ms in a parent holding the
# embedder and Chroma (more than the parse), once per context in `eval governance`.
IN_PROCESS_TEXT_BYTES = 1024 * 1024


def in_process(data: bytes, filename: str) -> bool:
    """Whether this file is parsed without a child: a small .txt/.md that is not a PDF."""
    return 0 < len(data) <= IN_PROCESS_TEXT_BYTES and is_plain_text(data, filename)


# Why a file stopped while it was read is not stored (its parse's or OCR's child, or a file
# set aside when its batch was cancelled).
CANCELLED = "cancelled: the batch was stopped while this file was read"


class PendingParse:
    """A parse running in its own child process (a small text file: done at once, here);
    ``result`` collects it.

    Started early, it overlaps with the parent's work on the previous file (embedding and
    store writes), which hides most of the extraction time on a machine with two cores.
    The time limit counts from the start of the child.

    Pages without a usable text layer are read by OCR in a second child, started once the
    first has listed them (``scans_pending``): a batch sets the file aside and embeds the
    files after it meanwhile (``ingest.pipeline``). That child has the same time limit, from
    its start, and each page it reports adds ``MASIS_OCR_PAGE_TIMEOUT_S``.
    """

    def __init__(
        self,
        data: bytes,
        filename: str,
        timeout_s: float,
        ocr: OcrOptions | None = None,
        then: Callable[[ParsedDocument], Any] | None = None,
    ) -> None:
        self.filename = filename
        self.timeout_s = timeout_s
        self.ocr = ocr
        self._data = data
        self._done: ParsedDocument | DocumentError | None = None
        self._then = then
        self._made: Any = None
        self._child: ChildCall | None = None
        self._scans: ChildCall | None = None
        if in_process(data, filename):
            try:
                self._done = parse_text(data, filename)
            except DocumentError as exc:
                self._done = exc
            return
        if ocr is not None:
            preload(ocr.engine)
        args = (data, filename, ocr, no_progress, ocr is not None)
        if then is None:
            self._child = ChildCall(parse_bytes, args, timeout_s)
        else:
            self._child = ChildCall(_parse_then, (*args, then), timeout_s)

    def settled(self, wait_s: float = 0.0) -> bool:
        """Whether the text layer's result is in, waiting at most ``wait_s`` (a batch then
        starts the next file's parse, or stores another file first), or is overdue (then
        only ``result`` tells what became of it)."""
        return self._child is None or self._child.ready(None, wait_s) or self._child.overdue()

    def made(self) -> Any:
        """What ``then`` made of the parsed document in the child; None when it did not run
        there (a small text file, a failed parse, or pages left for OCR: ``_parse_then``)."""
        return self._made

    def _text(self, cancelled: Callable[[], bool] = lambda: False) -> ParsedDocument:
        """The text layer's result (waited for once), pages to OCR listed."""
        if self._child is not None:
            child, self._child = self._child, None
            try:
                value = self._payload(child, child.outcome(None, cancelled))
                if self._then is not None:
                    value, self._made = value
                self._done = value
            except DocumentError as exc:
                self._done = exc
        if isinstance(self._done, DocumentError):
            raise self._done
        assert self._done is not None
        return self._done

    def scans_pending(self, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Wait for the text layer; when pages need OCR, start reading them in a second
        child and say so (a failed parse says no: ``result`` reports it)."""
        try:
            parsed = self._text(cancelled)
        except DocumentError:
            return False
        if not parsed.ocr_pending or self.ocr is None:
            return False
        if self._scans is None:
            # Once OCR reports progress, a page has its own limit plus the file's: the child
            # stops a slow page itself; this deadline is the backstop for one stuck in C code.
            args = (self._data, self.filename, parsed.ocr_pending, self.ocr)
            grace = self.timeout_s + self.ocr.page_timeout_s
            self._scans = ChildCall(read_scans, args, self.timeout_s, grace)
        return True

    def scans_read(self, on_progress: ProgressFn | None = None) -> bool:
        """Whether the OCR child is done (its progress so far reported) or overdue, without
        waiting."""
        return self._scans is None or self._scans.ready(on_progress) or self._scans.overdue()

    def result(
        self, on_progress: ProgressFn | None = None, cancelled: Callable[[], bool] = lambda: False
    ) -> ParsedDocument:
        """The parsed file; ``on_progress(pages OCRed, pages to OCR)`` while OCR runs."""
        if not self.scans_pending(cancelled):
            return self._text()
        assert self._scans is not None
        scans = self._payload(self._scans, self._scans.outcome(on_progress, cancelled))
        if scans.ocr_engine is not None:
            keep_engine(scans.ocr_engine)
        return with_scans(self._text(), scans)

    def _payload(self, child: ChildCall, outcome: tuple[str, Any]) -> Any:
        """A child's value, or its failure as a ``DocumentError``."""
        kind, payload = outcome
        if kind == "ok":
            return payload
        if kind == "document":
            raise DocumentError(payload)
        if kind == "cancelled":
            raise DocumentError(CANCELLED)
        if kind == "timeout":
            # OCR is named only when it ran: a text-layer PDF that hangs is no OCR matter.
            more = "; each OCR page adds MASIS_OCR_PAGE_TIMEOUT_S" if child.progressed else ""
            raise DocumentError(
                f"timeout: reading the file took longer than {self.timeout_s:g} s "
                f"(MASIS_PARSE_TIMEOUT_S{more}); it may be malformed"
            )
        if kind == "died":
            raise DocumentError(
                f"corrupt: the PDF parser crashed on this file (exit code {payload})"
            )
        log.error("parser crashed on %s: %s", self.filename, payload)
        # One line: some libraries put a whole traceback in their exception's message.
        first = str(payload).strip().splitlines()[0] if str(payload).strip() else "no message"
        raise DocumentError(f"corrupt: parser failed ({first})")

    def cancel(self) -> None:
        """Stop the children: the batch was abandoned before the result was wanted."""
        for child in (self._child, self._scans):
            if child is not None:
                child.cancel()


def _preview(
    target: Callable[..., Any], args: tuple, path: Path, page: int, timeout_s: float
) -> Any:
    """``target(*args)`` in a child with a time limit; ``None``, with the reason logged, for
    anything but a result. A preview must never break the answer it illustrates, nor the
    server showing it."""
    try:
        kind, payload = ChildCall(target, args, timeout_s).outcome()
    except OSError as exc:  # no fork: out of processes or memory
        kind, payload = "crash", f"could not start the renderer ({exc})"
    if kind == "ok":
        return payload
    reason = {
        "timeout": f"rendering took longer than {timeout_s:g} s (MASIS_PREVIEW_TIMEOUT_S)",
        "died": f"the renderer crashed (exit code {payload})",
    }.get(kind, payload)
    log.warning("no preview of page %d of %s: %s", page, path.name, reason)
    return None


def render_pdf_page(
    path: Path, page_number: int, timeout_s: float, width_px: int = 900
) -> bytes | None:
    """One page of a stored original as PNG (at most ``MAX_PREVIEW_PIXELS``), rendered in a
    child with a time limit; ``None`` for anything but a picture."""
    return _preview(render_page_png, (path, page_number, width_px), path, page_number, timeout_s)


def highlight_pdf_page(
    path: Path,
    span: tuple[int, int],
    passage: str,
    cited: tuple[str, ...],
    timeout_s: float,
    page: int | None = None,
    zoom: int = 1,
    ocr_words: PageWords | None = None,
) -> HighlightedPage | None:
    """A cited passage's page with the cited sentences highlighted (``ingest.highlight``;
    scanned pages by their ``ocr_words``), drawn in a child with a time limit; ``None`` when
    there is no page to draw."""
    args = (path, span[0], span[1], passage, cited, page, zoom, ocr_words)
    return _preview(highlight_page, args, path, page or span[0], timeout_s)


def sentence_pdf_page(
    path: Path,
    span: tuple[int, int],
    sentence: str,
    timeout_s: float,
    ocr_words: PageWords | None = None,
) -> int | None:
    """The page of ``span`` that holds ``sentence`` (``ingest.highlight.sentence_page``), read
    in a child with a time limit; ``None`` when it cannot be told."""
    args = (path, span[0], span[1], sentence, ocr_words)
    page: int | None = _preview(sentence_page, args, path, span[0], timeout_s)
    return page
