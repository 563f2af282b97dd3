"""Every threshold and limit of retrieval, the segmenter and answering, in one frozen object (in
the manner of paper-qa's nested settings: ``POLICY.retrieval``, ``POLICY.text``, and the
answering fields on ``POLICY`` itself). Each field says how it was set: ``fitted`` (by a bench,
named), ``measured`` (chosen on a data set's figures, named) or ``hand`` (set by reasoning, the
reason given).

It sits in the foundation, so that retrieval and text, below answers, read it too. The modules
that use a value read it from ``POLICY`` (their module-level names are re-exports of it, kept so
the code reads as before); pages, services and the CLI read limits from here, not from a graph
node. ``tests/test_policy.py`` checks that no threshold lives elsewhere: no module-level number
in the modules that use the policy (no module-level fraction in retrieval and text, whose
counts and caps are lengths), and no score held against a literal fraction (``c >= 0.65``,
``max(0.05, t)``, ``w >= 0.6 * n``) there or in pages, the UI, services and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

SetBy = Literal["fitted", "measured", "hand"]


def setting(value: Any, set_by: SetBy, why: str) -> Any:
    """A policy field: its value, how it was set and why (read by ``provenance``)."""
    return field(default=value, metadata={"set_by": set_by, "why": why})


@dataclass(frozen=True)
class RetrievalPolicy:
    """What retrieval keeps and how it ranks (``retrieval/``: thresholds, quality, hybrid)."""

    # -- the similarity threshold (thresholds.py) ----------------------------------------------
    wordllama_first_pass: float = setting(
        0.27,
        "measured",
        "WordLlama's first-pass similarity threshold: the score that keeps 85% of the relevant "
        "query-chunk pairs of 600 development queries (bench.score_distribution on "
        "fitzgov-dev/retrieval, 2026-11-22; docs/retrieval.md): its relevant pairs sit far "
        "below the 0.60 tuned for other models",
    )
    nomic_first_pass: float = setting(
        0.55,
        "hand",
        "nomic-embed-text's first-pass threshold: an estimate, not measured (it could not run "
        "on the machine the others were measured on); re-measure with bench.score_distribution "
        "--embedder ollama:nomic-embed-text",
    )
    default_threshold: float = setting(
        0.60,
        "hand",
        "an embedder measured nowhere gets the common cosine default for sentence embedders",
    )
    retry_delta: float = setting(
        0.05, "hand", "a retry lowers the threshold by this much: a little wider, not everywhere"
    )
    floor: float = setting(
        0.05,
        "hand",
        "the lowest threshold a retry or an analyst's override reaches; no measurement recorded",
    )
    # -- content quality (quality.py) ----------------------------------------------------------
    stub_words: int = setting(
        20,
        "hand",
        "a chunk under this many words is a stub and scores 0 whatever the question; set with "
        "the first pipeline, no measurement recorded",
    )
    quality_threshold: float = setting(
        0.3,
        "hand",
        "the content-quality bar a kept chunk must reach: from length alone at 34 words, a "
        "20-word chunk with a fifth of the question's keywords; set with the first pipeline, "
        "no measurement recorded",
    )
    quality_length_cap: float = setting(
        0.8,
        "hand",
        "length alone scores at most this (0.2 + 0.6 x words/200, reached at 200 words): the "
        "rest is the question's keywords",
    )
    quality_keyword_share: float = setting(
        0.2,
        "hand",
        "the most the question's keywords add to a chunk's quality, in proportion to the "
        "share of them it holds",
    )
    # -- fusion (hybrid.py) --------------------------------------------------------------------
    dense_weight: float = setting(
        0.4,
        "measured",
        "the dense side's weight in min-max fusion (BM25 has what dense and soft leave, 0.3): "
        "bench.retrieval_quality on fitzgov-dev, nDCG@10 0.661, where 0.4/0.3/0.3, 0.4/0.4/0.2 "
        "and 0.3/0.4/0.3 lie within 0.002, and weights chosen on half the queries gained as "
        "much over BM25 on the other half (docs/measurements/retrieval.md)",
    )
    soft_weight: float = setting(
        0.3,
        "measured",
        "the soft keyword match's weight, chosen with dense_weight (bench.retrieval_quality, "
        "fitzgov-dev; docs/measurements/retrieval.md)",
    )
    dense_min_spread: float = setting(
        0.2,
        "hand",
        "min-max never stretches a spread of cosines narrower than this, so that near-identical "
        "passages (twenty fault-code paragraphs) do not turn noise into rank; a no-op on "
        "fitzgov-dev (nDCG@10 unchanged)",
    )
    soft_min_spread: float = setting(
        0.2,
        "hand",
        "as dense_min_spread, for the soft match's cosines averaged over the query's words",
    )
    keyword_min_spread: float = setting(
        0.25,
        "hand",
        "as dense_min_spread, for BM25: a share of the best BM25 score in the pool (a quarter)",
    )


@dataclass(frozen=True)
class TextPolicy:
    """What the segmenter (``text/sentences.py``) reads as a sentence, a table row or debris."""

    figures_share: float = setting(
        0.25,
        "hand",
        "a sentence holds at most this share of figures (a quarter); more reads as a table "
        "row. Set with the report-prose segmenter (5d50f1c), whose manuals' figures held",
    )
    prose_figures_share: float = setting(
        0.4,
        "hand",
        "the share of figures allowed when plain lower-case words make up plain_share of the "
        "sentence: a report's statistics ('29 studies (1.5 million participants) ...'); a "
        "table row has few plain words",
    )
    plain_share: float = setting(
        0.4,
        "hand",
        "share of plain lower-case words at which a sentence may hold prose_figures_share of "
        "figures (5d50f1c)",
    )
    wordish_share: float = setting(
        0.6,
        "hand",
        "a sentence is mostly words: at least this share of its tokens read as words; no "
        "measurement recorded",
    )
    table_share: float = setting(
        0.4,
        "hand",
        "a run that is no sentence is a table row when this share of its words are figures "
        "or capitalised codes, else debris; set with the first segmenter, no measurement "
        "recorded",
    )
    terse_plain_words: int = setting(
        3,
        "hand",
        "a sentence without a function word (a report's or a note's: 'PolicyKit provides "
        "required privileges.') needs this many plain lower-case words after a capitalised "
        "first one; a reference manual's argument line has fewer (5d50f1c)",
    )
    code_prose_stops: int = setting(
        2,
        "hand",
        "a sentence with code around its prose ('-f makes a large speed difference, and ...') "
        "is quotable with at least this many function words; with the plain and wordish "
        "shares it kept code out of leads on seven spent sets (issue 51, ed872fc)",
    )


@dataclass(frozen=True)
class AnswerPolicy:
    # -- the lower layers, in their own sections -----------------------------------------------
    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    text: TextPolicy = field(default_factory=TextPolicy)
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
    map_min_points: int = setting(
        20, "hand", "fewer labelled answers than this fit no map: a handful is mostly chance"
    )
    map_min_each: int = setting(
        3,
        "hand",
        "a map needs this many right and this many wrong answers: one side alone "
        "says nothing of where the judge goes wrong",
    )
    map_folds: int = setting(
        5, "hand", "a map is judged on points it was not fitted on, in this many folds"
    )
    isotonic_prior_weight: float = setting(
        2.0,
        "hand",
        "pseudo points at the judge's own mean score that pull each isotonic block: three "
        "right answers in a block are not 100%",
    )
    platt_prior: float = setting(
        2.0,
        "hand",
        "precision of the Gaussian prior around the identity map (slope 1, offset 0): on the "
        "offset, the weight of eight answers at even odds, so a handful of points cannot turn "
        "the judge's ranking upside down",
    )
    verdict_weight: int = setting(
        3,
        "hand",
        "an analyst's verdict counts as this many outline points: a real question judged by a "
        "person, where an outline point is a heading reworded by rule",
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
        "1.07 (by 0.15); at 1.0 it took nine (docs/review.md)",
    )
    max_picks: int = setting(
        500, "hand", "the newest picks a refit reads: a library's taste, not its history"
    )
    pick_newton_steps: int = setting(
        25, "hand", "Newton's method's steps for a refit; the prior keeps the loss convex"
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
    asked_sentence_share: float = setting(
        0.5,
        "hand",
        "share of the question's content words a sentence must hold for its years or figures "
        "to count as a source's answer to a 'when' or 'how many' question (stances.asked_values)",
    )
    # -- the support panel (support.py) --------------------------------------------------------
    support_strong: float = setting(
        0.6,
        "hand",
        "share of a claim's content words in its best evidence sentence at which the sentence "
        "says what the claim says (a quoted sentence scores 1.0)",
    )
    support_partial: float = setting(
        0.3,
        "hand",
        "under this share the claim rests on the passage as a whole, or on nothing; a citation "
        "at or over it is backed",
    )
    # -- answers computed over a whole table (aggregate.py) ------------------------------------
    numeric_share: float = setting(
        0.8, "hand", "a column is numeric (may be ranked) when this share of its cells are figures"
    )
    table_reads: int = setting(
        3, "hand", "tables read whole per question, in rank order: a question ranks over one"
    )
    max_table_rows: int = setting(
        50_000, "hand", "rows read per table: enough for any sheet a question ranks over"
    )
    shown_ties: int = setting(3, "hand", "rows named when several tie for first; then 'and others'")
    computed_confidence: float = setting(
        0.95,
        "hand",
        "a ranking or total computed over one column the question names, of one table: the "
        "arithmetic is certain, the reading of the question nearly so",
    )
    doubtful_confidence: float = setting(
        0.45,
        "hand",
        "a computation over a guessed column, or with tables that compete: under the review bar, "
        "so the analyst looks",
    )
    # -- human review (graph/nodes/human_review.py) --------------------------------------------
    review_threshold_step: float = setting(
        0.1,
        "hand",
        "'retry with a lower threshold' lowers the similarity threshold by this much (not below "
        "retrieval.floor): an analyst's retry looks wider than the automatic one (0.05)",
    )
    # -- what changed between two versions (changes.py) ----------------------------------------
    renamed_alike: float = setting(
        0.5,
        "hand",
        "two sections under different titles are one renamed section when at least half of "
        "their sentences match (difflib's ratio): 'mostly the same'",
    )


def provenance(policy: Any) -> dict[str, tuple[Any, str, str]]:
    """Each field's value, how it was set and why: what a reader of the policy asks. A
    section's fields are named by its path (``retrieval.default_threshold``)."""
    said: dict[str, tuple[Any, str, str]] = {}
    for f in fields(policy):
        value = getattr(policy, f.name)
        if is_dataclass(value):
            said.update({f"{f.name}.{k}": v for k, v in provenance(value).items()})
        else:
            said[f.name] = (value, f.metadata["set_by"], f.metadata["why"])
    return said


POLICY = AnswerPolicy()
