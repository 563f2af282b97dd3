"""The passage picker: a paused offline run's three candidates, each one click from the answer.

The offline engine quotes; it does not read. When its confidence stays under the bar, the
analyst is the better reader: the review shows the lead and the two options beside it (the
lead's section's second-best window and the next section's best), each with its section's
heading, its place and its words, and "This answers it" completes the run with that passage
as the lead, recorded as a verdict (``masis_core.graph.nodes.human_review``). A candidate that
contradicts another is shown beside it (the conflict view), never as a plain answer.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from masis_core.policy import POLICY
from masis_core.text.markup import quote_block, untrusted
from masis_core.text.sentences import sentences
from ui.resources import has_pages, quoted_page

NAMES = ("The lead", "Option 1", "Option 2")
MIN_PICKS = POLICY.min_picks


def _name(n: int) -> str:
    return NAMES[n] if n < len(NAMES) else f"Option {n}"


def page_of(c: dict[str, Any]) -> int | None:
    """The page of the card's first quoted sentence, as its citation shows it: the chunk's
    first page unless the chunk runs over a page break, then the page found in the PDF."""
    first, last = c.get("page"), c.get("page_end")
    if first is None or not last or last <= first or not c.get("doc_id") or c.get("place"):
        return first
    if not has_pages(str(c["doc_id"])):
        return int(first)
    said = sentences(str(c.get("text") or ""))
    found = quoted_page(str(c["doc_id"]), (int(first), int(last)), said[0]) if said else None
    return int(first) if found is None else found


def _where(c: dict[str, Any]) -> str:
    """The document and place (or page) under the title; what the title says already (a
    card without a heading is titled by its document and place) is not said twice."""
    number = page_of(c)
    page = f"page {number}" if number is not None else ""
    if c.get("heading"):
        place = c.get("place") or page
        name = untrusted(c.get("filename") or "")
        return ", ".join(p for p in (f"**{name}**" if name else "", untrusted(place)) if p)
    return "" if c.get("place") else page


def _card(c: dict[str, Any], by_n: dict[int, dict[str, Any]], run_id: str) -> bool:
    """One candidate, titled by its section's heading (else its document and place); True
    when its button was pressed."""
    with st.container(border=True):
        title = c.get("title") or c.get("heading") or c.get("filename") or ""
        where = _where(c)
        head = f"**{_name(c['n'])}** · *{untrusted(title)}*" if title else f"**{_name(c['n'])}**"
        st.markdown(f"{head} — {where}" if where else head)
        if c.get("clashes"):
            for clash in c["clashes"]:
                other = by_n.get(clash["n"])
                st.warning(
                    f"{_name(c['n'])} and {_name(clash['n']).lower()} disagree "
                    f"({untrusted(clash['why'])}): read both before choosing.",
                    icon="⚖️",
                )
                left, right = st.columns(2)
                left.markdown(quote_block(c["text"]))
                if other is not None:
                    right.markdown(quote_block(other["text"]))
        else:
            st.markdown(quote_block(c["text"]))
        return st.button(
            "This answers it",
            key=f"pick-{run_id}-{c['n']}",
            type="primary" if c["n"] == 0 else "secondary",
        )


def passage_picker(run_id: str, candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The candidates as cards; the response of the one picked, else None."""
    st.markdown(
        "Which passage answers the question? Your pick completes the run with it as the "
        "answer, marks it 👍 and teaches this workspace's confidence (a lead passed over "
        f"counts as a wrong answer) and, from {MIN_PICKS} picks on, how it scores passages."
    )
    by_n = {c["n"]: c for c in candidates}
    for c in candidates:
        if _card(c, by_n, run_id):
            return {"action": "accept", "lead": c["n"]}
    st.caption("None of them? Rephrase the question or cancel the run below.")
    return None
