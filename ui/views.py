"""Drawing a run: the cited answer and the inline review form (its trace: ``ui.trace``).

Shared by the research and runs pages. Everything here renders what
``masis_core.services.runs`` returns; no retrieval or routing happens in the UI.
"""

from __future__ import annotations

import contextlib
from typing import Any

import streamlit as st

from masis_core.answers.support import cited_sentences, sentence_support
from masis_core.errors import MasisError
from masis_core.retrieval.vocabulary import language_notice, recorded_unknown
from masis_core.services.reports import answer_title, asked_by, citation_source, is_final
from masis_core.services.runs import RunRecord
from masis_core.storage.registry import Workspace
from masis_core.text.markup import (
    counted,
    escape_markdown,
    percent,
    plain,
    quote_block,
    safe_link,
    untrusted,
)
from ui.auth import door, principal
from ui.evidence import answer_sections, page_view, support_panel
from ui.picker import passage_picker

ACTION_LABELS = {
    "rephrase": "Rephrase the question",
    "retry_lower_threshold": "Retry with a lower similarity threshold",
    "choose_source": "Prefer one of the conflicting sources",
    "accept": "Accept the answer",
    "cancel": "Cancel this run",
}
REVIEW_TITLES = {
    "no_evidence": "No qualifying evidence",
    "conflict": "Your sources disagree",
    "low_confidence": "Low confidence",
}


def kept_because(c: dict[str, Any]) -> str:
    """Why retrieval kept a passage, in the analyst's words."""
    dense = f"similarity {float(c.get('score') or 0):.3f}"
    keyword = (
        f"keyword rank {c.get('keyword_rank')}, "
        f"{round(float(c.get('coverage') or 0) * 100)}% of the question's keyword weight"
    )
    why = {
        "dense": f"kept for meaning ({dense})",
        "keyword": f"kept for exact terms ({keyword}; {dense})",
        "both": f"kept for meaning and exact terms ({dense}; {keyword})",
        "row": f"kept for the table row the question names ({keyword}; {dense})",
    }.get(c.get("kept_by") or "", dense)
    if c.get("soft"):
        why += f"; word match {float(c['soft']):.2f}"
    return why


def _citation(c: dict[str, Any], ws: Workspace, key: str, cited: tuple[str, ...] = ()) -> None:
    # Open whenever its page is shown: a rerun redraws the expander and would fold it away.
    label = f"[{c['n']}] {untrusted(citation_source(c, cited))}"
    with st.expander(label, expanded=bool(st.session_state.get(key))):
        if c.get("url"):
            st.markdown(safe_link(c["url"], c["url"]))
        st.markdown(quote_block(c.get("text") or ""))
        if c.get("score") is not None:
            st.caption(f"{kept_because(c)} · chunk `{c.get('chunk_id')}`")
        shown = "Show the place" if c.get("place") else "Show the page"
        if (c.get("doc_id") or c.get("url")) and st.toggle(shown, key=key):
            page_view(c, cited, key, ws.id)


def not_yours(rec: RunRecord) -> str:
    """What a viewer is told on another account's run (``Door.may_review``)."""
    who = untrusted(rec.asked_by) if rec.asked_by else "another account"
    return f"Asked by {who}: its review and verdict are theirs, or an editor's, to give."


