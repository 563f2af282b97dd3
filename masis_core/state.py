"""The research graph's state: what a run is given, what its nodes write, and how writes merge.

Reducers are explicit (``metrics`` merges dicts, ``trace`` and ``retry_reasons`` append);
every other key is last-write-wins. The run driver builds a ``ResearchInput``; nodes return
partial ``ResearchState`` updates; the evaluator produces ``Citation``s; every node appends
``TraceEntry``s, which the UI and the inspector read by key.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from masis_core.modes import Mode

HitlKind = Literal["no_evidence", "conflict", "low_confidence"]
RunStatus = Literal["running", "completed", "needs_human", "failed", "cancelled"]
KeptBy = Literal["dense", "keyword", "both", "row"]  # why retrieval kept a passage
EngineName = Literal["ollama", "offline"]
# What the supervisor (or a review) decided; the graph's routing functions read it.
Decision = Literal["plan", "retry", "human_review", "judge", "finalize", "end"]


def merge_metrics(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Nodes report metrics as partial dicts; a key written later replaces the earlier value."""
    return {**(left or {}), **(right or {})}


class Evidence(TypedDict, total=False):
    chunk_id: str
    doc_id: str
    filename: str
    page_start: int
    page_end: int
    place: str  # where in a document without pages ("slide 3"; ingest.kinds); "" for a PDF
    rows: str  # a table chunk's row numbers, one per row line ("3,4,5,7"); "" otherwise
    # Where the document's sections start in the chunk's words, as JSON [[word, number,
    # title], ...] (``ingest.sections``); "" for a chunk stored without them.
    sections: str
    ocr: bool  # the passage was read by OCR from a page image
    text: str
    score: float
    quality: float
    source: Literal["kb", "web"]
    url: str
    kept_by: KeptBy
    keyword_rank: int | None
    coverage: float
    soft: float  # soft keyword match (hybrid only): ranks, never keeps
    # An aggregate computed over the chunk's whole table (``answers.aggregate``), on the
    # chunk holding the row it names.
    computed: dict[str, Any]
    version: int  # the document's version (a followed folder's file); 0: not kept in versions


class Plan(TypedDict, total=False):
    rag_queries: list[str]
    web_queries: list[str]
    strategy: str
    augmented: bool
    expansion_error: str | None


class Critique(TypedDict, total=False):
    confidence: float
    unsupported_claims: list[str]
    logical_gaps: list[str]
    hallucination: bool
    conflicts: list[dict[str, Any]]  # {topic, sources: [{doc_id, filename, page, text}]}
    recommend_retry: bool
    confidence_model: str  # "development" or "documents" (confidence.confidence_model)
    judged_confidence: float  # the judge's score, when the workspace's calibration mapped it
    calibration: str  # "workspace" (its fitted map applied) or "global" (the judge's score)
    # The confidence after each stage that applied, in order (answers/confidence.STAGES).
    confidence_stages: dict[str, float]


class HitlPayload(TypedDict, total=False):
    kind: HitlKind
    message: str
    options: list[str]
    details: dict[str, Any]


class Citation(TypedDict, total=False):
    """One source of the final answer, numbered as the answer's markers are."""

    n: int
    chunk_id: str | None
    doc_id: str | None
    filename: str | None
    page: int | None
    page_end: int | None
    place: str  # as Evidence.place: a Word heading path and paragraph, a slide, rows
    ocr: bool
    url: str | None
    source: Literal["kb", "web"]
    score: float | None
    kept_by: KeptBy | None
    keyword_rank: int | None
    coverage: float | None
    text: str


class RetryReason(TypedDict):
    iteration: int
    confidence: float
    reason: str
    citation_issue: bool
    hallucination: bool


class TraceEntry(TypedDict, total=False):
    """What a node did, one entry per node run. Every entry has ``node``; the other keys
    are the node's telemetry (the views show those they know and list the rest)."""

    node: str
    duration_ms: int
    retry_count: int
    error: str
    reason: str
    decision: str
    kind: str
    action: str
    skipped: bool
    chunks: int
    filtered_out: int
    threshold_used: float
    confidence: float | None


class ResearchInput(TypedDict, total=False):
    """What starting a run gives the graph (``RunService.start`` builds it)."""

    run_id: str
    question: str
    workspace_id: str
    embed_model: str
    engine: EngineName
    web_enabled: bool
    web_trusted_only: bool | None
    trusted_domains: list[str] | None
    retrieval_mode: Mode | None
    max_retries: int | None
    # A thread's run whose question leans on the thread: the searches that carry its subject
    # (``answers.followup.thread_subject``).
    subject: list[str]
    retry_count: int
    status: RunStatus
    draft_answer: str | None
    metrics: Annotated[dict[str, Any], merge_metrics]
    trace: Annotated[list[TraceEntry], operator.add]


def all_evidence(state: ResearchState) -> list[Evidence]:
    """Knowledge-base evidence first, then web: the synthesizer's [n] indexes this list, and
    the critic and the evaluator read it the same way."""
    return [*(state.get("evidence") or []), *(state.get("web_evidence") or [])]


class ResearchState(ResearchInput, total=False):
    threshold_override: float | None
    excluded_docs: list[str]
    # Pages left out of retrieval, as (doc_id, first page, last page): the workspace
    # calibration asks a heading with its own section withheld (evaluation/calibration.py).
    withheld_pages: list[tuple[str, int, int]]
    conflict_resolved: bool
    # The analyst picked which of a paused draft's passages answers: the draft is judged
    # once more and the run ends, whatever the confidence (human_review, supervisor).
    lead_chosen: bool
    # The section heading of each passage of the offline draft (the lead, then the options):
    # the passage picker shows them (``graph.reviews.candidates``).
    draft_headings: list[str]
    plan: Plan
    evidence: list[Evidence]
    web_evidence: list[Evidence]
    critique: Critique
    citations: list[Citation]
    answer: str | None
    confidence: float | None
    hitl: HitlPayload | None
    decision: Decision
    retry_reasons: Annotated[list[RetryReason], operator.add]
