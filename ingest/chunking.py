"""Page-aware chunking: windows of about N words that remember the pages they came from."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.parsing import Page
from masis_core.retrieval.quality import length_score

SENTENCE_END = (".", "!", "?", ":", ";")


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    page_start: int
    page_end: int
    word_count: int
    quality: float


def _cut(words: list[tuple[str, int]], start: int, size: int) -> int:
    """End of the window: the last sentence end in its final quarter, else a hard cut."""
    hard = min(start + size, len(words))
    if hard == len(words):
        return hard
    floor = start + (size * 3) // 4
    for end in range(hard, floor, -1):
        if words[end - 1][0].endswith(SENTENCE_END):
            return end
    return hard


def chunk_pages(pages: list[Page], size: int = 200, overlap: int = 40) -> list[Chunk]:
    """Slide over the document's words; a short tail joins the previous chunk."""
    if overlap >= size:
        raise ValueError("overlap must be smaller than the chunk size")
    words = [(w, page.number) for page in pages for w in page.text.split()]
    chunks: list[Chunk] = []
    start = 0
    while start < len(words):
        end = _cut(words, start, size)
        # Fold a tail shorter than a quarter window into this chunk rather than emit a stub.
        if len(words) - end < size // 4:
            end = len(words)
        window = words[start:end]
        chunks.append(
            Chunk(
                index=len(chunks),
                text=" ".join(w for w, _ in window),
                page_start=window[0][1],
                page_end=window[-1][1],
                word_count=len(window),
                quality=round(length_score(len(window)), 4),
            )
        )
        if end >= len(words):
            break
        start = max(end - overlap, start + 1)
    return chunks
