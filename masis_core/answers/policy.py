"""Every threshold and limit of answering, in one frozen object (in the manner of paper-qa's
nested settings). Each field says how it was set: ``fitted`` (by a bench, named), ``measured``
(chosen on a data set's figures, named) or ``hand`` (set by reasoning, the reason given).

The modules that use a value read it from ``POLICY`` (their module-level names are re-exports
of it, kept so the code reads as before); pages, services and the CLI read limits from here,
not from a graph node. ``tests/test_policy.py`` checks that no threshold lives elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

SetBy = Literal["fitted", "measured", "hand"]


def setting(value: Any, set_by: SetBy, why: str) -> Any:
    """A policy field: its value, how it was set and why (read by ``provenance``)."""
    return field(default=value, metadata={"set_by": set_by, "why": why})


@dataclass(frozen=True)
class AnswerPolicy:
    # -- the supervisor ------------------------------------------------------------------------
    low_confidence: float = setting(
        0.65,
        "hand",
        "the bar below which a draft is retried, then reviewed; the judge's maps "
        "(answered map, workspace map) are fitted to hold it, so no decision moves with them",
    )
    default_max_retries: int = setting(2, "hand", "set by hand; no measurement recorded")
    max_retries_limit: int = setting(
        5, "hand", "each retry runs planner to critic again; the graph's recursion limit holds five"
    )
    # -- the researcher ------------------------------------------------------------------------
    first_pass_limit: int = setting(10, "hand", "set by hand; no measurement recorded")
    retry_limit: int = setting(20, "hand", "set by hand; no measurement recorded")
    keyword_coverage: float = setting(
        0.5,
        "measured",
        "share of a query's keyword (IDF) weight a keyword-only hit must hold; "
        "on fitzgov-dev it keeps 71% of relevant keyword hits and 35% of irrelevant ones",
    )
    language_passages: int = setting(
        5, "hand", "the first passages ranked, whose language a question's is compared with"
    )
    withheld_read: int = setting(
        4, "hand", "with pages withheld, how many times the limit is read before their chunks go"
    )
    # -- the composer (compose.py) -------------------------------------------------------------
    max_lead_sentences: int = setting(4, "hand", "a lead is one passage of 1-4 sentences")
    max_also: int = setting(2, "hand", "at most two 'Also relevant' passages")
    max_also_sentences: int = setting(
        2, "hand", "an 'Also relevant' passage points elsewhere; the lead answers"
    )
    min_sentence_words: int = setting(3, "hand", "set by hand; no measurement recorded")
    max_sentence_words: int = setting(90, "hand", "set by hand; no measurement recorded")
    max_window_words: int = setting(160, "hand", "set by hand; no measurement recorded")
    relevance: float = setting(
        1 / 3,
        "measured",
        "share of the question's content words a window must cover to be "
        "quoted: the 10th percentile of the best sentence of relevant passages on fitzgov-dev",
    )
    relative_relevance: float = setting(
        0.6, "hand", "an 'Also relevant' passage needs this share of the lead's coverage"
    )
    duplicate_jaccard: float = setting(0.6, "hand", "set by hand; no measurement recorded")
    heading_weight: float = setting(
        0.5, "hand", "question words found only in a sentence's section heading count this much"
    )
    max_overlap_words: int = setting(
        120, "hand", "chunks overlap by 40 words (ingest.chunking); a longer search costs nothing"
    )
    max_entry_words: int = setting(30, "hand", "set by hand; no measurement recorded")
    min_entry_words: int = setting(
        3, "hand", "a question shorter than this ('How come?') asks again; it heads no entry"
    )
    min_label_sentence_words: int = setting(
        5,
        "hand",
        "a 'heading' after a label's number ('Answer 1 The drivers drop root privileges "
        "...') longer than this, ending with a full stop, is the sentence it reads as",
    )
    max_title_words: int = setting(
        12,
        "hand",
        "a heading's title is at most this long (as the segmenter's); longer is a sentence",
    )
    # -- the workspace's confidence map (workspaces/calibration.py) ----------------------------
    min_map_auc: float = setting(
        0.65,
        "measured",
        "a map that would lift answers over the review bar is kept only when the judge ranks "
        "the workspace's own points at least this well (AUC): a monotone map of a score that "
        "cannot tell right from wrong moves every answer to the points' share right. "
        "Second held-out set of 2026-11-29: AUC 0.57 on its points; with the map 0.93 of "
        "real questions answered, 0.67 right, 0.22 of the unanswerable abstained (1.00 without)",
    )
    # -- the workspace's passage scorer (workspaces/picks.py) ----------------------------------
    min_picks: int = setting(
        5,
        "hand",
        "a workspace's picks refit its window scorer from this many on: fewer say too little",
    )
    pick_prior: float = setting(
        0.5,
        "hand",
        "precision of the Gaussian prior that holds a workspace's refit near the shipped "
        "weights: five picks of one choice overturn the boiler-log pair's shipped margin of "
        "1.07 (by 0.15); at 1.0 it took nine (docs/answers-and-confidence.md)",
    )
    # -- sections (sections.py) ----------------------------------------------------------------
    short_section_words: int = setting(
        120,
        "measured",
        "a section this short is an entry (a FAQ answer): its opening answers "
        "(48 of 60 FAQ questions in its first 50 words, bench.section_answers)",
    )
    opening_words: int = setting(
        60, "hand", "an opening quote grows by whole sentences to at least this many words"
    )
    max_opening_words: int = setting(110, "hand", "set by hand; no measurement recorded")
    bm25_k1: float = setting(1.2, "hand", "BM25's customary term saturation")
    bm25_b: float = setting(0.75, "hand", "BM25's customary length normalisation")
    heading_repeat: int = setting(
        2, "hand", "a heading's words count twice: it names what the section is about"
    )
    section_weights: tuple[float, float, float] = setting(
        (1.0, 1.0, 1.0),
        "measured",
        "how keywords (BM25), the reader and the best window's fitted score weigh in a "
        "section's rank, as z-scores: 1:1:1 led right on the FAQ and manual development sets "
        "0.783 and 0.528, the only weights tried better than the composer before sections "
        "(0.750, 0.521) on both (1:1:0: 0.817, 0.451; 1:1:2: 0.767, 0.542); "
        "docs/measurements/passages.md",
    )
    offered: int = setting(3, "hand", "the lead and two options: what a review offers")
    # -- the judge's reading (question.py, stances.py) -----------------------------------------
    count_window: int = setting(
        3, "hand", "words between a figure and the thing it counts ('40 source packages')"
    )
    pair_topic: float = setting(
        0.1,
        "hand",
        "share of the question's content words both passages of a pair must hold "
        "to be compared: two chunks that merely sit in one result list are not two positions",
    )
    key_sentences: int = setting(
        2, "hand", "a passage's position is read from its two sentences nearest the question"
    )
    focus_top: int = setting(
        3, "hand", "the best-scored passages whose positions matter, beside the cited ones"
    )


def provenance(policy: AnswerPolicy) -> dict[str, tuple[Any, str, str]]:
    """Each field's value, how it was set and why: what a reader of the policy asks."""
    return {
        f.name: (getattr(policy, f.name), f.metadata["set_by"], f.metadata["why"])
        for f in fields(policy)
    }


POLICY = AnswerPolicy()
