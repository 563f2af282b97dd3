"""The research graph's state. Reducers are explicit; every other key is last-write-wins."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

HitlKind = Literal["no_evidence", "conflict", "low_confidence"]
RunStatus = Literal["running", "completed", "needs_human", "failed", "cancelled"]


def merge_metrics(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Nodes report metrics as partial dicts; lists under ``retry_reasons`` accumulate."""
    merged = dict(left or {})
    for key, value in (right or {}).items():
        if key == "retry_reasons":
            merged[key] = [*merged.get(key, []), *value]
        else:
            merged[key] = value
    return merged


class Evidence(TypedDict, total=False):
    chunk_id: str
    doc_id: str
    filename: str
    page_start: int
    page_end: int
    text: str
    score: float
    quality: float
    source: Literal["kb", "web"]
    url: str
    kept_by: Literal["dense", "keyword", "both"]
    keyword_rank: int | None
    coverage: float
    soft: float  # soft keyword match (hybrid only): ranks, never keeps


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


class HitlPayload(TypedDict, total=False):
    kind: HitlKind
    message: str
    options: list[str]
    details: dict[str, Any]


class ResearchState(TypedDict, total=False):
    run_id: str
    question: str
    workspace_id: str
    embed_model: str
    engine: Literal["ollama", "offline"]
    web_enabled: bool
    web_trusted_only: bool | None
    trusted_domains: list[str] | None
    retrieval_mode: Literal["dense", "bm25", "hybrid"] | None
    max_retries: int | None
    retry_count: int
    threshold_override: float | None
    excluded_docs: list[str]
    conflict_resolved: bool
    plan: Plan
    evidence: list[Evidence]
    web_evidence: list[Evidence]
    draft_answer: str | None
    critique: Critique
    citations: list[dict[str, Any]]
    answer: str | None
    confidence: float | None
    hitl: HitlPayload | None
    status: RunStatus
    decision: str
    metrics: Annotated[dict[str, Any], merge_metrics]
    trace: Annotated[list[dict[str, Any]], operator.add]
