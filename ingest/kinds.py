"""Word, PowerPoint, Excel, CSV, HTML, EPUB and e-mail files: which kind a file is, the checks
a zipped kind passes before any library opens it, and the blocks their text is cut into, each
with the place a citation points to (docs/ingest-formats.md).

Each kind is one ``Kind`` in ``KINDS`` and a parser module of its own (``ingest.word``,
``ingest.slides`` ...) with ``parse(data)``: adding a kind is that file and one line.
The parsers run in the parse child (``ingest.isolate``), which here also gets a memory limit: a
library asked to build a million-row sheet fails that file alone, with a reason.
"""

from __future__ import annotations

import datetime
import importlib
import io
import logging
import multiprocessing as mp
import resource
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ingest.document import Page, ParsedDocument, clean_text
from masis_core.errors import DocumentError
from masis_core.text.places import PATH_SEPARATOR  # "3 Methods › 3.2 Sampling, paragraphs 1–2"
from masis_core.text.tables import CELL, looks_like_header

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kind:
    """A kind of file the Library reads beside PDF and text. The parser is named, not
    imported: its library (python-docx, openpyxl ...) loads only when a file of the kind is
    read (``preload``), not in every process that lists the suffixes (importing all of them
    takes seconds; docs/measurements/performance.md)."""

    name: str  # "word": how the code and the tests name it
    suffixes: tuple[str, ...]
    label: str  # "Word document": how a reason names it
    # The part that makes a zip this kind, whatever the file is called; zipped kinds only.
    zip_marker: str | None = None
    module: str = ""  # ``ingest.<module>``, whose ``parse(data)`` reads it; the name if empty
    # The file's name heads its rows: often their only name for what they are about
    # ("nile.csv" holds "year, volume" and no word of the Nile; ``file_title``).
    titled: bool = False

    @property
    def zipped(self) -> bool:
        return self.zip_marker is not None

    def parser(self) -> Callable[..., ParsedDocument]:
        """The module's ``parse``, imported on first use."""
        module = importlib.import_module(f"ingest.{self.module or self.name}")
        parse: Callable[..., ParsedDocument] = module.parse
        return parse

    def read(self, data: bytes, filename: str) -> ParsedDocument:
        if self.titled:
            return self.parser()(data, title=file_title(filename))
        return self.parser()(data)


# Every kind, one line each; a zip is recognised by the first whose marker it holds.
# Modules are named apart from the standard library's csv, html and email.
KINDS = (
    Kind("word", (".docx", ".docm"), "Word document", "word/document.xml"),
    Kind("slides", (".pptx", ".pptm"), "PowerPoint file", "ppt/presentation.xml"),
    Kind("spreadsheet", (".xlsx", ".xlsm"), "Excel workbook", "xl/workbook.xml", titled=True),
    Kind("csv", (".csv", ".tsv"), "CSV file", module="delimited", titled=True),
    Kind("html", (".html", ".htm", ".xhtml"), "web page", module="webpage"),
    Kind("epub", (".epub",), "EPUB book", "META-INF/container.xml", module="ebook"),
    Kind("email", (".eml",), "e-mail", module="mail"),
)
BY_NAME = {kind.name: kind for kind in KINDS}
SUFFIXES = tuple(s for kind in KINDS for s in kind.suffixes)

# A zip that would unpack to more than this is refused before anything is extracted: Office
# and EPUB files of real documents unpack to tens of MB (the largest test file here: 9 MB).
MAX_UNZIPPED_MB = 512
MAX_ZIP_MEMBERS = 20_000
# What a parse child may allocate beyond what it inherited from the parent.
PARSE_MEMORY_MB = 1536
# An entity declaration is in the DTD, at the head of an XML part.
_HEAD_BYTES = 64 * 1024
_XML_PARTS = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx")

# A block is one chunk: under the default 200-word chunk, so chunking seldom cuts it, and big
# enough to hold a paragraph or a dozen table rows with their header.
BLOCK_WORDS = 150


def suffix_kind(filename: str) -> Kind | None:
    name = filename.lower()
    return next((kind for kind in KINDS if name.endswith(kind.suffixes)), None)


def kind_of(data: bytes, filename: str) -> Kind | None:
    """The kind by content for a zip (a .docx renamed .zip is still a Word file), else by
    suffix; ``None`` for a kind this module does not read."""
    if data[:4] == b"PK\x03\x04":
        try:
            names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return suffix_kind(filename)
        found = next((kind for kind in KINDS if kind.zip_marker in names), None)
        if found is not None:
            return found
    return suffix_kind(filename)


