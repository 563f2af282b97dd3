"""A run as a PDF report: the answer with its support per sentence, the citations, and in an
appendix each cited page with the cited words highlighted.

The page images are drawn by the caller (``ingest.highlight``, in a child process: the PDFs are
untrusted); this module only lays them out with fpdf2. Text goes in as plain text, never as
markup, without bidi controls (``masis_core.text.markup.plain``). Any script: DejaVu Sans
(Debian's ``fonts-dejavu-core``) when the system has it, where a character the font lacks
becomes "?"; without it the core Helvetica, with the text folded to Latin-1 first ("—" to "-",
"ﬁ" to "fi", anything else to "?"), since fpdf2 raises on a character its core fonts cannot
encode.

A document's own "[7]" is shown as "［7］" on screen, so that it is never taken for one of the
run's citations; the PDF keeps that difference. DejaVu has no full-width brackets, and the
NFKC folding turned them into "[7]", a real-looking citation: they print as "⟦7⟧" ("{7}" in
Latin-1). Arabic and Hebrew are shaped by HarfBuzz (fpdf2's text shaping, ``uharfbuzz``):
right to left, letters joined. Shaping is switched on only for a run with right-to-left text:
it about doubles the time of a text-heavy export (docs/measurements/performance.md). Without
uharfbuzz the export says that right-to-left text is printed unshaped.
"""

from __future__ import annotations

import importlib.util
import io
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos

from masis_core.answers.offline import ALSO_RELEVANT, disagreements, lead_and_others
from masis_core.answers.support import LEVELS_TEXT, cited_sentences, sentence_support
from masis_core.services.reports import answer_title, citation_source, run_facts
from masis_core.services.runs import RunRecord
from masis_core.text.markup import plain
from masis_core.text.sentences import defang

FONT_CANDIDATES = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/TTF/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
)
FONT = "DejaVu"
# A cited page's image is drawn at least this tall (mm) under its caption; the sentences
# cited from it go below it when they fit beside that, else on the next sheet.
MIN_IMAGE_MM = 150
CORE_FONT = "Helvetica"
# Typography the core font cannot encode, in its Latin-1 spelling.
_LATIN1 = str.maketrans(
    {
        "—": "-",
        "–": "-",
        "‐": "-",
        "“": '"',
        "”": '"',
        "„": '"',
        "‘": "'",
        "’": "'",
        "…": "...",
        "•": "-",
        "→": "->",
        "←": "<-",
        "≤": "<=",
        "≥": ">=",
        "✓": "v",
        "⚠": "!",
        "［": "{",
        "］": "}",
    }
)
# The defanged marker's brackets in glyphs DejaVu has, kept apart from a citation's "[n]".
_DEFANGED = str.maketrans({"［": "⟦", "］": "⟧"})
UNSHAPED_NOTE = (
    "Right-to-left text (Arabic, Hebrew) is printed unshaped in this export: its letters in "
    "stored order and not joined. Install uharfbuzz to print it as written."
)


def can_shape() -> bool:
    """Whether fpdf2 can shape text: it needs the uharfbuzz package."""
    return importlib.util.find_spec("uharfbuzz") is not None


def right_to_left(text: str) -> bool:
    return any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)


@dataclass(frozen=True)
class PageShot:
    """A cited page as drawn for the appendix."""

    png: bytes
    page: int
    located: bool
    width: int
    height: int


def unicode_font() -> Path | None:
    """The first DejaVu Sans on the system."""
    return next((p for p in FONT_CANDIDATES if p.is_file()), None)


class _Writer:
    def __init__(self, font: Path | None, shape: bool = False) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.set_margins(15, 15, 15)
        self.pdf.set_auto_page_break(True, margin=15)
        self.glyphs: set[int] | None = None
        self.family = CORE_FONT
        self.shaped = False
        if font is not None:
            self.pdf.add_font(FONT, "", str(font))
            self.family = FONT
            self.glyphs = set(getattr(self.pdf.fonts[FONT.lower()], "cmap", ()))
            if shape and can_shape():
                self.pdf.set_text_shaping(True)
                self.shaped = True
        self.pdf.add_page()

    def safe(self, text: object) -> str:
        text = plain(text)
        if self.glyphs is not None:
            text = unicodedata.normalize("NFKC", text.translate(_DEFANGED))
            return "".join(c if c in "\n\t" or ord(c) in self.glyphs else "?" for c in text)
        text = unicodedata.normalize("NFKC", text.translate(_LATIN1)).translate(_LATIN1)
        return text.encode("latin-1", "replace").decode("latin-1")

    def text(self, text: object, size: float = 10.5, line: float = 5.5) -> None:
        self.pdf.set_font(self.family, size=size)
        self.pdf.multi_cell(
            0, line, self.safe(text), align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )

    def height(self, text: object, size: float = 10.5, line: float = 5.5) -> float:
        """How tall ``text`` would print, in mm, without printing it."""
        self.pdf.set_font(self.family, size=size)
        height = self.pdf.multi_cell(
            0, line, self.safe(text), dry_run=True, output=MethodReturnValue.HEIGHT
        )
        return float(height) if isinstance(height, int | float) else 0.0

    def heading(self, text: object, size: float = 13) -> None:
        self.pdf.ln(2)
        self.text(text, size=size, line=size * 0.6)
        self.pdf.ln(1)

    def image(self, png: bytes, width_px: int, height_px: int, below: float = 0.0) -> None:
        """The image as wide as the text, or smaller so that it fits under what is already on
        the page, leaving ``below`` mm for what follows it when the image keeps at least
        ``MIN_IMAGE_MM`` (else what follows runs on to the next sheet)."""
        # A hair under the room left: an image exactly as tall tripped the page break.
        room = self.pdf.h - self.pdf.b_margin - self.pdf.get_y() - 0.5
        if room - below >= MIN_IMAGE_MM:
            room -= below
        width = min(self.pdf.epw, room * width_px / max(1, height_px))
        self.pdf.image(io.BytesIO(png), x=self.pdf.l_margin, w=width)

    def output(self) -> bytes:
        return bytes(self.pdf.output())


