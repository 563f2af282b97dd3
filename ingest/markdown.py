"""Markdown notes (.md, .markdown) with markdown-it-py, cited as a Word document is: by heading
path and paragraph ("Pumps › Maintenance, paragraphs 1–2"), not as "page 1" of a file that has
no pages. A table is cut into blocks of rows, each with the table's header.

Every other block keeps its source lines as written (a list with its bullets, a code block
with its fences), as the whole file was kept before: the segmenter reads lists and commands
in them. The parser, not a pattern, tells a heading from a ``# comment`` in a code block.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ingest.kinds import Blocks, Sections, add_table, cell_text
from ingest.parsing import ParsedDocument

_PARSER = MarkdownIt("commonmark").enable("table")
_SKIPPED = ("hr", "front_matter")


def _rows(tokens: list[Token], start: int) -> list[tuple[int, list[str]]]:
    """The rows of the table that opens at ``tokens[start]``, numbered from its header."""
    rows: list[tuple[int, list[str]]] = []
    for token in tokens[start + 1 :]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append((len(rows) + 1, []))
        elif token.type == "inline" and rows:
            rows[-1][1].append(cell_text(token.content))
    return rows


def parse(text: str) -> ParsedDocument:
    lines = text.replace("\f", "\n").splitlines()
    tokens = _PARSER.parse("\n".join(lines))
    blocks = Blocks()
    sections = Sections(blocks)
    for i, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or token.map is None:
            continue  # inside a block read whole, or a block's end
        if token.type == "heading_open":
            sections.heading(int(token.tag[1:]), " ".join(tokens[i + 1].content.split()))
        elif token.type == "table_open":
            add_table(blocks, sections.table(), _rows(tokens, i))
        elif token.type not in _SKIPPED:
            start, end = token.map
            sections.paragraph("\n".join(lines[start:end]).strip())
    sections.flush()
    return blocks.document()
