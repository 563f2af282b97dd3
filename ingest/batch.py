"""A batch of files through the pipeline: each file's report, and the machinery that keeps
both cores busy (files read and parsed ahead in child processes, a large or scanned file set
aside while the ones after it are stored, the reports given back in the batch's order). It
knows nothing of the stores: ``ingest.pipeline.Ingestor`` hands it how to prepare a file and
how to store one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from ingest.isolate import CANCELLED, PendingParse

Status = Literal["ingested", "duplicate", "failed"]
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class FileReport:
    file: str
    doc_id: str | None
    status: Status
    pages: int = 0
    chunks: int = 0
    empty_pages: list[int] = field(default_factory=list)  # no text layer (scanned, drawn)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    blank_pages: list[int] = field(default_factory=list)  # nothing on them: no OCR would help
    ocr_pages: list[int] = field(default_factory=list)  # read by OCR from the page image
    ocr_engine: str | None = None
    # What a file without pages holds ("1 sheet, 118 rows"): an .xlsx is not "3 pages".
    extent: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def without_text(self) -> int:
        """The pages that gave no text, whatever the reason: blank, or no text layer that OCR
        could read. One count, as the notes name them ("2 of 5 pages without text: ...")."""
        return len(self.empty_pages) + len(self.blank_pages)

    def line(self) -> str:
        """One line for a terminal or a log."""
        if self.status == "failed":
            return f"failed     {self.file}: {self.error}"
        if self.status == "duplicate":
            return f"duplicate  {self.file}: already in the workspace"
        extra = f"; {'; '.join(self.notes)}" if self.notes else ""
        return f"ingested   {self.file}: {self.size}, {self.chunks} chunks{extra}"

    @property
    def size(self) -> str:
        """'3 pages', or what a file without pages holds: '1 sheet, 118 rows'."""
        return self.extent or f"{self.pages} page{'s' if self.pages != 1 else ''}"


def failed(display: str, error: str, doc_id: str | None = None) -> FileReport:
    return FileReport(display, doc_id, "failed", error=error)


@dataclass(frozen=True)
class Source:
    """A file to ingest: its name as the analyst gave it, and how to read its bytes (read only
    when its turn comes, so a batch of files is never all in memory at once)."""

    name: str
    read: Callable[[], bytes]

    @classmethod
    def of_path(cls, path: Path) -> Source:
        return cls(path.name, path.read_bytes)

    @classmethod
    def of_bytes(cls, name: str, data: bytes) -> Source:
        """Bytes already in memory (an upload, a test fixture): they outlive the caller."""
        return cls(name, lambda: data)


@dataclass
class Prepared:
    """A file read and checked, its parse started (or its report already known)."""

    display: str
    early: FileReport | None = None
    data: bytes = b""
    doc_id: str | None = None
    parse: PendingParse | None = None
    # The chunks' keyword columns (``keyword_columns``), made with the chunks.
    columns: list[tuple[str, str]] | None = None


# How far a batch parses ahead of the file it stores: a parse child at a time, the next one
# started as soon as the last has parsed, so that a large file (the 2,415 pages of
# R-fullrefman.pdf) is parsed while the smaller ones before it are stored, not after. Each
# file ahead holds its bytes and, once parsed, its text and chunks: bounded in both.
AHEAD_FILES = 4
AHEAD_BYTES = 200 * 1024 * 1024
# How often a batch waiting for the next file's parse looks whether the file set aside is
# ready first.
WAIT_POLL_S = 0.02


class ParseAhead:
    """The batch's files read, checked and parsed ahead of the one being stored."""

    def __init__(
        self,
        prepare: Callable[[Source], Prepared],
        sources: Sequence[Source],
        cancelled: Callable[[], bool],
    ) -> None:
        """``prepare``: a file read, checked and its parse started."""
        self.prepare, self.sources, self.cancelled = prepare, sources, cancelled
        self.queue: deque[Prepared] = deque()
        self.started = 0
        self.last: PendingParse | None = None  # the parse started last
        self.spared: PendingParse | None = None  # the parse of the file set aside

    def spare(self, parse: PendingParse) -> None:
        """A file set aside while it parses: its child no longer holds back the next one."""
        if not parse.settled():
            self.spared = parse
        self.pump()

    def pumping(self, progress: Progress) -> Progress:
        """``progress`` that first starts the next parse if it may: between the stages of
        a store, while the parent embeds and writes."""

        def pumped(stage: str, done: int, total: int) -> None:
            self.pump()
            progress(stage, done, total)

        return pumped

    def pump(self) -> None:
        """Start the next files' parses, one child at a time, within the bounds (none once
        the batch is cancelled)."""
        while self.started < len(self.sources) and not self.cancelled():
            held = sum(len(p.data) for p in self.queue)
            if len(self.queue) >= AHEAD_FILES or held >= AHEAD_BYTES:
                return
            last = self.last
            if last is not None and last is not self.spared and not last.settled():
                return
            self._prepare_next()

    def take(self) -> Prepared:
        """The batch's next file (read and its parse started now, if not yet)."""
        if not self.queue:
            self._prepare_next()
        prepared = self.queue.popleft()
        try:
            self.pump()
        except BaseException:  # no longer queued, not yet the batch's: stopped here
            if prepared.parse is not None:
                prepared.parse.cancel()
            raise
        return prepared

    def _prepare_next(self) -> None:
        prepared = self.prepare(self.sources[self.started])
        self.started += 1
        self.queue.append(prepared)
        if prepared.parse is not None:
            self.last = prepared.parse

    def cancel(self) -> None:
        """Stop the parses of files not taken (an abandoned or cancelled batch)."""
        for prepared in self.queue:
            if prepared.parse is not None:
                prepared.parse.cancel()
        self.queue.clear()