def shown(text: object) -> str:
    """Untrusted text as the screen shows it: a look-alike of a citation marker defanged."""
    return defang("" if text is None else str(text))


def _support(w: _Writer, rec: RunRecord) -> dict[int, tuple[str, ...]]:
    """The answer (the lead passage, then "Also relevant" apart, as on screen), its support
    per sentence, and the sentences each citation backs."""
    lead, others = lead_and_others(rec.answer or "", rec.engine)
    w.text(lead)
    if others is not None:
        w.heading(ALSO_RELEVANT, size=11)
        for note in disagreements(rec.question, lead, others):
            w.text(note)
        w.text(others)
    support = sentence_support(rec.answer or "", rec.citations)
    w.heading("Support per sentence", size=11)
    number = 0
    for row in support:
        for s in row:
            number += 1
            how = LEVELS_TEXT[s.level]
            if s.backing is not None and s.level == "quoted":
                how += f" from [{s.backing.n}]"
            elif s.backing is not None:
                how += f", {round(s.backing.score * 100)}% in [{s.backing.n}]"
            line = f"{number}. {shown(s.text)} — {how}"
            if s.issue is not None:
                line += f" ⚠ {shown(s.issue)}"
            w.text(line, size=9, line=4.5)
    return cited_sentences(support)


def _appendix(
    w: _Writer,
    rec: RunRecord,
    pages: Mapping[int, PageShot | None],
    cited: Mapping[int, tuple[str, ...]],
) -> None:
    for i, c in enumerate(rec.citations):
        shot = pages.get(c["n"])
        # A cited page gets a sheet of its own, drawn as large as it fits; a passage without
        # one (a web page, a note) runs on: a sheet each left them near-empty.
        if i == 0 or shot is not None:
            w.pdf.add_page()
        if i == 0:
            w.heading("Appendix: the cited pages", size=14)
        w.heading(f"[{c['n']}] {shown(citation_source(c, cited.get(c['n'], ())))}", size=11)
        if shot is None:
            for line in _cited_lines(cited.get(c["n"], ())):
                w.text(line, size=9, line=4.5)
            w.text(
                "No page image: a web page, a text note, a document without pages (cited to "
                "the place above), or the original is gone.",
                9,
            )
            w.text(shown(c.get("text")), size=8.5, line=4)
            continue
        # The caption, then the image, then the cited sentences: printed before the image,
        # a long list of them had shrunk it to a strip or pushed it onto the next sheet,
        # away from its caption.
        if not shot.located:
            w.text(f"The passage could not be found on page {shot.page}: no highlight.", 9)
        w.text(f"Page {shot.page}: the cited words in yellow, the rest of the passage blue.", 9)
        lines = _cited_lines(cited.get(c["n"], ()))
        w.image(shot.png, shot.width, shot.height, below=sum(w.height(t, 9, 4.5) for t in lines))
        for line in lines:
            w.text(line, size=9, line=4.5)


def _cited_lines(sentences: Iterable[str]) -> list[str]:
    return [f"Cited: “{shown(sentence)}”" for sentence in sentences]


def run_pdf(rec: RunRecord, pages: Mapping[int, PageShot | None] | None = None) -> bytes:
    """The run as PDF bytes; ``pages`` maps a citation number to its highlighted page."""
    cited: Mapping[int, tuple[str, ...]] = {}
    texts = [rec.question, rec.answer or "", str((rec.hitl or {}).get("message") or "")]
    texts += [f"{citation_source(c)} {c.get('text') or ''}" for c in rec.citations]
    rtl = right_to_left(" ".join(texts))
    w = _Writer(unicode_font(), shape=rtl)  # shaping doubles the time: only where it matters
    w.heading(shown(rec.question), size=16)
    w.text("\n".join(run_facts(rec)), size=9, line=4.5)
    if rtl and w.glyphs is not None and not w.shaped:
        w.text(UNSHAPED_NOTE, size=9, line=4.5)
    w.heading(answer_title(rec))
    if rec.answer:
        cited = _support(w, rec)
    elif rec.hitl:
        w.text(f"Waiting for review ({rec.hitl.get('kind')}): {shown(rec.hitl.get('message'))}")
    else:
        w.text(f"No answer ({rec.shown_status}{': ' + shown(rec.error) if rec.error else ''}).")
    violations = rec.metrics.get("citation_violations") or []
    if violations:
        w.text(f"Removed fabricated citation(s): {', '.join(map(str, violations))}", size=9)
    if rec.citations:
        w.heading("Citations")
        for c in rec.citations:
            w.text(f"[{c['n']}] {shown(citation_source(c, cited.get(c['n'], ())))}", size=10)
        _appendix(w, rec, pages or {}, cited)
    return w.output()


def pdf_filename(rec: RunRecord) -> str:
    return f"masis-run-{rec.run_id}.pdf"
