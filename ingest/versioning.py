"""A document's versions in the stores: publish a new one sharing the unchanged chunks, roll
back one cut short, remove, restore, rename, delete a version.

The invariants every step keeps (docs/folder-sync.md):

- only the current version's chunks are visible (``visible`` in Chroma, the tenant's filter
  inside the store query) and have keyword rows, so retrieval quotes nothing else;
- a chunk's ``doc_id`` is the document row of the newest version that has it, so deleting the
  current document, excluding it, and "Show the page" all work as for an upload;
- a chunk whose text and place (pages, section) did not change is shared with the new version,
  neither stored nor embedded again; one whose text is unchanged but has moved is stored anew
  with the old vector (still not embedded again).

A new version is written 'pending' (``Versions.begin``) before its chunks are published in
one store call; the next sync rolls back any version left pending (``rollback``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from ingest.chunking import Chunk, chunk_pages, flat
from ingest.isolate import PendingParse
from ingest.ocr import OcrOptions
from ingest.parsing import ParsedDocument
from ingest.pipeline import (
    EMBED_BATCH,
    OWNER,
    FileReport,
    Ingestor,
    Progress,
    Source,
    chunk_metadata,
    crash_point,
)
from masis_core.answers.changes import Comparison, PageText, asked_comparison, compare
from masis_core.errors import InputError, MasisError
from masis_core.retrieval.bm25 import keyword_columns
from masis_core.retrieval.store import chunk_id
from masis_core.storage.registry import READY, Workspace
from masis_core.storage.versions import (
    CURRENT,
    REMOVED,
    NewVersion,
    Version,
    Versions,
)
from masis_core.workspaces.workbench import Workbench

log = logging.getLogger(__name__)


@dataclass
class Published:
    """What a new version cost: chunks embedded, reused (vector copied), shared."""

    version: int
    doc_id: str
    embedded: int = 0
    copied: int = 0
    shared: int = 0
    pages: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _place(c: Chunk | dict[str, Any]) -> tuple[Any, ...]:
    if isinstance(c, Chunk):
        return (c.text, c.page_start, c.page_end, c.place)
    return (c.get("_text"), c.get("page_start"), c.get("page_end"), c.get("place", ""))


def chunked_by_page(
    parsed: ParsedDocument, size: int, overlap: int
) -> tuple[list[Chunk], list[tuple[str, str]]]:
    """``chunked``, but a chunk never runs from one page into the next: a followed document's
    revision that changes a few pages then changes only their chunks (a window sliding over
    the whole document shifted every chunk after the first changed word)."""
    chunks: list[Chunk] = []
    for page in parsed.pages:
        for c in chunk_pages([page], size, overlap):
            chunks.append(replace(c, index=len(chunks)))
    return chunks, [keyword_columns(c.text) for c in chunks]


class PageIngestor(Ingestor):
    """The pipeline with ``chunked_by_page``: what a sync ingests with."""

    def _chunker(self) -> Callable[[ParsedDocument], tuple[list[Chunk], list[tuple[str, str]]]]:
        s = self.settings
        return partial(chunked_by_page, size=s.chunk_words, overlap=s.chunk_overlap_words)


class VersionKeeper:
    """The version operations of one workbench."""

    def __init__(self, bench: Workbench, ingestor: Ingestor | None = None) -> None:
        self.bench = bench
        self.ingestor = ingestor or PageIngestor(bench)
        self.versions = Versions(bench.registry.db)

    # -- a new version ------------------------------------------------------------------
    def new_version(
        self,
        ws: Workspace,
        current: Version,
        source: Source,
        where: tuple[str, str, int],
        progress: Progress,
    ) -> Published:
        """Parse the file, store only what it adds, publish it as the next version.
        ``where``: (folder, path, size) of the file. Never raises for a bad file."""
        ing = self.ingestor
        prepared = ing._prepare(ws, source)
        if prepared.early is not None:
            why = prepared.early.error or "its bytes are already a document of the workspace"
            return Published(current.version + 1, prepared.doc_id or "", error=why)
        outcome = ing._parse_and_chunk(prepared, progress, lambda: None, lambda: False)
        if isinstance(outcome, FileReport):
            return Published(current.version + 1, prepared.doc_id or "", error=outcome.error)
        parsed, chunks = outcome
        doc_id = prepared.doc_id
        assert doc_id is not None
        report = ing._parsed_report(prepared.display, doc_id, parsed, chunks)
        if report.status == "failed":
            return Published(current.version + 1, doc_id, error=report.error)
        reg = self.bench.registry
        if not reg.claim_document(ws.id, doc_id, prepared.display, len(prepared.data), OWNER):
            return Published(current.version + 1, doc_id, error="busy: being ingested elsewhere")
        new = NewVersion(
            current.lineage,
            current.version + 1,
            doc_id,
            prepared.display,
            parsed.page_count,
            [],
            0,
            *where,
        )
        try:
            done = self._store_version(
                ws, current, new, chunks, (prepared.data, parsed.ocr_engine), progress
            )
        except BaseException as exc:
            self.rollback(ws, current, new.version, doc_id)
            if not isinstance(exc, Exception):
                raise
            log.exception("new version of %s failed", prepared.display)
            reason = str(exc) if isinstance(exc, MasisError) else f"{type(exc).__name__}: {exc}"
            return Published(new.version, doc_id, error=f"not stored: {reason}")
        done.pages, done.notes = parsed.page_count, report.notes
        return done

    def _store_version(
        self,
        ws: Workspace,
        current: Version,
        new: NewVersion,
        chunks: list[Chunk],
        read: tuple[bytes, str | None],
        progress: Progress,
    ) -> Published:
        """Store the chunks the current version lacks, then publish (``Versions.begin``,
        one store update, ``Versions.commit``)."""
        bench, store = self.bench, self.bench.store
        data, ocr_engine = read
        old_ids = self.versions.chunk_ids(ws.id, current.lineage, current.version)
        old = store.rows(ws.embed_model, ws.id, old_ids, embeddings=True)
        by_place = {_place({**m, "_text": t}): cid for cid, (t, m, _) in old.items()}
        by_text = {t: vec for _, (t, _, vec) in old.items()}
        shared: list[str] = []
        fresh: list[Chunk] = []
        for c in chunks:
            cid = by_place.pop(_place(c), None)
            if cid is not None:
                shared.append(cid)
            else:
                fresh.append(c)
        vectors, embedded = self._vectors(ws, fresh, by_text, progress)
        fresh_ids = [chunk_id(ws.id, new.doc_id, c.index) for c in fresh]
        crash_point("version claimed")
        bench.keep_file(new.doc_id, data)
        progress("storing", len(fresh), len(chunks))
        store.add_chunks(
            ws.embed_model,
            fresh_ids,
            vectors,
            [c.text for c in fresh],
            [chunk_metadata(ws.id, new.doc_id, new.filename, c, ocr_engine) for c in fresh],
        )
        bench.bm25.add(ws.id, new.doc_id, fresh_ids, [c.text for c in fresh])
        crash_point("version chunks written")
        new = NewVersion(**{**new.__dict__, "chunk_ids": shared + fresh_ids, "stored": len(fresh)})
        self.versions.begin(ws.id, new)
        crash_point("version pending")
        dropped = [cid for cid in old_ids if cid not in set(shared)]
        progress("publishing", len(chunks), len(chunks))
        mark = {"version": new.version, "filename": new.filename}
        store.update_metadata(
            ws.embed_model,
            [*fresh_ids, *shared, *dropped],
            [{**mark, "visible": True}] * len(fresh_ids)
            + [{**mark, "doc_id": new.doc_id}] * len(shared)
            + [{"visible": False}] * len(dropped),
        )
        crash_point("version published")
        self.versions.commit(ws.id, new, current)
        crash_point("version committed")
        bench.bm25.reassign(ws.id, shared, new.doc_id)
        bench.bm25.delete_chunks(ws.id, dropped)
        return Published(new.version, new.doc_id, embedded, len(fresh) - embedded, len(shared))

    def _vectors(
        self,
        ws: Workspace,
        fresh: list[Chunk],
        by_text: dict[str, np.ndarray],
        progress: Progress,
    ) -> tuple[np.ndarray, int]:
        """Vectors of the chunks to store: copied for a text the version before had, embedded
        (in batches) for the others."""
        todo = [i for i, c in enumerate(fresh) if c.text not in by_text]
        out: list[np.ndarray | None] = [by_text.get(c.text) for c in fresh]
        if todo:
            embedder = self.bench.embedder(ws.embed_model)
            for start in range(0, len(todo), EMBED_BATCH):
                progress("embedding", start, len(todo))
                part = todo[start : start + EMBED_BATCH]
                got = embedder.embed_documents([flat(fresh[i].text) for i in part])
                for i, vec in zip(part, got, strict=True):
                    out[i] = np.asarray(vec, dtype=np.float32)
        if not fresh:
            return np.zeros((0, 1), dtype=np.float32), 0
        return np.vstack([np.asarray(v, dtype=np.float32) for v in out]), len(todo)

    # -- undoing ------------------------------------------------------------------------
    def rollback(self, ws: Workspace, current: Version, version: int, doc_id: str) -> None:
        """Put a version cut short out of the stores, the current one back as it was."""
        keep = self.versions.chunk_ids(ws.id, current.lineage, current.version)
        mine = [
            cid
            for cid in self.versions.chunk_ids(ws.id, current.lineage, version)
            if cid not in set(keep)
        ]
        back = {
            "visible": True,
            "doc_id": current.doc_id,
            "version": current.version,
            "filename": current.filename,
        }
        # The shared chunks first: the publish had given them the new doc_id.
        self.bench.store.update_metadata(ws.embed_model, keep, [back] * len(keep))
        # New chunks never listed (cut short before ``begin``) are found by their doc_id.
        self.bench.store.delete_document(ws.embed_model, ws.id, doc_id)
        self.bench.store.delete_ids(ws.embed_model, ws.id, mine)
        self.bench.bm25.delete_document(ws.id, doc_id)
        self._keyword_rows(ws, current.doc_id, keep)
        self.versions.drop(ws.id, current.lineage, version)
        self.bench.registry.forget_document(ws.id, doc_id)
        self.bench.release_file(doc_id)

    def _keyword_rows(self, ws: Workspace, doc_id: str, ids: Sequence[str]) -> None:
        """The keyword rows of chunks that are current (again), written afresh."""
        texts = self.bench.store.texts(ws.embed_model, ws.id, list(ids))
        self.bench.bm25.delete_chunks(ws.id, list(texts))
        values = list(texts.values())
        self.bench.bm25.add(
            ws.id, doc_id, list(texts), values, [keyword_columns(t) for t in values]
        )

    def recover(self, ws: Workspace) -> int:
        """Roll back the versions of this workspace a crashed sync left pending."""
        rolled = 0
        for v in self.versions.pending():
            if v.workspace_id != ws.id:
                continue
            current = next(
                (c for c in self.versions.versions(ws.id, v.lineage) if c.state == CURRENT), None
            )
            if current is None:  # nothing to go back to: the version goes whole
                self.bench.delete_document(ws.id, v.doc_id)
                self.versions.drop(ws.id, v.lineage, v.version)
            else:
                self.rollback(ws, current, v.version, v.doc_id)
            rolled += 1
        if rolled:
            log.warning("rolled back %d versions a crashed sync left unpublished", rolled)
        return rolled

    # -- removal, restore, rename, adoption ---------------------------------------------
    def remove(self, ws: Workspace, current: Version) -> None:
        """The file is gone: the document leaves retrieval, its versions stay in history."""
        ids = self.versions.chunk_ids(ws.id, current.lineage, current.version)
        self.bench.store.update_metadata(ws.embed_model, ids, [{"visible": False}] * len(ids))
        self.versions.set_state(ws.id, current, REMOVED, REMOVED)
        self.bench.bm25.delete_document(ws.id, current.doc_id)

    def restore(self, ws: Workspace, removed: Version) -> None:
        """A removed document's file is back with the same bytes: current again."""
        ids = self.versions.chunk_ids(ws.id, removed.lineage, removed.version)
        self._keyword_rows(ws, removed.doc_id, ids)
        self.bench.store.update_metadata(ws.embed_model, ids, [{"visible": True}] * len(ids))
        self.versions.set_state(ws.id, removed, CURRENT, READY)

    def relabel(self, ws: Workspace, current: Version, filename: str) -> None:
        """A renamed file: its chunks' display name (no new vectors)."""
        ids = self.versions.chunk_ids(ws.id, current.lineage, current.version)
        self.bench.store.update_metadata(ws.embed_model, ids, [{"filename": filename}] * len(ids))

    def adopt(self, ws: Workspace, firsts: Sequence[NewVersion]) -> None:
        """Documents just ingested (or already there) become version 1 of themselves."""
        self.versions.record_first(ws.id, firsts)
        ids = [cid for v in firsts for cid in v.chunk_ids]
        self.bench.store.update_metadata(ws.embed_model, ids, [{"version": 1}] * len(ids))

    def delete_lineage(self, ws: Workspace, lineage: str) -> None:
        """The Library's delete of a kept document: every version goes (each chunk's doc_id
        is its newest version's, so deleting each version's document takes every chunk)."""
        for v in reversed(self.versions.versions(ws.id, lineage)):
            self.bench.delete_document(ws.id, v.doc_id)
            self.versions.drop(ws.id, lineage, v.version)
        self.versions.forget_lineage(ws.id, lineage)

    # -- deleting a version -------------------------------------------------------------
    def delete_version(self, ws: Workspace, lineage: str, version: int) -> None:
        """An editor deletes one version; the others keep every chunk they list. Deleting
        the current one makes the version before it current; the only one, the document."""
        kept = self.versions.versions(ws.id, lineage)
        target = next((v for v in kept if v.version == version), None)
        if target is None:
            raise InputError(f"There is no version {version} of that document (deleted?).")
        others = [v for v in kept if v.version != version]
        if not others:
            self.bench.delete_document(ws.id, target.doc_id)
            self.versions.drop(ws.id, lineage, version)
            return
        ids = self.versions.chunk_ids(ws.id, lineage, version)
        users = self.versions.users_of(ws.id, ids)
        mine = [cid for cid in ids if users.get(cid, set()) <= {version}]
        self.bench.store.delete_ids(ws.embed_model, ws.id, mine)
        self.bench.bm25.delete_chunks(ws.id, mine)
        by_version = {v.version: v for v in others}
        moved = [(cid, max(users[cid] - {version})) for cid in ids if cid not in set(mine)]
        if target.state == CURRENT:
            heir = others[-1]
            heir_ids = self.versions.chunk_ids(ws.id, lineage, heir.version)
            back = {"visible": True, "version": heir.version, "doc_id": heir.doc_id}
            self.bench.store.update_metadata(ws.embed_model, heir_ids, [back] * len(heir_ids))
            self._keyword_rows(ws, heir.doc_id, heir_ids)
            self.versions.set_state(ws.id, heir, CURRENT, READY)
        else:
            self.bench.store.update_metadata(
                ws.embed_model,
                [cid for cid, _ in moved],
                [{"doc_id": by_version[v].doc_id} for _, v in moved],
            )
        self.versions.drop(ws.id, lineage, version)
        self.bench.registry.forget_document(ws.id, target.doc_id)
        self.bench.release_file(target.doc_id)


