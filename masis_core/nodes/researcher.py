"""Researcher (seeds 000, 004): workspace-scoped retrieval, thresholds, quality, dedup."""

from __future__ import annotations

from statistics import mean
from typing import Any

from langchain_core.runnables import RunnableConfig

from masis_core.context import ctx_of, emit, timed
from masis_core.retrieval.quality import QUALITY_THRESHOLD, quality_score
from masis_core.retrieval.store import Hit
from masis_core.retrieval.thresholds import threshold_for
from masis_core.state import Evidence, ResearchState

FIRST_PASS_LIMIT = 10
RETRY_LIMIT = 20

ALL_FILTERED_MESSAGE = (
    "Your question did not match any passage of your documents closely enough. "
    "Try rephrasing with terms your documents use, retry with a lower similarity threshold, "
    "or upload documents that cover this topic."
)
NOTHING_MATCHED_MESSAGE = (
    "No passages were found for your question in this workspace. "
    "Upload documents that cover this topic, or refine your question."
)


def clamp_limit(limit: int) -> int:
    return max(1, min(RETRY_LIMIT, int(limit)))


def best_by_chunk(hit_lists: list[list[Hit]]) -> dict[str, Hit]:
    """Dedup across query variants, keeping each chunk's best score."""
    best: dict[str, Hit] = {}
    for hits in hit_lists:
        for hit in hits:
            if hit.chunk_id not in best or hit.score > best[hit.chunk_id].score:
                best[hit.chunk_id] = hit
    return best


def to_evidence(hit: Hit, quality: float) -> Evidence:
    m = hit.metadata
    return Evidence(
        chunk_id=hit.chunk_id,
        doc_id=str(m.get("doc_id", "")),
        filename=str(m.get("filename", "")),
        page_start=int(m.get("page_start", 0)),
        page_end=int(m.get("page_end", 0)),
        text=hit.text,
        score=hit.score,
        quality=quality,
        source="kb",
    )


def node(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
    ctx = ctx_of(config)
    ws, model = state["workspace_id"], state["embed_model"]
    retry_count = int(state.get("retry_count") or 0)
    plan = state.get("plan") or {}
    queries = plan.get("rag_queries") or [state["question"]]
    limit = clamp_limit(FIRST_PASS_LIMIT if retry_count == 0 else RETRY_LIMIT)
    threshold = threshold_for(model, retry_count, state.get("threshold_override"))
    excluded = list(state.get("excluded_docs") or [])
    emit({"node": "researcher", "status": f"searching {len(queries)} queries"})
    with timed() as t:
        embedder = ctx.bench.embedder(model)
        hit_lists = [
            ctx.bench.store.query(model, ws, embedder.embed_query(q), limit, exclude_docs=excluded)
            for q in queries
        ]
        candidates = best_by_chunk(hit_lists)
        ranked = sorted(candidates.values(), key=lambda h: -h.score)
        passing = [h for h in ranked if h.score >= threshold]
        filtered_out = len(ranked) - len(passing)
        scored = [(h, quality_score(h.text, state["question"])) for h in passing]
        good = [(h, q) for h, q in scored if q >= QUALITY_THRESHOLD]
        quality_fallback = bool(scored) and not good
        chosen = scored if quality_fallback else good
    evidence = [to_evidence(h, q) for h, q in chosen]
    entry: dict[str, Any] = {
        "node": "researcher",
        "retry_count": retry_count,
        "queries": len(queries),
        "limit": limit,
        "chunks": len(evidence),
        "filtered_out": filtered_out,
        "low_quality_dropped": 0 if quality_fallback else len(scored) - len(good),
        "quality_fallback": quality_fallback,
        "avg_score": round(mean(e["score"] for e in evidence), 3) if evidence else 0.0,
        "threshold_used": threshold,
        "augmented_query_used": bool(plan.get("augmented")),
        "scores_kept": [round(h.score, 4) for h, _ in chosen],
        "scores_filtered": [round(h.score, 4) for h in ranked if h.score < threshold],
        "scores_low_quality": []
        if quality_fallback
        else [round(h.score, 4) for h, q in scored if q < QUALITY_THRESHOLD],
        "duration_ms": t["ms"],
    }
    metrics = {
        "retrieval_scores": entry["scores_kept"],
        "avg_retrieval_score": entry["avg_score"],
    }
    if evidence:
        return {"evidence": evidence, "metrics": metrics, "trace": [entry]}
    entry["warning"] = "no_qualifying_evidence"
    entry["results_before_filter"] = len(ranked)
    everything_filtered = len(ranked) > 0
    hitl = {
        "kind": "no_evidence",
        "message": ALL_FILTERED_MESSAGE if everything_filtered else NOTHING_MATCHED_MESSAGE,
        "options": (
            ["rephrase", "retry_lower_threshold", "cancel"]
            if everything_filtered
            else ["rephrase", "cancel"]
        ),
        "details": {
            "filtered_out": filtered_out,
            "threshold_used": threshold,
            "best_score": round(ranked[0].score, 4) if ranked else None,
        },
    }
    return {"evidence": [], "hitl": hitl, "metrics": metrics, "trace": [entry]}