# What a run's answer is until the run completes: a draft, never shown as final.
def render_answer(rec: RunRecord, ws: Workspace) -> None:
    if not rec.answer:
        return
    if is_final(rec):
        st.subheader("Answer")
    else:
        st.subheader(untrusted(answer_title(rec, yours=door().may_review(rec))))
        st.caption(
            "The run stopped before this answer was final; it is the draft the review is "
            "about. Your verdict (👍 / 👎) and follow-up questions come with the final answer."
        )
    cols = st.columns(3)
    if rec.confirmed_by:  # the analyst's word, not the figure the run paused on
        cols[0].metric("Confidence", "Confirmed", help=f"Confirmed by {rec.confirmed_by}")
    elif rec.confidence is not None:
        cols[0].metric("Confidence", percent(rec.confidence))
    cols[1].metric("Citations", len(rec.citations))
    cols[2].metric("Retries", len(rec.metrics.get("retry_reasons") or []))
    if rec.confirmed_by:
        model = (
            f" The model's own estimate for this passage was {percent(rec.confidence)}; the "
            "confirmation stands in for it."
            if rec.confidence is not None
            else ""
        )
        st.caption(f"Confirmed by {untrusted(rec.confirmed_by)} at review.{model}")
    support = sentence_support(rec.answer, rec.citations)
    numbers = [c["n"] for c in rec.citations]
    for block in answer_sections(rec.answer, support, numbers, rec.engine, rec.question):
        st.markdown(block)
    if is_final(rec) and door().may_review(rec):
        verdict(rec)
    elif is_final(rec):  # another account's run, seen by a viewer: its verdict is theirs
        marked = (
            "" if rec.feedback is None else f" It is marked {'right' if rec.feedback else 'wrong'}."
        )
        st.caption(not_yours(rec) + marked)
    violations = rec.metrics.get("citation_violations") or []
    flagged = [s for row in support for s in row if s.issue is not None]
    if violations:
        st.warning(
            f"Removed {counted(len(violations), 'fabricated citation')} that pointed outside the "
            f"evidence: {escape_markdown(', '.join(map(str, violations)), inline=True)}"
        )
    if flagged:
        st.caption(f"⚠️ {len(flagged)} flagged sentence(s), marked in the answer.")
    support_panel(support, rec.citations)
    cited = cited_sentences(support)
    st.markdown("**Sources**")
    for c in rec.citations:
        _citation(c, ws, key=f"page-{rec.run_id}-{c['n']}", cited=cited.get(c["n"], ()))


def _store_verdict(run_id: str, key: str) -> None:
    """The thumbs' callback, through the door: a run unshared (or a session signed out)
    since the page was drawn keeps no verdict, and the rerun shows why."""
    value = st.session_state.get(key)
    if principal() is None:  # door() would stop the rerun before it draws the sign-in
        return
    with contextlib.suppress(MasisError):
        door().mark(run_id, None if value is None else value == 1)


def verdict(rec: RunRecord) -> None:
    """Thumbs up (the answer is right) or down (wrong), stored with the run: the inspector's
    reliability diagram compares them with the confidence the run gave."""
    key = f"feedback-{rec.run_id}"
    left, right = st.columns([1, 5], vertical_alignment="center")
    with left:
        st.feedback(
            "thumbs",
            key=key,
            default=None if rec.feedback is None else int(rec.feedback),
            on_change=_store_verdict,
            args=(rec.run_id, key),
        )
    given = st.session_state.get(key)
    if given is None:
        right.caption("Is this answer right? Your verdict is kept with the run and exported.")
    else:  # the chosen thumb differs only by its shade: say what was recorded
        right.caption(
            f"You marked this answer **{'right' if given else 'wrong'}**: kept with the run, "
            "exported, and counted in this workspace's confidence. Click again to change it."
        )


def source_place(s: dict[str, Any]) -> str:
    """A conflicting source's page, or its place in a document without pages, as Markdown."""
    return untrusted(s["place"]) if s.get("place") else f"page {untrusted(s.get('page'))}"


def _conflicts(details: dict[str, Any]) -> dict[str, str]:
    """Draw each conflict's sources side by side; return the choosable doc ids with labels."""
    choices: dict[str, str] = {}
    for conflict in details.get("conflicts") or []:
        reason, topic = conflict.get("reason", "disagreement"), conflict.get("topic", "")
        st.markdown(f"**{untrusted(reason)}** — about *{untrusted(topic)}*")
        sources = conflict.get("sources") or []
        for col, s in zip(st.columns(max(1, len(sources))), sources, strict=False):
            name, where = untrusted(s.get("filename")), source_place(s)
            with col.container(border=True):
                st.markdown(f"**{name}**, {where}")
                st.markdown(quote_block(s.get("text") or ""))
            # Radio options render Markdown too.
            choices.setdefault(s["doc_id"], f"{name} ({where})")
    return choices


def _lead_choice(run_id: str, passages: list[str]) -> int:
    """Which passage should lead: 0 for the lead as drafted, n for "Also relevant n"."""
    lead = st.radio(
        "Which passage answers the question?",
        range(len(passages) + 1),
        format_func=lambda n: (
            "The lead, as drafted"
            if n == 0
            else f"Also relevant {n}: {untrusted(shorten(passages[n - 1], 200))}"
        ),
        key=f"review-lead-{run_id}",
    )
    if lead:
        st.caption(
            "Choosing a passage also marks the answer 👍 (you can change it after) and "
            "teaches this workspace's confidence: the lead passed over counts as a wrong answer."
        )
    return int(lead or 0)


