"""Markdown export and the inspector's tables, on hand-made run records."""

from __future__ import annotations

import re

import pytest

from masis_core.services.inspection import (
    node_latency,
    pass_summary,
    retry_reasons,
    run_table,
    score_rows,
    workspace_scores,
)
from masis_core.services.reports import answer_title, citation_source, run_markdown
from masis_core.services.runs import RunRecord

TRACE = [
    {"node": "supervisor", "decision": "first_run"},
    {"node": "planner", "duration_ms": 4},
    {
        "node": "researcher",
        "retry_count": 0,
        "chunks": 2,
        "filtered_out": 3,
        "low_quality_dropped": 1,
        "threshold_used": 0.27,
        "scores_kept": [0.61, 0.5],
        "scores_kept_row": [0.12],
        "scores_filtered": [0.2, 0.1, 0.05],
        "scores_low_quality": [0.4],
        "duration_ms": 30,
    },
    {"node": "critic", "duration_ms": 6},
    {"node": "supervisor", "decision": "retry", "reason": "quality_issue_detected"},
    {
        "node": "researcher",
        "retry_count": 1,
        "chunks": 4,
        "filtered_out": 0,
        "threshold_used": 0.22,
        "scores_kept": [0.6, 0.5, 0.3, 0.25],
        "duration_ms": 50,
    },
]


