"""A run as a PDF report: the answer with its support per sentence, the citations, and in an
appendix each cited page with the cited words highlighted.

The page images are drawn by the caller (``ingest.highlight``, in a child process: the PDFs are
untrusted); this module only lays them out with fpdf2. Text goes in as plain text, never as
markup. Any script: DejaVu Sans (Debian's ``fonts-dejavu-core``) when the system has it, where a
character the font lacks becomes "?"; without it the core Helvetica, with the text folded to
Latin-1 first ("—" to "-", "ﬁ" to "fi", anything else to "?"), since fpdf2 raises on a character
its core fonts cannot encode.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from masis_core.answers.support import LEVELS_TEXT, cited_sentences, sentence_support
from masis_core.services.reports import citation_source, run_facts
from masis_core.services.runs import RunRecord

FONT_CANDIDATES = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/TTF/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
)
FONT = "DejaVu"
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
        "［": "[",
        "］": "]",
    }
)


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
    def __init__(self, font: Path | None) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.set_margins(15, 15, 15)
        self.pdf.set_auto_page_break(True, margin=15)
        self.glyphs: set[int] | None = None
        self.family = CORE_FONT
        if font is not None:
            self.pdf.add_font(FONT, "", str(font))
            self.family = FONT
            self.glyphs = set(getattr(self.pdf.fonts[FONT.lower()], "cmap", ()))
        self.pdf.add_page()

    def safe(self, text: object) -> str:
        text = unicodedata.normalize("NFKC", "" if text is None else str(text))
        if self.glyphs is not None:
            return "".join(c if c in "\n\t" or ord(c) in self.glyphs else "?" for c in text)
        text = text.translate(_LATIN1)
        return text.encode("latin-1", "replace").decode("latin-1")

    def text(self, text: object, size: float = 10.5, line: float = 5.5) -> None:
        self.pdf.set_font(self.family, size=size)
        self.pdf.multi_cell(
            0, line, self.safe(text), align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )

    def heading(self, text: object, size: float = 13) -> None:
        self.pdf.ln(2)
        self.text(text, size=size, line=size * 0.6)
        self.pdf.ln(1)

    def image(self, png: bytes, width_px: int, height_px: int) -> None:
        """The image as wide as the text, or smaller so that it fits under what is already on
        the page."""
        room = self.pdf.h - self.pdf.b_margin - self.pdf.get_y()
        width = min(self.pdf.epw, room * width_px / max(1, height_px))
        self.pdf.image(io.BytesIO(png), x=self.pdf.l_margin, w=width)

    def output(self) -> bytes:
        return bytes(self.pdf.output())


def run_pdf(rec: RunRecord, pages: Mapping[int, PageShot | None] | None = None) -> bytes:
    """The run as PDF bytes; ``pages`` maps a citation number to its highlighted page."""
    pages = pages or {}
    cited: dict[int, tuple[str, ...]] = {}
    w = _Writer(unicode_font())
    w.heading(rec.question, size=16)
    w.text("\n".join(run_facts(rec)), size=9, line=4.5)
    w.heading("Answer")
    if rec.answer:
        w.text(rec.answer)
        support = sentence_support(rec.answer, rec.citations)
        cited = cited_sentences(support)
        w.heading("Support per sentence", size=11)
        number = 0
        for row in support:
            for s in row:
                number += 1
                how = LEVELS_TEXT[s.level]
                if s.backing is not None:
                    how += f", {round(s.backing.score * 100)}% in [{s.backing.n}]"
                line = f"{number}. {s.text} — {how}"
                if s.issue is not None:
                    line += f" ⚠ {s.issue}"
                w.text(line, size=9, line=4.5)
    elif rec.hitl:
        w.text(f"Waiting for review ({rec.hitl.get('kind')}): {rec.hitl.get('message')}")
    else:
        w.text(f"No answer ({rec.status}{': ' + rec.error if rec.error else ''}).")
    violations = rec.metrics.get("citation_violations") or []
    if violations:
        w.text(f"Removed fabricated citation(s): {', '.join(map(str, violations))}", size=9)
    if rec.citations:
        w.heading("Citations")
        for c in rec.citations:
            w.text(f"[{c['n']}] {citation_source(c)}", size=10)
        for i, c in enumerate(rec.citations):
            w.pdf.add_page()  # one cited page per sheet, drawn as large as it fits
            if i == 0:
                w.heading("Appendix: the cited pages", size=14)
            w.heading(f"[{c['n']}] {citation_source(c)}", size=11)
            for sentence in cited.get(c["n"], ()):
                w.text(f"Cited: “{sentence}”", size=9, line=4.5)
            shot = pages.get(c["n"])
            if shot is None:
                w.text("No page image: a web page, a text note, or the original is gone.", 9)
                w.text(c.get("text") or "", size=8.5, line=4)
                continue
            if not shot.located:
                w.text(f"The passage could not be found on page {shot.page}: no highlight.", 9)
            w.text(f"Page {shot.page}: the cited words in yellow, the rest of the passage blue.", 9)
            w.image(shot.png, shot.width, shot.height)
    return w.output()


def pdf_filename(rec: RunRecord) -> str:
    return f"masis-run-{rec.run_id}.pdf"
