"""Markdown notes (.md, .markdown) with markdown-it-py, cited as a Word document is: by heading
path and paragraph ("Pumps › Maintenance, paragraphs 1–2"), not as "page 1" of a file that has
no pages. A table is cut into blocks of rows, each with the table's header row.

Every other block keeps its source lines as written (a list with its bullets, a code block
with its fences), as the whole file was kept before: the segmenter reads lists and commands
in them. The parser, not a pattern, tells a heading from a ``# comment`` in a code block.
Nothing of the note is lost: a heading with nothing under it (a to-do line, or a sentence
that a ``---`` under it made a heading) is a block of its own, and so are YAML front matter and
the link definitions, which no block holds.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ingest.document import ParsedDocument
from ingest.kinds import Blocks, Sections, cell_text, row_text

# Block structure only: a block's text is its source, so inline markup is never parsed (it
# is what costs: 16 s for 1 MiB of "[", 0.05 s without; docs/ingest-formats.md).
_PARSER = MarkdownIt("commonmark").enable("table").disable("inline")
_FRONT_MATTER_ENDS = ("---", "...")


def _rows(tokens: list[Token], start: int) -> list[str]:
    """The rows of the table that opens at ``tokens[start]``, its header first."""
    rows: list[list[str]] = []
    for token in tokens[start + 1 :]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(cell_text(token.content))
    return [row_text(cells) for cells in rows]


def _front_matter(lines: list[str], blocks: Blocks) -> None:
    """A leading ``---`` … ``---`` block (YAML front matter) as a block of its own; its lines
    are blanked, not removed, so the parser's line numbers still index ``lines``."""
    if not lines or lines[0].strip() != "---":
        return
    for end in range(1, len(lines)):
        if lines[end].strip() in _FRONT_MATTER_ENDS:
            blocks.add("\n".join(lines[1:end]), "front matter")
            lines[: end + 1] = [""] * (end + 1)
            return


def parse(text: str) -> ParsedDocument:
    lines = text.replace("\f", "\n").splitlines()
    blocks = Blocks()
    _front_matter(lines, blocks)
    tokens = _PARSER.parse("\n".join(lines))
    sections = Sections(blocks)
    bare = 0  # the level of the last heading while nothing is under it yet
    read: set[int] = set()  # the lines some block holds

    for i, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or token.map is None:
            continue  # inside a block read whole, or a block's end
        read.update(range(*token.map))
        if token.type == "heading_open":
            level, title = int(token.tag[1:]), " ".join(tokens[i + 1].content.split())
            if title:  # "#" alone is no heading, but still ends a run of paragraphs
                if bare and level <= bare:  # else its words head the subheading's blocks
                    blocks.add(sections.label, sections.label)
                bare = level
            sections.heading(level, title)
            continue
        if token.type == "table_open":
            sections.header_rows(_rows(tokens, i))
        elif token.type != "hr":
            start, end = token.map
            sections.paragraph("\n".join(lines[start:end]).strip())
        bare = 0
    if bare:
        blocks.add(sections.label, sections.label)
    sections.flush()
    # Lines no block holds: link reference definitions ("[homepage]: https://…").
    rest = [line for n, line in enumerate(lines) if line.strip() and n not in read]
    blocks.add("\n".join(rest), "link definitions")
    return blocks.document()
