"""Checkable answers: support per sentence, flags in place, and the cited page highlighted.

The pieces come from ``masis_core.answers.support`` (which evidence sentence backs each answer
sentence, and the evaluator's flags) and ``ingest.highlight`` (the cited words found on the
page); this module only draws them. Document and model text goes through ``masis_core.text.markup``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ingest.highlight import ZOOMS
from masis_core.answers.offline import ALSO_RELEVANT, disagreements, lead_and_others
from masis_core.answers.support import (
    LEVELS_TEXT,
    SentenceSupport,
    cited_sentences,
    sentence_support,
)
from masis_core.services.report_pdf import PageShot, run_pdf
from masis_core.services.reports import citation_source, cited_place, table_frame
from masis_core.services.runs import RunRecord
from masis_core.text.markup import answer_markdown, highlighted_text, quote_block, untrusted
from ui.auth import door
from ui.resources import has_pages, highlighted_page

ICONS = {"quoted": "📄", "strong": "✅", "partial": "🟡", "weak": "🟠", "flagged": "⚠️"}
SHORT_LABEL = 90
# The quoted row's background in a table view: the orange of the highlighted sentences.
HIGHLIGHT = "background-color: rgba(255, 164, 33, 0.35)"


def _sentence_markdown(s: SentenceSupport, real: set[int]) -> str:
    """A sentence with its markers; a flagged one on an orange background with a warning sign,
    so it is seen where it stands, not only counted."""
    cites = "".join(f"[{n}]" for n in s.cited if n in real)
    text = untrusted(s.text)
    if s.issue is not None:
        text = f":orange-background[⚠️ {text}]"
    return f"{text} {cites}".strip()


def answer_markdown_marked(
    answer: str, support: list[list[SentenceSupport]], citations: list[int]
) -> str:
    """The answer as Markdown with its flagged sentences marked in place. Without a flag it is
    the stored answer exactly as ``answer_markdown`` draws it (line breaks and lists kept)."""
    if not any(s.issue is not None for row in support for s in row):
        return answer_markdown(answer, citations)
    real = set(citations)
    return "\n\n".join(" ".join(_sentence_markdown(s, real) for s in row) for row in support)


def answer_sections(
    answer: str,
    support: list[list[SentenceSupport]],
    citations: list[int],
    engine: str,
    question: str,
) -> list[str]:
    """The answer as Markdown blocks. An offline answer is its lead passage, then the "Also
    relevant" label and the other passages, one paragraph each (``lead_and_others``, as the
    exports have it), a passage that disagrees with the lead named above them
    (``offline.disagreements``); a model's answer is drawn whole."""
    lead, others = lead_and_others(answer, engine)
    if others is None:
        return [answer_markdown_marked(answer, support, citations)]
    notes = [f"⚖️ *{untrusted(note)}*" for note in disagreements(question, lead, others)]
    return [
        answer_markdown_marked(lead, support[:1], citations),
        f"**{ALSO_RELEVANT}**",
        *notes,
        answer_markdown_marked(others, support[1:], citations),
    ]


def support_panel(support: list[list[SentenceSupport]], citations: list[dict[str, Any]]) -> None:
    """One expander per answer sentence: the evidence sentence that backs it and how well."""
    by_n = {c["n"]: c for c in citations}
    st.markdown("**Support per sentence**")
    number = 0
    for row in support:
        for s in row:
            number += 1
            icon, level = ICONS[s.level], LEVELS_TEXT[s.level]
            short = s.text if len(s.text) <= SHORT_LABEL else s.text[: SHORT_LABEL - 1] + "…"
            quoted = s.level == "quoted"  # its share is 100% by construction
            score = f" · {round(s.backing.score * 100)}%" if s.backing and not quoted else ""
            with st.expander(f"{icon} {number}. {untrusted(short)} — {level}{score}"):
                if s.issue is not None:
                    st.warning(f"Flagged: {untrusted(s.issue)}", icon="⚠️")
                if s.backing is None:
                    st.caption("No cited passage backs this sentence.")
                    continue
                backing = (s.backing.sentence,)
                where = untrusted(citation_source(by_n.get(s.backing.n, {}), backing))
                st.markdown(f"{'Quoted from' if quoted else 'Backed by'} [{s.backing.n}] {where}:")
                st.markdown(quote_block(s.backing.sentence))
                if not quoted:
                    st.caption(
                        f"{round(s.backing.score * 100)}% of the sentence's content words are "
                        "in this evidence sentence."
                    )


def _no_page(c: dict[str, Any], cited: tuple[str, ...], why: str) -> None:
    st.info(why)
    for sentence in cited or (str(c.get("text") or ""),):
        st.markdown(quote_block(sentence))


