"""Ingest files into a workspace: parse, chunk, embed, store, then make visible.

Each file stands alone: a broken file fails with a one-line reason and the batch goes on.
A document answers queries only once every chunk is stored; any failure removes what it wrote.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ingest import kinds
from ingest.batch import (
    ASIDE_BYTES,
    FileReport,
    ParseAhead,
    Prepared,
    Progress,
    ReportsInOrder,
    SetAside,
    Source,
    failed,
)
from ingest.chunking import Chunk, chunk_pages, flat
from ingest.document import ParsedDocument
from ingest.isolate import PendingParse
from ingest.ocr import OcrOptions
from ingest.outline import Heading, sections_of
from ingest.parsing import SUPPORTED_SUFFIXES
from ingest.sections import assign_sections, sections_json
from masis_core.errors import DocumentError, MasisError
from masis_core.faults import kill_at
from masis_core.llm.embeddings import MAX_EMBED_TOKENS, OllamaEmbedder
from masis_core.retrieval.bm25 import keyword_columns
from masis_core.retrieval.store import chunk_id
from masis_core.storage.db import Connection
from masis_core.storage.owners import current_owner, owner_alive
from masis_core.storage.registry import INGESTING, Workspace
from masis_core.workspaces.workbench import Workbench, part_abandoned

log = logging.getLogger(__name__)

EMBED_BATCH = 256
# A new document's audit row, ``added(conn, doc_id, display name)``: written in the
# transaction that makes the document ready (``Registry.mark_ready``), so both land or neither.
Added = Callable[[Connection, str, str], None]
# An 'ingesting' row older than this belongs to a process that died; its chunks are swept.
STALE_AFTER = timedelta(minutes=30)


def shown_pages(pages: list[int]) -> str:
    """'page 4', or 'pages 1, 2, 3 …' (the first ten)."""
    listed = ", ".join(str(p) for p in pages[:10]) + (" …" if len(pages) > 10 else "")
    return f"page {listed}" if len(pages) == 1 else f"pages {listed}"


def scanned_note(empty_pages: list[int], page_count: int, why: str) -> str:
    """Pages counted under "pages without text" that OCR might read: no text layer."""
    return (
        f"{len(empty_pages)} of {page_count} pages without text: no text layer "
        f"({shown_pages(empty_pages)}); {why}"
    )


def _no_text_why(parsed: ParsedDocument, page_timeout_s: float, max_pages: int) -> str:
    """Why pages without a text layer stayed without text: no engine, or what OCR made of
    them (nothing legible, out of time, over the page bound)."""
    if parsed.ocr_unavailable:
        return parsed.ocr_unavailable
    why = []
    if parsed.ocr_timeouts:
        why.append(
            f"OCR gave up on {shown_pages(parsed.ocr_timeouts)} after {page_timeout_s:g} s "
            "(MASIS_OCR_PAGE_TIMEOUT_S)"
        )
    if parsed.ocr_skipped:
        why.append(
            f"{shown_pages(parsed.ocr_skipped)} not OCRed: over MASIS_OCR_MAX_PAGES={max_pages}"
        )
    if parsed.ocr_errors:
        # The engine failing is not the page being blank: say which error, once per kind.
        by_error: dict[str, list[int]] = {}
        for page, error in sorted(parsed.ocr_errors.items()):
            by_error.setdefault(error, []).append(page)
        why.extend(
            f"OCR ({parsed.ocr_engine}) failed on {shown_pages(pages)}: {error}"
            for error, pages in by_error.items()
        )
    found_nothing = (
        set(parsed.empty_pages)
        - set(parsed.ocr_timeouts)
        - set(parsed.ocr_skipped)
        - set(parsed.ocr_errors)
    )
    if found_nothing:
        why.append(
            f"OCR ({parsed.ocr_engine}) found no text on {shown_pages(sorted(found_nothing))}"
        )
    return "; ".join(why)


def ocr_note(parsed: ParsedDocument) -> str:
    """'OCR (tesseract) read pages 1, 2, 3; turned upright: page 2 (180°)'."""
    note = f"OCR ({parsed.ocr_engine}) read {shown_pages(parsed.ocr_pages)}"
    if parsed.rotated_pages:
        turned = ", ".join(f"{p} ({d}°)" for p, d in sorted(parsed.rotated_pages.items()))
        note += f"; turned upright: page {turned}"
    return note


def blank_note(blank_pages: list[int], page_count: int) -> str:
    """Separator pages: counted under "pages without text" with the scans, as the Library's
    table counts them (it had said "skipped blank page 1" beside "pages without text 0"),
    but not scans, so no OCR is suggested."""
    return (
        f"{len(blank_pages)} of {page_count} pages without text: blank, nothing on them "
        f"({shown_pages(blank_pages)})"
    )


def _none_of(pages: int) -> str:
    return (
        "its only page has no extractable text"
        if pages == 1
        else f"none of its {pages} pages has extractable text"
    )


MAX_NAME_CHARS = 200


def display_name(filename: str) -> str:
    """The uploaded name as display text: last path part (either separator), no control
    characters, bounded length. It is never used as a path; this keeps it printable."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    if len(name) > MAX_NAME_CHARS:
        stem, dot, suffix = name.rpartition(".")
        cut = f"{stem[: MAX_NAME_CHARS - len(suffix) - 2]}…{dot}{suffix}"
        name = cut if dot else name[:MAX_NAME_CHARS]
    return name or "upload"


