"""EPUB books with ebooklib: the spine's documents in reading order, each a chapter, cited as
"chapter n" with the heading path and paragraph inside it. The package is checked
as every zipped kind is (``ingest.kinds.open_zip``) before ebooklib opens it."""

from __future__ import annotations

import io
import warnings

import ebooklib
from ebooklib import epub

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, open_zip
from ingest.webpage import add_page


class _Reader(epub.EpubReader):
    """ebooklib's reader, tolerant of a manifest entry that names a fragment of a file
    ("about-manual.xhtml#o8", as Debian's live-manual has): the file is read; the repeats
    are skipped below."""

    def read_file(self, name: str) -> bytes:
        return super().read_file(name.split("#", 1)[0])


def read_book(data: bytes) -> epub.EpubBook:
    with warnings.catch_warnings():  # ebooklib's future-behaviour notices
        warnings.simplefilter("ignore")
        reader = _Reader(io.BytesIO(data), {"ignore_ncx": True})
        book = reader.load()
        reader.process()
    return book


def parse(data: bytes) -> ParsedDocument:
    open_zip(data, "epub")
    book = read_book(data)
    blocks = Blocks()
    chapter = 0
    seen: set[str] = set()
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        name = item.get_name().split("#", 1)[0]
        if name in seen:
            continue
        seen.add(name)
        body = item.get_content()
        if not body.strip():
            continue
        chapter += 1
        add_page(blocks, body, f"chapter {chapter}", chapter)
    return blocks.document(chapter)