def review_form(rec: RunRecord) -> dict[str, Any] | None:
    """The inline review form; returns the analyst's response when submitted."""
    payload = rec.hitl or {}
    kind = payload.get("kind", "")
    details = payload.get("details") or {}
    with st.container(border=True):
        st.markdown(f"### 🙋 {REVIEW_TITLES.get(kind, 'Review needed')}")
        st.markdown(untrusted(payload.get("message", ""), inline=False))
        if kind == "no_evidence" and details.get("filtered_out"):
            st.caption(
                f"{details['filtered_out']} passages were below the similarity threshold "
                f"{details.get('threshold_used')} (best score {details.get('best_score')})."
            )
        gaps = (details.get("logical_gaps") or []) if kind == "low_confidence" else []
        if gaps:  # read against the quoted lead: a heading above it is never quoted
            st.caption(
                "Words of the question the lead passage, as quoted, does not hold: "
                + ", ".join(untrusted(g) for g in gaps)
            )
        unknown = recorded_unknown(rec.trace)
        if unknown and not language_notice(rec.trace):  # that notice, above the form, names them
            st.caption(
                "No document of this workspace uses these words of the question (try the "
                "documents' own terms): " + ", ".join(untrusted(w) for w in unknown)
            )
        sources = _conflicts(details) if kind == "conflict" else {}
        options = [o for o in payload.get("options", []) if o in ACTION_LABELS]
        picks = (details.get("candidates") or []) if kind == "low_confidence" else []
        if picks:
            picked = passage_picker(rec.run_id, picks)
            if picked is not None:
                return picked
            options = [o for o in options if o != "accept"]  # each card accepts its passage
        action = st.radio(
            "What should happen next?",
            options,
            format_func=ACTION_LABELS.__getitem__,
            key=f"review-action-{rec.run_id}",
        )
        response: dict[str, Any] = {"action": action}
        if action == "rephrase":
            response["text"] = st.text_input(
                "New question", value=plain(rec.question), key=f"review-text-{rec.run_id}"
            )
        passages = details.get("passages") or []  # only a low-confidence review has them
        if action == "accept" and passages and not picks:
            lead = _lead_choice(rec.run_id, passages)
            if lead:
                response["lead"] = lead
        if action == "choose_source" and sources:
            response["source"] = st.radio(
                "Source to trust",
                list(sources),
                format_func=sources.__getitem__,
                key=f"review-source-{rec.run_id}",
                horizontal=True,
            )
        if st.button("Submit and resume", type="primary", key=f"review-submit-{rec.run_id}"):
            return response
    return None


STATUS_BADGES = {
    "completed": ("✅", "success"),
    "needs_human": ("🙋", "warning"),
    "failed": ("❌", "error"),
    "cancelled": ("⏹️", "info"),
    "running": ("⏳", "info"),
}


# A question may be up to 20,000 characters (masis_core.answers.questions); a heading shows
# this many, and the whole question is one click away.
HEADING_CHARS = 300


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def question_heading(question: str) -> None:
    """A run's question as the heading above its trace; the text is shown, never rendered.
    A long one is cut in the heading and shown whole, as a quote, in a folded expander."""
    st.markdown(f"#### {untrusted(shorten(question, HEADING_CHARS))}")
    if len(question) > HEADING_CHARS:
        with st.expander(f"The whole question ({len(question):,} characters)"):
            st.markdown(quote_block(question))


def status_line(rec: RunRecord) -> None:
    icon, kind = STATUS_BADGES.get(rec.status, ("•", "info"))
    who = f" · {untrusted(asked_by(rec))}" if rec.asked_by else ""
    text = f"Run `{rec.run_id}` · {rec.shown_status}{who} · engine {rec.engine}"
    if rec.error:
        text += f" — {untrusted(rec.error)}"
    getattr(st, kind)(text, icon=icon)
    notice = language_notice(rec.trace)
    if notice:
        st.warning(untrusted(notice), icon="🌐")