def open_zip(data: bytes, kind: str) -> zipfile.ZipFile:
    """The file as a zip, refused before extraction when it would unpack too large (a zip
    bomb), has too many members or declares XML entities (an XXE attack: Office and EPUB
    files never need one, so none is resolved, or even parsed)."""
    name = BY_NAME[kind].label
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(
            f"corrupt: the {name} is not a readable zip archive (damaged or truncated: {exc})"
        ) from exc
    if len(members) > MAX_ZIP_MEMBERS:
        raise DocumentError(
            f"refused: the {name} holds {len(members)} files, over {MAX_ZIP_MEMBERS}"
        )
    unzipped = sum(m.file_size for m in members)
    if unzipped > MAX_UNZIPPED_MB * 1024 * 1024:
        raise DocumentError(
            f"refused: the {name} would unpack to {unzipped / 2**20:,.0f} MB, over the "
            f"{MAX_UNZIPPED_MB} MB limit (a zip bomb?); nothing was extracted"
        )
    for member in members:
        if member.filename.lower().endswith(_XML_PARTS) and _declares_entities(archive, member):
            raise DocumentError(
                f"unsafe: the {name}'s part {member.filename} declares XML entities; "
                "they are never resolved, and the file is not read"
            )
    return archive


def _declares_entities(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    try:
        with archive.open(member) as fh:
            head = fh.read(_HEAD_BYTES)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise DocumentError(
            f"corrupt: the part {member.filename} cannot be unpacked ({exc})"
        ) from exc
    return b"<!ENTITY" in head.upper()


def limit_memory(extra_mb: int = PARSE_MEMORY_MB) -> None:
    """In a parse child only: cap its address space at what it has now plus ``extra_mb``
    (a fork inherits the parent's mappings: the embedder, Chroma). The parent is never
    limited, so a direct call (a test) runs unbounded."""
    if mp.parent_process() is None:
        return
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            vm_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm_kb * 1024 + extra_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def preload(filename: str) -> None:
    """Import the parser of this file's kind here, before the parse child is forked, so each
    child inherits it (an import costs once, instead of once a file)."""
    kind = suffix_kind(filename)
    if kind is not None:
        kind.parser()


def parse_kind(data: bytes, filename: str) -> ParsedDocument:
    """Parse a file of one of these kinds (in the parse child); a one-line reason otherwise."""
    kind = kind_of(data, filename)
    if kind is None:
        listed = ", ".join(["PDF", ".txt", ".md", *SUFFIXES])
        raise DocumentError(f"unsupported: '{filename}' is not a kind the Library reads ({listed})")
    name = kind.label
    if kind.zipped and data[:4] != b"PK\x03\x04":
        raise DocumentError(f"corrupt: '{filename}' is not a {name} (not a zip archive)")
    kind.parser()
    limit_memory(PARSE_MEMORY_MB)
    try:
        return kind.read(data, filename)
    except DocumentError:
        raise
    except MemoryError as exc:
        raise DocumentError(
            f"too large: reading the {name} needed more than {PARSE_MEMORY_MB} MB of memory"
        ) from exc
    except Exception as exc:  # a library's own error on a malformed file: one line
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        log.info("%s could not be read: %s: %s", filename, type(exc).__name__, first)
        raise DocumentError(
            f"corrupt: the {name} could not be read ({type(exc).__name__}: {first})"
        ) from exc


def file_title(filename: str) -> str:
    """The file's name as words, to head a table that has no heading of its own: its rows
    are then found, and judged, by what the name says they are about ("nile.csv": "What was
    the Nile volume in 1913?")."""
    name = filename.rsplit("/", 1)[-1].rsplit(" › ", 1)[-1]  # an attachment: "memo.eml › x.csv"
    stem = name.rsplit(".", 1)[0]
    return " ".join(stem.replace("_", " ").replace("-", " ").replace("|", " ").split())


def words(text: str) -> int:
    return len(text.split())


def span(noun: str, first: int, last: int) -> str:
    """'paragraph 4', 'paragraphs 4–6'."""
    plural = f"{noun}es" if noun.endswith(("x", "s", "ch")) else f"{noun}s"  # "text boxes"
    return f"{noun} {first}" if first == last else f"{plural} {first}–{last}"


def extent_in_rows(rows: int) -> str:
    """'1 row', '1,118 rows': a sheet's or a CSV file's size, as its document's extent."""
    return f"{rows:,} row{'s' if rows != 1 else ''}"


def within(section: str, detail: str) -> str:
    return f"{section}, {detail}" if section and detail else section or detail


@dataclass
class Blocks:
    """The pages of a document without pages: blocks of paragraphs or table rows, each
    labelled with its place. ``number`` is the block's position unless the kind has its
    own (a slide's number, a chapter's)."""

    pages: list[Page] = field(default_factory=list)

    def add(
        self,
        text: str,
        place: str,
        number: int | None = None,
        head: int | None = None,
        rows: tuple[int, ...] | None = None,
    ) -> None:
        """``head``: a table block's head lines, ``text`` then already clean (cleaning can
        drop or join lines, and the count must match the text stored); ``rows`` its row
        lines' numbers, kept only when they match its lines one to one."""
        text = clean_text(text) if head is None else text
        if rows is not None and len(text.split("\n")) - (head or 0) != len(rows):
            rows = None
        if text:
            page = Page(number or len(self.pages) + 1, text, place=place, head=head, rows=rows)
            self.pages.append(page)

    def paragraphs(
        self,
        section: str,
        items: Sequence[tuple[int, str]],
        noun: str = "paragraph",
        number: int | None = None,
    ) -> None:
        """Numbered paragraphs of one section, grouped up to ``BLOCK_WORDS`` words, each
        block headed by the section's heading path: a paragraph is found by its heading's
        words too ("Sampling"), as a row by its column names."""
        head = f"{section}\n\n" if section else ""
        for group in _grouped(items, words(head)):
            label = within(section, span(noun, group[0][0], group[-1][0]))
            self.add(head + "\n\n".join(t for _, t in group), label, number)

    def table(
        self,
        where: str,
        header: str,
        rows: Sequence[tuple[int, str]],
        noun: str = "row",
        number: int | None = None,
    ) -> None:
        """Rows (numbered as the source numbers them) grouped up to ``BLOCK_WORDS`` words,
        the header line repeated at the head of every block: a row is never without its
        column names."""
        header = clean_text(header)
        head = len(header.split("\n")) if header else 0
        for group in _grouped(rows, words(header)):
            body = clean_text("\n".join(t for _, t in group))
            label = within(where, span(noun, group[0][0], group[-1][0]))
            numbers = tuple(n for n, _ in group)
            self.add(f"{header}\n{body}" if header else body, label, number, head, numbers)

    def rows(self) -> int:
        """The table rows the blocks hold (their headers aside)."""
        return sum(len(p.rows or ()) for p in self.pages)

    def document(self, count: int | None = None) -> ParsedDocument:
        return ParsedDocument(self.pages, count if count is not None else len(self.pages))


class Sections:
    """The heading path so far and the numbered paragraphs under its last heading, for the
    kinds cited by heading path and paragraph (Word, web pages, Markdown). ``prefix`` and
    ``number`` place the path inside a larger document (an EPUB's chapter)."""

    def __init__(self, blocks: Blocks, prefix: str = "", number: int | None = None) -> None:
        self.blocks, self.prefix, self.number = blocks, prefix, number
        self.path: list[tuple[int, str]] = []
        self.items: list[tuple[int, str]] = []
        self.count = 0  # paragraphs of the section so far
        self.tables = 0
        # The section's text boxes (a Word shape's text), cited apart: "Features, text box 2".
        self.boxes: list[tuple[int, str]] = []
        self.box_count = 0

    @property
    def headings(self) -> str:
        """The heading path, as it heads the section's blocks."""
        return PATH_SEPARATOR.join(text for _, text in self.path)

    @property
    def label(self) -> str:
        return within(self.prefix, self.headings)

    def heading(self, level: int, text: str) -> None:
        """A heading of ``level`` (1 the highest) ends the section; an empty one is no
        heading, but still ends it."""
        self.flush()
        if text:
            self.path = [(lv, t) for lv, t in self.path if lv < level] + [(level, text)]
            self.count = self.tables = self.box_count = 0

    def paragraph(self, text: str) -> None:
        self.count += 1
        self.items.append((self.count, text))

    def box(self, text: str) -> None:
        """A text box anchored in the section (its lines kept apart)."""
        self.box_count += 1
        self.boxes.append((self.box_count, text))

    def _next_table(self) -> str:
        """The place of the section's next table (the paragraphs before it are flushed)."""
        self.flush()
        self.tables += 1
        return within(self.label, f"table {self.tables}")

    def header_rows(self, rows: list[str]) -> None:
        """The section's next table, its first row the header (Word, Markdown), each block
        headed by the heading path: a table is found by its heading's words too."""
        add_header_rows(self.blocks, self._next_table(), rows, self.headings, self.number)

    def cells(self, rows: Iterable[tuple[int, Sequence[str]]]) -> None:
        """The section's next table, as cells whose header is guessed (web pages)."""
        add_table(self.blocks, self._next_table(), rows, self.number, self.headings)

    def flush(self) -> None:
        self.blocks.paragraphs(self.label, self.items, number=self.number)
        self.blocks.paragraphs(self.label, self.boxes, noun="text box", number=self.number)
        self.items, self.boxes = [], []


def _grouped(items: Iterable[tuple[int, str]], reserved: int) -> list[list[tuple[int, str]]]:
    groups: list[list[tuple[int, str]]] = []
    size = 0
    for n, text in items:
        if not text.strip():
            continue
        n_words = words(text)
        if groups and size + n_words + reserved <= BLOCK_WORDS:
            groups[-1].append((n, text))
            size += n_words
        else:
            groups.append([(n, text)])
            size = n_words
    return groups


def row_text(cells: Iterable[object]) -> str:
    """A table row as one line, cells joined by ' | ', empty trailing cells dropped."""
    values = ["" if c is None else " ".join(str(c).split()) for c in cells]
    while values and not values[-1]:
        values.pop()
    return CELL.join(values)


def cell_text(value: object) -> str:
    """A cell as an analyst reads it: 1234.0 as '1234', a date without a midnight time."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return "" if value is None else " ".join(str(value).split())


def _lines(*lines: str) -> str:
    return "\n".join(line for line in lines if line)


def add_header_rows(
    blocks: Blocks, where: str, rows: list[str], above: str = "", number: int | None = None
) -> None:
    """A table whose first row is its header, as blocks of rows numbered from the header's 1,
    each with the header; a header alone is kept as row 1. ``above`` (a section's heading
    path) heads every block, over the header."""
    rows = [r for r in rows if r]
    if len(rows) == 1:  # a header alone, or a one-row box around text
        blocks.add(_lines(above, rows[0]), within(where, "row 1"), number)
    elif rows:
        body = list(enumerate(rows[1:], start=2))
        blocks.table(where, _lines(above, rows[0]), body, number=number)


MAX_PREAMBLE_ROWS = 20
MAX_PREAMBLE_WORDS = 40  # longer notes are a block of their own, not every block's head


def _preamble(
    filled: list[tuple[int, Sequence[str]]],
) -> tuple[list[str], list[tuple[int, Sequence[str]]]]:
    """A statistics office's export opens with lines of notes (one or two cells: "Series
    title:  (Seas) Unemployment Rate") over a wider table whose header follows them. Read as
    rows they hid the header, and every row was quoted unlabelled. The notes' lines, and the
    rows from the header on; no notes unless a header follows them."""
    widest = max(sum(map(bool, cells)) for _, cells in filled)
    k = 0
    while k < min(len(filled), MAX_PREAMBLE_ROWS) and 2 * sum(map(bool, filled[k][1])) <= widest:
        k += 1
    if widest < 3 or k == 0 or k == len(filled) or not looks_like_header(filled[k][1]):
        return [], filled
    return [" ".join(c.strip() for c in cells if c.strip()) for _, cells in filled[:k]], filled[k:]


def add_table(
    blocks: Blocks,
    where: str,
    rows: Iterable[tuple[int, Sequence[str]]],
    number: int | None = None,
    above: str = "",
) -> None:
    """A table's numbered rows as blocks: its first filled row is the header when it looks
    like one, else every row is data. ``above`` as in ``add_header_rows``."""
    filled = [(n, cells) for n, cells in rows if any(cells)]
    if not filled:
        return
    notes, filled = _preamble(filled)
    if notes and words(" ".join(notes)) <= MAX_PREAMBLE_WORDS:
        above = _lines(above, *notes)  # "Series title: (Seas) Unemployment Rate" heads the rows
    elif notes:
        blocks.add("\n".join(notes), within(where, "notes above the table"), number)
    if len(filled) > 2 and sum(map(bool, filled[0][1])) == 1 < max(len(c) for _, c in filled):
        # One filled cell over a wider table is its title ("Parts list"): it heads every block
        # with the heading path, and the header is looked for in the row under it.
        above = _lines(above, row_text(filled[0][1]))
        filled = filled[1:]
    first = filled[0][1]
    header = row_text(first) if looks_like_header(first) else ""
    body = filled[1:] if header else filled
    rows_text = [(n, row_text(cells)) for n, cells in body]
    blocks.table(where, _lines(above, header), rows_text, number=number)