def stage_printer(name: str, on: Callable[[str, str], None] | None) -> Progress:
    """A pipeline progress callback that reports the stage of file ``name``."""

    def progress(stage: str, _done: int, _total: int) -> None:
        if on is not None:
            on(name, stage)

    return progress


# -- what changed -------------------------------------------------------------------------
def version_pages(bench: Workbench, doc_id: str, filename: str) -> list[PageText]:
    """A version's pages read again from its stored file (no OCR: a page that needed it
    compares as empty in both versions)."""
    data = bench.file_path(doc_id).read_bytes()
    # A stored original is still untrusted: read in a child with the parse's time limit, as
    # at ingest, so a hostile file can neither hang nor crash the server that shows it.
    off = OcrOptions("off", 1.0, 0)
    parsed = PendingParse(data, filename, bench.settings.parse_timeout_s, off).result()
    return [(p.number, p.place, p.text) for p in parsed.pages]


def compare_versions(
    bench: Workbench, ws: Workspace, lineage: str, old: int, new: int
) -> Comparison:
    """The structured diff of two kept versions of a document."""
    kept = {v.version: v for v in Versions(bench.registry.db).versions(ws.id, lineage)}
    missing = [n for n in (old, new) if n not in kept]
    if missing:
        have = ", ".join(f"v{n}" for n in sorted(kept)) or "none"
        raise InputError(f"There is no v{missing[0]} of that document (kept: {have}).")
    a, b = kept[old], kept[new]
    return compare(
        b.filename,
        (a.label, version_pages(bench, a.doc_id, a.filename)),
        (b.label, version_pages(bench, b.doc_id, b.filename)),
    )


def _name_key(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if "." in name[-6:] else name
    return re.sub(r"[\W_]+", " ", stem).strip().casefold()


def answer_comparison(bench: Workbench, ws: Workspace, question: str) -> Comparison | None:
    """A question asking what changed ('compare v2 and v3 of report.pdf', 'what changed in
    the travel policy?') answered by the diff; None when it asks something else or names no
    document with two versions (the question then goes to retrieval as any other)."""
    asked = asked_comparison(question)
    if asked is None:
        return None
    versions = Versions(bench.registry.db)
    want = _name_key(asked.document)
    for doc in bench.documents(ws.id):
        if want not in (_name_key(doc.filename), doc.filename.casefold()):
            continue
        v = versions.version_of(ws.id, doc.doc_id)
        kept = versions.versions(ws.id, v.lineage) if v else []
        if len(kept) < 2:
            continue
        old = asked.old if asked.old is not None else kept[-2].version
        new = asked.new if asked.new is not None else kept[-1].version
        return compare_versions(bench, ws, kept[0].lineage, old, new)
    return None
