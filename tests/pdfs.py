"""Small PDFs made on the fly with fpdf2 (core fonts: Latin-1 text only)."""

from __future__ import annotations

from fpdf import FPDF


def make_pdf(pages: list[str]) -> bytes:
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for text in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(10, 10)
        pdf.multi_cell(w=190, h=4.5, text=text)
    return bytes(pdf.output())


def filler(topic: str, n_words: int) -> str:
    """Plausible sentences about ``topic`` so each page has its own vocabulary."""
    base = (
        f"The {topic} section explains how the {topic} works in practice. "
        f"Operators review the {topic} settings before each shift and record the results. "
    )
    words = []
    while len(words) < n_words:
        words.extend(base.split())
    return " ".join(words[:n_words])


def make_outlined_pdf(sections: list[tuple[str, str]], outline: bool = True) -> bytes:
    """One page per (heading, text): the heading printed as a numbered section title and,
    with ``outline``, also an outline entry (bookmark) pointing at its page."""
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for n, (heading, text) in enumerate(sections, start=1):
        pdf.add_page()
        if outline:
            pdf.start_section(heading)
        pdf.set_font("Helvetica", style="B", size=14)
        pdf.set_xy(10, 10)
        pdf.cell(text=f"{n} {heading}")
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(10, 22)
        pdf.multi_cell(w=190, h=4.5, text=text)
    return bytes(pdf.output())