def doc_id_for(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _noop(_stage: str, _done: int, _total: int) -> None:
    return None


def chunked(
    parsed: ParsedDocument, size: int, overlap: int
) -> tuple[list[Chunk], list[tuple[str, str]]]:
    """A parsed document's chunks and their keyword rows' columns: made in the parse child,
    on the second core, while the parent embeds and stores the files before it."""
    chunks = chunk_pages(parsed.pages, size, overlap)
    if not any(p.place for p in parsed.pages):  # a PDF's or text's pages, not placed blocks
        outline = [Heading(*entry) for entry in parsed.outline]
        text = [(p.number, p.text) for p in parsed.pages if not p.navigation]
        chunks = assign_sections(chunks, sections_of(outline, text, parsed.page_count), overlap)
    return chunks, [keyword_columns(c.text) for c in chunks]


# Kept under its old name: tests and the sweep compare rows with this process's tag.
OWNER = current_owner()
_CRASH_POINTS = itertools.count(1)


def crash_point(name: str) -> None:
    """Fault injection for the crash-safety test: with ``MASIS_TEST_KILL_AT=N`` the process
    SIGKILLs itself at the N-th crash point it reaches. Unset (always, outside that test),
    this only advances a counter."""
    kill_at("MASIS_TEST_KILL_AT", next(_CRASH_POINTS), name)


def _bound(added: Added, doc_id: str, display: str) -> Callable[[Connection], None]:
    """``added`` for one document: what ``Registry.mark_ready`` calls in its transaction."""
    return lambda conn: added(conn, doc_id, display)


class Ingestor:
    def __init__(self, bench: Workbench) -> None:
        self.bench = bench
        self.settings = bench.settings

    def sweep_stale(self, now: datetime | None = None) -> int:
        """Remove what a crashed ingest left half-written: 'ingesting' rows whose process is
        gone (or, from another host, older than ``STALE_AFTER``), their chunks, keyword rows
        and stored file, and partial file writes whose writer is gone (a live one, such as
        the UI keeping a file while the CLI starts, is left alone)."""
        cutoff = (now or datetime.now(UTC)) - STALE_AFTER
        swept = 0
        for doc in self.bench.registry.stale_documents():
            if owner_alive(doc.owner) and datetime.fromisoformat(doc.created_at) > cutoff:
                continue
            ws = self.bench.registry.get_workspace(doc.workspace_id)
            if ws is not None:
                self.bench.delete_document(ws.id, doc.doc_id)
            else:
                self.bench.registry.forget_document(doc.workspace_id, doc.doc_id)
                self.bench.release_file(doc.doc_id)
            swept += 1
        for part in self.bench.settings.files_dir.glob("*/*.part"):
            if part_abandoned(part, cutoff.timestamp()):
                part.unlink(missing_ok=True)  # a write cut short; the document was swept above
        if swept:
            log.warning("swept %d half-ingested documents left by an earlier crash", swept)
        return swept

    @staticmethod
    def display_names(sources: Sequence[Source]) -> list[str]:
        return [display_name(s.name) for s in sources]

    def ingest_bytes(
        self, ws: Workspace, data: bytes, filename: str, progress: Progress = _noop
    ) -> FileReport:
        """Never raises for a bad file: the report carries the reason."""
        return self.ingest_source(ws, Source.of_bytes(filename, data), progress)

    def ingest_path(self, ws: Workspace, path: Path, progress: Progress = _noop) -> FileReport:
        return self.ingest_source(ws, Source.of_path(path), progress)

    def ingest_source(
        self,
        ws: Workspace,
        source: Source,
        progress: Progress = _noop,
        added: Added | None = None,
    ) -> FileReport:
        return self._complete(ws, self._prepare(ws, source), progress, added=added)

    def ocr_options(self) -> OcrOptions:
        s = self.settings
        return OcrOptions(s.ocr_engine, s.ocr_page_timeout_s, s.ocr_max_pages)

    def ingest_each(
        self,
        ws: Workspace,
        sources: Sequence[Source],
        on_start: Callable[[int, Source], Progress | None] = lambda _i, _s: None,
        cancelled: Callable[[], bool] = lambda: False,
        added: Added | None = None,
    ) -> Iterator[FileReport]:
        """Ingest files in order, yielding each report as it is done, in the batch's order.

        While one file is embedded and stored, the next ones are already read, parsed and
        chunked in child processes (``batch.ParseAhead``): on two cores that hides the
        extraction. A file is set aside while the files after it are embedded and stored
        (their reports wait behind its own, ``batch.ReportsInOrder``) when a second child
        reads its scanned pages, or when it is large and still being parsed when its turn
        comes. Abandoning the iterator stops the children. ``cancelled`` is asked before each
        file: once it says yes, no further file starts (the one being stored finishes, so
        nothing is left half-written; a file still being read, set aside, or OCRed page by
        page, stops at once and is reported ``cancelled``). ``added`` writes each new
        document's audit row in the document's own transaction.
        """
        ahead = ParseAhead(partial(self._prepare, ws), sources, cancelled)
        complete = partial(self._complete, ws, cancelled=cancelled, added=added)
        held = ReportsInOrder(complete, cancelled)
        current: Prepared | None = None
        try:
            for i in range(len(sources)):
                if cancelled():
                    break
                current = ahead.take()
                progress = ahead.pumping(on_start(i, sources[i]) or _noop)
                parse = current.parse
                if parse is not None:
                    # A large file still parsing, with files after it: they are stored first.
                    behind = (
                        len(current.data) >= ASIDE_BYTES
                        and not held.aside()
                        and i + 1 < len(sources)
                        and not parse.settled()
                    )
                    if not behind:
                        yield from held.wait_for(parse)
                        if cancelled():  # while a file aside was stored: this one never starts
                            break
                    if behind or parse.scans_pending(cancelled):
                        yield from held.make_room()
                        if cancelled():
                            break
                        held.items.append(SetAside(current, progress))
                        ahead.spare(parse)
                        continue
                held.items.append(complete(current, progress, ahead.pump))
                yield from held.release()
            yield from held.release(wait=len(held.items))
        finally:
            ahead.cancel()
            held.cancel()
            if current is not None and current.parse is not None:
                current.parse.cancel()  # abandoned while it was waited for

    def _prepare(self, ws: Workspace, source: Source) -> Prepared:
        """Read the file, settle what needs no parse (too large, already here), start the
        parse in its child process."""
        display = display_name(source.name)
        try:
            data = source.read()
        except OSError as exc:
            return Prepared(display, failed(display, f"unreadable: {exc.strerror}"))
        limit = self.settings.max_upload_mb
        if len(data) > limit * 1024 * 1024:
            size_mb = len(data) / (1024 * 1024)
            return Prepared(
                display,
                failed(
                    display,
                    f"too large: {size_mb:.1f} MB exceeds the {limit} MB limit "
                    "(MASIS_MAX_UPLOAD_MB)",
                ),
            )
        prepared = Prepared(display, data=data, doc_id=doc_id_for(data))
        prepared.early = self._duplicate(ws, prepared)
        if prepared.early is None:
            kinds.preload(display)
            try:
                prepared.parse = PendingParse(
                    data,
                    display,
                    self.settings.parse_timeout_s,
                    self.ocr_options(),
                    then=self._chunker(),
                )
            except OSError as exc:  # no fork (out of processes or memory): this file fails
                # alone, not the one being stored while its parse was started
                why = f"busy: the parser could not start ({exc}); try the file again"
                prepared.early = failed(display, why, prepared.doc_id)
        return prepared

    def _chunker(self) -> Callable[[ParsedDocument], tuple[list[Chunk], list[tuple[str, str]]]]:
        """``chunked`` with the settings' chunk size and overlap."""
        s = self.settings
        return partial(chunked, size=s.chunk_words, overlap=s.chunk_overlap_words)

    def _duplicate(self, ws: Workspace, prepared: Prepared) -> FileReport | None:
        if prepared.doc_id is None:  # not read: it failed before (its report says why)
            return None
        existing = self.bench.registry.get_document(ws.id, prepared.doc_id)
        if existing is None or existing.status == INGESTING:
            return None
        return FileReport(
            prepared.display,
            prepared.doc_id,
            "duplicate",
            pages=existing.pages,
            chunks=existing.chunks,
            ocr_pages=existing.ocr_pages,
        )

    def _complete(
        self,
        ws: Workspace,
        prepared: Prepared,
        progress: Progress,
        parsed_hook: Callable[[], None] = lambda: None,
        cancelled: Callable[[], bool] = lambda: False,
        added: Added | None = None,
    ) -> FileReport:
        display, doc_id = prepared.display, prepared.doc_id
        if prepared.early is None:
            # Again, now: an earlier file of the same batch may have been these very bytes.
            prepared.early = self._duplicate(ws, prepared)
        if prepared.early is not None:
            if prepared.parse is not None:
                prepared.parse.cancel()
            return prepared.early
        assert prepared.parse is not None and doc_id is not None  # read and parsing
        existing = self.bench.registry.get_document(ws.id, doc_id)
        if existing is not None and not owner_alive(existing.owner):
            # Left 'ingesting' by a process that died: start this document over.
            self.bench.delete_document(ws.id, doc_id)
        outcome = self._parse_and_chunk(prepared, progress, parsed_hook, cancelled)
        if isinstance(outcome, FileReport):
            return outcome
        parsed, chunks = outcome
        report = self._parsed_report(display, doc_id, parsed, chunks)
        if report.status == "failed":
            return report
        if not self.bench.registry.claim_document(
            ws.id, doc_id, display, len(prepared.data), OWNER
        ):
            report.status = "failed"
            report.error = "busy: this file is being ingested by another process right now"
            return report
        return self._store_claimed(ws, prepared, (parsed, chunks), progress, report, added)

    def _parse_and_chunk(
        self,
        prepared: Prepared,
        progress: Progress,
        parsed_hook: Callable[[], None],
        cancelled: Callable[[], bool],
    ) -> tuple[ParsedDocument, list[Chunk]] | FileReport:
        """The parse's result and its chunks, or the report of a file that could not be read
        (a parser's own bug included: it must not end the batch)."""
        assert prepared.parse is not None
        display, doc_id = prepared.display, prepared.doc_id
        try:
            progress("parsing", 0, 1)
            try:
                parsed = prepared.parse.result(
                    lambda done, total: progress("OCR pages", done, total), cancelled
                )
            finally:
                parsed_hook()
            # Made in the parse child, or here (a small text file, pages read by OCR).
            made = prepared.parse.made() or self._chunker()(parsed)
            chunks, prepared.columns = made
        except DocumentError as exc:
            return failed(display, str(exc), doc_id)
        except Exception as exc:  # a parser bug must not end the batch
            log.exception("parser crashed on %s", display)
            return failed(display, f"corrupt: parser failed ({exc})", doc_id)
        return parsed, chunks

    def _parsed_report(
        self, display: str, doc_id: str, parsed: ParsedDocument, chunks: list[Chunk]
    ) -> FileReport:
        """What the parse tells the analyst: its pages and notes, or why nothing is stored."""
        report = FileReport(
            display,
            doc_id,
            "ingested",
            pages=parsed.page_count,
            empty_pages=parsed.empty_pages,
            blank_pages=parsed.blank_pages,
            ocr_pages=parsed.ocr_pages,
            ocr_engine=parsed.ocr_engine,
            extent=parsed.extent,
        )
        why = _no_text_why(parsed, self.settings.ocr_page_timeout_s, self.settings.ocr_max_pages)
        if parsed.failed_pages:
            report.notes.append(f"{len(parsed.failed_pages)} pages could not be read")
        if not chunks:
            report.status = "failed"
            if parsed.empty_pages:
                report.error = f"no text layer: {_none_of(parsed.page_count)}; {why}"
            elif parsed.blank_pages:
                blank = shown_pages(parsed.blank_pages)
                report.error = f"no text: {_none_of(parsed.page_count)} (blank: {blank})"
            else:
                report.error = "no text: the file contains no words"
            if parsed.notes:  # what it holds that is not read: "3 pictures, 1 chart"
                report.error += f" ({'; '.join(parsed.notes)})"
            return report
        report.notes.extend(parsed.notes)
        if parsed.ocr_pages:
            report.notes.append(ocr_note(parsed))
        if parsed.empty_pages:
            report.notes.append(scanned_note(parsed.empty_pages, parsed.page_count, why))
        if parsed.blank_pages:
            report.notes.append(blank_note(parsed.blank_pages, parsed.page_count))
        return report

    def _store_claimed(
        self,
        ws: Workspace,
        prepared: Prepared,
        made: tuple[ParsedDocument, list[Chunk]],
        progress: Progress,
        report: FileReport,
        added: Added | None = None,
    ) -> FileReport:
        """Store a claimed document whole, or nothing of it: whatever ends the store (an
        error, or a BaseException such as a stopped script or Ctrl-C) rolls it back. Its
        audit row (``added``) commits with the row that makes it ready."""
        (parsed, chunks), display, doc_id = made, prepared.display, report.doc_id
        assert doc_id is not None
        then = None if added is None else _bound(added, doc_id, display)
        try:
            self._store(ws, doc_id, prepared, chunks, progress, parsed.ocr_engine)
            self.bench.registry.mark_ready(
                ws.id,
                doc_id,
                parsed.page_count,
                len(chunks),
                parsed.empty_pages,
                parsed.ocr_pages,
                parsed.ocr_words,
                parsed.extent,
                then,
            )
        except BaseException as exc:
            self._rollback(ws, doc_id)
            if not isinstance(exc, Exception):
                raise
            reason = str(exc) if isinstance(exc, MasisError) else f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, MasisError):
                log.exception("ingest of %s failed", display)
            report.status = "failed"
            report.error = f"not stored: {reason}"
            return report
        report.chunks = len(chunks)
        self._note_cut(ws, chunks, report)
        self._attachments(ws, display, parsed.attachments, report, added)
        return report

    def _attachments(
        self,
        ws: Workspace,
        display: str,
        files: list[tuple[str, bytes]],
        report: FileReport,
        added: Added | None = None,
    ) -> None:
        """An e-mail's attachments, each ingested as a document of its own, named after the
        e-mail ('memo.eml › q3.xlsx'); the e-mail's notes say what became of each."""
        for name, data in files:
            done = self.ingest_source(ws, Source.of_bytes(f"{display} › {name}", data), added=added)
            why = f" ({done.error})" if done.error else ""
            report.notes.append(f"attachment {display_name(name)}: {done.status}{why}")

    def _note_cut(self, ws: Workspace, chunks: list[Chunk], report: FileReport) -> None:
        """Chunks an Ollama embedder read only in part (dense or CJK text beyond its window):
        said in the file's report, as the embedder logged them."""
        embedder = self.bench.embedder(ws.embed_model)
        if not isinstance(embedder, OllamaEmbedder):
            return
        cut = embedder.cut_count([flat(c.text) for c in chunks])
        if cut:
            report.notes.append(
                f"{cut} chunks embedded from their first ~{MAX_EMBED_TOKENS:,} tokens only "
                f"({embedder.model}'s window); their whole text is kept and keyword-searched"
            )

    def _store(
        self,
        ws: Workspace,
        doc_id: str,
        prepared: Prepared,
        chunks: list[Chunk],
        progress: Progress,
        ocr_engine: str | None = None,
    ) -> None:
        display = prepared.display
        crash_point("claimed")
        self.bench.keep_file(doc_id, prepared.data)
        crash_point("file kept")
        embedder = self.bench.embedder(ws.embed_model)
        ids = [chunk_id(ws.id, doc_id, c.index) for c in chunks]
        texts = [c.text for c in chunks]
        total = len(chunks)
        vectors = []
        for start in range(0, total, EMBED_BATCH):
            progress("embedding", start, total)
            batch = [flat(t) for t in texts[start : start + EMBED_BATCH]]
            vectors.append(np.asarray(embedder.embed_documents(batch)))
        # One store call per document (the store batches to its limit): Chroma's per-call
        # overhead made 256-chunk writes ~30% slower than large ones.
        progress("storing", total, total)
        self.bench.store.add_chunks(
            ws.embed_model,
            ids,
            np.concatenate(vectors),
            texts,
            [chunk_metadata(ws.id, doc_id, display, c, ocr_engine) for c in chunks],
        )
        crash_point("chunks written")
        progress("publishing", total, total)
        # Keyword rows before visibility: a visible chunk always has its BM25 row.
        self.bench.bm25.add(ws.id, doc_id, ids, texts, prepared.columns)
        crash_point("keyword rows written")
        self.bench.store.make_visible(ws.embed_model, ids)
        crash_point("visible")

    def _rollback(self, ws: Workspace, doc_id: str) -> None:
        try:
            self.bench.store.delete_document(ws.embed_model, ws.id, doc_id)
            self.bench.bm25.delete_document(ws.id, doc_id)
        finally:
            self.bench.registry.forget_document(ws.id, doc_id)
            self.bench.release_file(doc_id)