def record(**changes) -> RunRecord:
    base = RunRecord(
        run_id="r1",
        workspace_id="plant",
        question="How often is the pump inspected?",
        engine="offline",
        status="completed",
        answer="Every 500 hours. [1] Seals are checked. [2]",
        citations=[
            {"n": 1, "filename": "manual.pdf", "page": 2, "page_end": 2, "text": "Every 500 h."},
            {"n": 2, "filename": "web page", "url": "https://example.org/x", "text": "Seals."},
        ],
        confidence=0.82,
        metrics={
            "retry_reasons": [
                {"iteration": 1, "reason": "quality_issue_detected", "confidence": 0.5}
            ],
            "citation_violations": ["[7]"],
            "flagged_sentences": [{"sentence": "Seals are checked.", "issue": "no valid citation"}],
        },
        trace=TRACE,
        created_at="2026-11-22T10:00:00+00:00",
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_markdown_has_answer_citations_checks_and_evidence() -> None:
    md = run_markdown(record())
    assert md.startswith("# How often is the pump inspected?\n")
    assert "- Confidence: 82%" in md
    assert "- Retries: 1 (quality_issue_detected)" in md
    assert "Every 500 hours. [1]" in md
    assert "1. manual.pdf, page 2" in md
    assert "2. web page — [`https://example.org/x`](https://example.org/x)" in md
    assert "Removed fabricated citation \\[7\\]" in md
    assert "### [1] manual.pdf, page 2\n\n> Every 500 h." in md


def test_markdown_of_a_paused_run_says_what_it_waits_for() -> None:
    rec = record(
        status="needs_human",
        answer=None,
        citations=[],
        hitl={"kind": "no_evidence", "message": "Nothing matched."},
    )
    md = run_markdown(rec)
    assert "_Waiting for review (no_evidence): Nothing matched._" in md
    assert "## Citations" not in md


OFFLINE_ANSWER = "Every 500 hours. [1]\n\nSeals are checked. [2]"


def test_markdown_keeps_the_lead_apart_from_also_relevant_and_marks_a_draft() -> None:
    """Exported, the other passages ran on under "## Answer" as if the lead's confidence
    spoke for them, and a paused run's draft read as a final answer."""
    md = run_markdown(record(answer=OFFLINE_ANSWER))
    assert "## Answer\n\nEvery 500 hours. [1]\n\n**Also relevant**\n\nSeals are checked. [2]" in md
    model = run_markdown(record(answer=OFFLINE_ANSWER, engine="ollama"))
    assert "Also relevant" not in model  # a model's paragraphs are prose, not passages
    paused = run_markdown(record(answer=OFFLINE_ANSWER, status="needs_human"))
    assert "## Draft answer — awaiting review\n" in paused and "## Answer" not in paused
    # The status in the analyst's words, not the graph's name for it.
    assert "- Status: awaiting review · " in paused and "needs_human" not in paused


DISAGREEING = (
    "Any number of hosts can run upsmon against one upsd. [1]\n\n"
    "Only one host can monitor the UPS. [2]"
)


def test_an_exported_also_relevant_passage_that_says_no_is_named_against_the_lead() -> None:
    """The export says what the screen says: a passage that answers a yes/no question "no"
    where the lead does not is named as disagreeing, not left to read as a second answer."""
    rec = record(question="Can more than one computer monitor the UPS?", answer=DISAGREEING)
    md = run_markdown(rec)
    assert (
        "**Also relevant**\n\n_⚖️ “Also relevant” passage 1 and the lead disagree (one says "
        "no: “Only one host can monitor the UPS.”): read both before relying on either._"
        "\n\nOnly one host can monitor the UPS. [2]"
    ) in md
    assert "disagree" not in run_markdown(record(answer=DISAGREEING))  # not a yes/no question


def test_a_draft_names_whose_review_it_awaits_and_the_run_who_asked_it() -> None:
    """ "Awaiting your review" was said to every viewer of another account's run, and in the
    export of it: the review is the asker's (or an editor's). The Runs table and the export
    say who asked a run (docs/team.md)."""
    paused = record(answer=OFFLINE_ANSWER, status="needs_human", asked_by="ann")
    assert answer_title(paused) == "Draft answer — awaiting review by ann"
    assert answer_title(paused, yours=True) == "Draft answer — awaiting your review"
    assert answer_title(record(status="needs_human")) == "Draft answer — awaiting review"
    cancelled = record(status="cancelled", asked_by="ann")
    assert "awaiting" not in answer_title(cancelled, yours=True)
    assert answer_title(record(asked_by="ann"), yours=True) == "Answer"
    md = run_markdown(paused)
    assert "## Draft answer — awaiting review by ann\n" in md and "- Asked by ann\n" in md
    assert "Asked by" not in run_markdown(record())  # no accounts: nobody to name
    table = run_table([record(asked_by="ann"), record(run_id="r2")])
    assert list(table.columns[:5]) == ["run_id", "thread", "created", "status", "asked by"]
    assert list(table["asked by"]) == ["ann", ""]


def test_page_ranges_in_citation_sources() -> None:
    assert citation_source({"filename": "a.pdf", "page": 3, "page_end": 4}) == "a.pdf, pages 3–4"
    assert citation_source({"filename": "a.pdf", "page": 3, "page_end": 3}) == "a.pdf, page 3"


def test_scores_per_pass_with_outcome_and_threshold() -> None:
    rows = score_rows(record())
    first = rows[rows["pass"] == 1]
    assert sorted(first["outcome"].value_counts().items()) == [
        ("below threshold", 3),
        ("kept", 2),
        ("kept for the table row it names", 1),
        ("low content quality", 1),
    ]
    assert set(first["threshold"]) == {0.27}
    assert set(rows[rows["pass"] == 2]["threshold"]) == {0.22}
    assert len(rows) == 11


def test_pass_summary_latency_and_retries() -> None:
    rec = record()
    summary = pass_summary(rec)
    assert list(summary["kept"]) == [2, 4]
    assert list(summary["filtered_out"]) == [3, 0]
    assert list(summary["retry_count"]) == [0, 1]
    latency = node_latency(rec)
    assert latency.groupby("node")["duration_ms"].sum().to_dict() == {
        "critic": 6,
        "planner": 4,
        "researcher": 80,
    }
    assert list(retry_reasons(rec)["reason"]) == ["quality_issue_detected"]


def test_workspace_scores_and_history_table() -> None:
    runs = [record(), record(run_id="r2", trace=[]), record(run_id="r3")]
    scores = workspace_scores(runs)
    assert len(scores) == 22 and set(scores["run_id"]) == {"r1", "r3"}
    assert workspace_scores([record(trace=[])]).empty
    table = run_table(runs)
    assert list(table["run_id"]) == ["r1", "r2", "r3"]
    assert list(table["confidence"]) == [82, 82, 82]
    assert list(table["retries"]) == [1, 1, 1]


def test_exported_markdown_carries_no_link_image_html_or_fake_marker_from_evidence() -> None:
    """The export is rendered by whatever opens it: document and web text stays text there."""
    markdown_it = pytest.importorskip("markdown_it")
    evil = "[revised manual](https://evil.example/x) ![](https://evil.example/t.gif) <img src=x>"
    rec = record(
        question="Pump [x](https://evil.example/q)?",
        answer=f"Inspect weekly per {evil} and [99]. [1]\n\nSee \\[2\\] &#91;2&#93;. [2]",
        citations=[
            {"n": 1, "filename": "![](https://evil.example/f.gif).pdf", "page": 1, "text": evil},
            {"n": 2, "filename": "[t](https://evil.example)", "url": "javascript:alert(1)"},
        ],
        metrics={"flagged_sentences": [{"sentence": evil, "issue": "[p](https://evil.example)"}]},
    )
    md = run_markdown(rec)
    tokens = [
        t
        for tok in markdown_it.MarkdownIt("commonmark").parse(md)
        for t in [tok, *(tok.children or [])]
    ]
    kinds = {t.type for t in tokens}
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}, kinds
    assert "javascript\\:alert(1)" in md and "evil.example/t.gif" in md  # shown, as text
    # nor would a GFM renderer (GitHub, Streamlit) link a bare address: each one is code
    from tests.test_markup import linkable

    assert not linkable(md), linkable(md)
    assert "`https://evil.example/t.gif`" in md
    answer = md.split("## Answer", 1)[1].split("## Citations", 1)[0]
    assert sorted(re.findall(r"(?<!\\)\[(\d+)\]", answer)) == ["1", "2"]
    assert "［99］" in answer and answer.count("［2］") == 2