@dataclass
class SetAside:
    """A file still being parsed, or whose scanned pages a child is reading, while the batch
    goes on with the files after it."""

    prepared: Prepared
    progress: Progress

    def read(self) -> bool:
        """Whether it is parsed and its pages are read (their progress so far reported),
        without waiting; the OCR of its pages starts once it is parsed."""
        parse = self.prepared.parse
        assert parse is not None
        if not parse.settled():
            return False
        if not parse.scans_pending():
            return True
        return parse.scans_read(lambda d, t: self.progress("OCR pages", d, t))


# A file at least this large that is still being parsed when its turn comes is set aside
# while the files after it are stored (the 6.5 MB, 2,415-page R-fullrefman.pdf took 5 s to
# parse and chunk, against 3 s to store the three files before it); a smaller one is waited
# for, as its parse is about to end.
ASIDE_BYTES = 2 * 1024 * 1024
# Files a batch sets aside at once (a large file still being parsed, files whose scanned pages
# are read): beyond, it waits for one of them (OCR is heavy). With 2, the manuals' batch kept
# debian-reference.en.pdf, and the parent, waiting 1.6 s for cables.pdf's scanned page while
# R-fullrefman.pdf was aside.
MAX_ASIDE = 3


class ReportsInOrder:
    """The batch's reports in its order: those of files done while a file before them is set
    aside wait behind it, and a file aside is completed once it is ready."""

    def __init__(
        self, store: Callable[[Prepared, Progress], FileReport], cancelled: Callable[[], bool]
    ) -> None:
        """``store``: a parsed file embedded and stored, its report."""
        self.store, self.cancelled = store, cancelled
        self.items: list[SetAside | FileReport] = []

    def aside(self) -> list[SetAside]:
        return [item for item in self.items if isinstance(item, SetAside)]

    def release(self, wait: int = 0) -> Iterator[FileReport]:
        """Complete the files aside that are ready (and the first ``wait`` of them, waiting
        for them if need be), then yield the reports no file before them holds back."""
        for k, item in enumerate(self.items):
            if isinstance(item, SetAside) and (wait > 0 or item.read() or self.cancelled()):
                wait -= 1
                self.items[k] = self.complete(item)
        while self.items and isinstance(first := self.items[0], FileReport):
            self.items.pop(0)
            yield first

    def complete(self, item: SetAside) -> FileReport:
        """A file aside stored, or, once the batch is cancelled, not (as a file not started)."""
        prepared = item.prepared
        if self.cancelled():
            if prepared.parse is not None:
                prepared.parse.cancel()
            return failed(prepared.display, CANCELLED, prepared.doc_id)
        return self.store(prepared, item.progress)

    def wait_for(self, parse: PendingParse) -> Iterator[FileReport]:
        """Wait for the next file's parse, completing the files aside that become ready
        meanwhile (the parent stores them instead of waiting)."""
        while self.aside() and not self.cancelled() and not parse.settled(WAIT_POLL_S):
            if any(a.read() for a in self.aside()):
                yield from self.release()

    def make_room(self) -> Iterator[FileReport]:
        """With ``MAX_ASIDE`` files aside, wait until one of them is ready and complete it."""
        while len(self.aside()) >= MAX_ASIDE and not self.cancelled():
            if any(a.read() for a in self.aside()):
                yield from self.release()
            else:
                time.sleep(WAIT_POLL_S)

    def cancel(self) -> None:
        for item in self.aside():
            if item.prepared.parse is not None:
                item.prepared.parse.cancel()