def table_view(c: dict[str, Any], cited: tuple[str, ...]) -> bool:
    """Table rows (a sheet's, a CSV file's, a table's in a Word file or web page) drawn as a
    table, numbered as the source numbers them, the rows the answer quotes highlighted; False
    when the passage is no table (it is then drawn as text). One line of cells joined by bars
    was hard to read, and the row that answered hard to find."""
    table = table_frame(c, cited)
    if table is None:
        return False
    frame, quoted = table
    # A table's cells are Markdown on screen: the document's words are escaped, as everywhere.
    frame = frame.map(untrusted).rename(columns=untrusted)
    st.markdown(f"**{untrusted(c.get('filename'))}** — {untrusted(cited_place(c, cited))}")
    if cited and not quoted:
        st.caption("The cited row is not in these rows as quoted; the rows:")
    st.table(
        frame.style.apply(lambda row: [HIGHLIGHT if row.name in quoted else ""] * len(row), axis=1)
    )
    return True


def place_view(c: dict[str, Any], cited: tuple[str, ...]) -> None:
    """A document without pages (Word, slides, a sheet, a web page, a book, an e-mail): its
    cited place by name, and the passage there with the cited sentences highlighted, drawn as
    escaped text; table rows as a table (``table_view``)."""
    if table_view(c, cited):
        return
    shown, found = highlighted_text(str(c.get("text") or ""), cited)
    st.markdown(f"**{untrusted(c.get('filename'))}** — {untrusted(c.get('place'))}")
    if cited and not found:
        st.caption("The cited sentence is not in this passage as quoted; the passage:")
    with st.container(border=True):
        st.markdown(shown)


def page_view(c: dict[str, Any], cited: tuple[str, ...], key: str, workspace_id: str) -> None:
    """The cited page with the cited sentences highlighted (the rest of the passage tinted),
    on the page of a two-page passage that holds them, with a zoom; where there is no page
    to draw, say why and show the words."""
    if c.get("url"):
        _no_page(c, cited, "A web source has no page to draw; the cited words:")
        return
    if not door().preview_allowed(workspace_id, str(c["doc_id"])):
        # Asked before the (cached) drawing: a deleted document's page is never shown again.
        _no_page(
            c,
            cited,
            "This document was deleted from the workspace, so its page is not shown. "
            "The cited words, as the run recorded them:",
        )
        return
    if c.get("place"):
        place_view(c, cited)
        return
    if not has_pages(str(c["doc_id"])):  # a note: no zoom for a page it lacks
        _no_page(c, cited, "A text or Markdown note has no page to draw; the cited words:")
        return
    first = int(c.get("page") or 1)
    last = int(c.get("page_end") or first)
    left, right = st.columns(2)
    zoom = left.segmented_control(
        "Zoom", ZOOMS, default=ZOOMS[0], format_func=lambda z: f"{z}×", key=f"{key}-zoom"
    )
    text = str(c.get("text") or "")
    # The page control comes after the drawing: unset, it shows the page chosen for the cited
    # sentences; a two-page passage then offers the other page.
    page = st.session_state.get(f"{key}-page")
    shot = highlighted_page(str(c["doc_id"]), (first, last), text, cited, page, int(zoom or 1))
    if last > first:
        right.segmented_control(
            "Page",
            list(range(first, last + 1)),
            default=shot.page if shot is not None else None,
            key=f"{key}-page",
            help="The passage spans a page break; first drawn: the page with the cited words.",
        )
    if shot is None:
        _no_page(
            c,
            cited,
            "No page image: the source is a text or Markdown note (or its original is gone), "
            "so the cited words cannot be shown on a page. The cited words:",
        )
        return
    if not shot.located:
        st.warning(
            f"The passage could not be found on page {shot.page} "
            f"({round(shot.share * 100)}% of its words); the page is shown without highlight."
        )
    elif cited and not shot.cited_found:
        st.caption("The cited sentence is not on this page; the passage is tinted blue.")
    v = f", v{c['version']}" if c.get("version") else ""
    st.image(shot.png, caption=f"{untrusted(c.get('filename'))}{v}, page {shot.page}")


def report_pdf(rec: RunRecord) -> bytes:
    """The run as a PDF, each cited page of a PDF source highlighted as on screen. Made when
    the analyst clicks "Export as PDF" (one page drawing per citation, each in a child)."""
    cited = cited_sentences(sentence_support(rec.answer or "", rec.citations))
    shots: dict[int, PageShot | None] = {}
    gate = door()  # one session lookup for the whole export
    for c in rec.citations:
        shot = None
        present = bool(c.get("doc_id")) and gate.preview_allowed(rec.workspace_id, str(c["doc_id"]))
        if present and not c.get("url") and not c.get("place"):  # a PDF page
            first = int(c.get("page") or 1)
            span = (first, int(c.get("page_end") or first))
            shot = highlighted_page(
                str(c["doc_id"]), span, str(c.get("text") or ""), cited.get(c["n"], ())
            )
        shots[c["n"]] = (
            None
            if shot is None
            else PageShot(shot.png, shot.page, shot.located, shot.width, shot.height)
        )
    return run_pdf(rec, shots)