def chunk_metadata(
    ws_id: str, doc_id: str, display: str, c: Chunk, ocr_engine: str | None
) -> dict[str, Any]:
    """What Chroma keeps beside a chunk's text and vector (DESIGN §3)."""
    return {
        "workspace_id": ws_id,
        "doc_id": doc_id,
        "filename": display,
        "page_start": c.page_start,
        "page_end": c.page_end,
        "chunk_index": c.index,
        "word_count": c.word_count,
        "quality": c.quality,
        # Chroma keeps no None: a chunk with no OCR page has an empty engine.
        "ocr": c.ocr,
        "ocr_engine": (ocr_engine or "") if c.ocr else "",
        # A Word section's paragraphs, a slide, rows of a sheet: where a citation points
        # when the document has no pages (empty for a PDF's page).
        "place": c.place,
        # A contents or index page's chunk: found, but never quoted as evidence.
        "navigation": c.navigation,
        "rows": ",".join(map(str, c.rows)),  # a table chunk's rows: "3,4,5,7"
        # The sections it lies in, from the PDF's outline or headings (``ingest.sections``).
        "sections": sections_json(c.sections),
    }


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders searched recursively for supported files, in a stable order."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES + kinds.SUFFIXES
                )
            )
        else:
            out.append(path)
    return out