def test_tables_show_names_and_questions_without_bidi_controls() -> None:
    """A table cell shows text as it is: "invoice\u202efdp.exe" would read "invoiceexe.pdf"."""
    from masis_core.services.inspection import batch_table
    from masis_core.services.jobs import FileProgress

    bidi = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    files = batch_table([FileProgress("invoice\u202efdp.exe\u2066.txt")])
    assert list(files["file"]) == ["invoicefdp.exe.txt"]
    runs = run_table([record(question="Pay \u202eit\u2069 now?")])
    assert list(runs["question"]) == ["Pay it now?"]
    assert not bidi & set("".join(map(str, [*files.to_numpy().ravel(), *runs.to_numpy().ravel()])))


def test_the_export_escapes_only_what_would_become_markup() -> None:
    """Prose with parentheses, colons, "!", "&", "|", "{}" and a word_with_underscores is
    exported as written: "\\(assuming Linux here\\)" and "like this\\:" read as noise in a
    report. What would be markup still is not (see the hostile export test above)."""
    markdown_it = pytest.importorskip("markdown_it")
    prose = (
        "Start the driver (assuming Linux here) like this: upsdrvctl start! "
        "Cost: 5 & up; a | b; {x}; see nut_usb_install, 2) the rest"
    )
    rec = record(
        answer=f"{prose} [1]",
        citations=[{"n": 1, "filename": "faq (2).pdf", "page": 2, "text": prose}],
        metrics={},
    )
    md = run_markdown(rec)
    assert f"{prose} [1]" in md
    assert f"> {prose}" in md  # the evidence appendix quotes it as written
    assert "[1] faq (2).pdf, page 2" in md
    assert "\\(" not in md and "\\:" not in md and "\\!" not in md and "\\|" not in md
    tokens = markdown_it.MarkdownIt("commonmark").enable(["table"]).parse(md)
    kinds = {t.type for tok in tokens for t in [tok, *(tok.children or [])]}
    assert not kinds & {"link_open", "image", "html_inline", "html_block", "table_open"}
