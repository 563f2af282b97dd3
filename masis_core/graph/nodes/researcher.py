"""Researcher: workspace-scoped retrieval, thresholds, content quality, dedup."""

from __future__ import annotations

from statistics import mean
from typing import Any, get_args

from langgraph.runtime import Runtime

from masis_core.answers import aggregate
from masis_core.answers.aggregate import ranks_over
from masis_core.answers.followup import standalone
from masis_core.answers.rows import keyed
from masis_core.graph.context import RunContext, timed
from masis_core.graph.reviews import review
from masis_core.modes import Mode
from masis_core.policy import POLICY
from masis_core.retrieval.hybrid import Candidate, retrieve
from masis_core.retrieval.quality import QUALITY_THRESHOLD, quality_score
from masis_core.retrieval.thresholds import threshold_for
from masis_core.retrieval.vocabulary import vocabulary_check
from masis_core.state import Evidence, KeptBy, ResearchState

FIRST_PASS_LIMIT = POLICY.first_pass_limit
RETRY_LIMIT = POLICY.retry_limit
# Share of a query's keyword (IDF) weight a keyword-only hit must hold; on fitzgov-dev it keeps
# 71% of relevant keyword hits and 35% of irrelevant ones (see ``kept_by``).
KEYWORD_COVERAGE = POLICY.keyword_coverage
# The first passages ranked, whose language a question's is compared with.
LANGUAGE_PASSAGES = POLICY.language_passages
# With pages withheld, how many times the limit is read before their chunks are dropped.
WITHHELD_READ = POLICY.withheld_read

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


def navigation(c: Candidate) -> bool:
    """A chunk of a contents or index page (``ingest.parsing.navigation_page``): it names
    where a topic is, never what it says, so it is no evidence. A question on the NUT FAQ had
    cited its contents, pp. 5-6."""
    return bool(c.metadata.get("navigation"))


def kept_by(c: Candidate, mode: Mode, threshold: float, question: str = "") -> KeptBy | None:
    """Why a candidate is evidence: 'dense', 'keyword', 'both', 'row', or None (filtered out).

    A similarity threshold is a statement about *meaning*; it cannot judge a chunk
    found because it holds the exact code, name or date the question asks about — dense
    embeddings blur those, which is why keyword search is here at all. So the two sides are
    judged on their own terms:

    - dense: cosine similarity >= the embedder's threshold (0.27 / 0.22 for WordLlama);
    - keyword: the chunk is in a BM25 list *and* holds at least ``KEYWORD_COVERAGE`` of the
      query's IDF weight. Coverage is scale-free (raw BM25 scores depend on the corpus and
      the query's length) and weighs rare terms most, so one matching error code counts for
      more than several common words; a chunk matching only common words stays out.

    - row: failing both, a table chunk in a BM25 list one of whose rows holds the figure or
      name the question gives (``answers.rows.keyed``: "… in Texas?", "the patient aged
      54.4"): the rest of such a question describes the data set in words its rows never
      use, and the row ranked first was dropped; or whose columns the question ranks over
      (``answers.aggregate.ranks_over``: "Which House committee had the largest staff?").

    A candidate failing all three is dropped and counted in ``filtered_out``. ``dense`` mode
    applies only the first rule (similarity alone), ``bm25`` only the second. A chunk of a
    contents or index page (``navigation``) is never kept.
    """
    if navigation(c):
        return None
    dense_ok = mode != "bm25" and c.dense >= threshold
    keyword_ok = mode != "dense" and c.keyword_rank is not None and c.coverage >= KEYWORD_COVERAGE
    if dense_ok and keyword_ok:
        return "both"
    if dense_ok or keyword_ok:
        return "dense" if dense_ok else "keyword"
    listed = mode != "dense" and c.keyword_rank is not None
    place = str(c.metadata.get("place") or "")
    chunk = Evidence(text=c.text, place=place)
    return "row" if listed and (keyed(chunk, question) or ranks_over(chunk, question)) else None


def to_evidence(c: Candidate, quality: float, why: KeptBy) -> Evidence:
    m = c.metadata
    return Evidence(
        chunk_id=c.chunk_id,
        doc_id=str(m.get("doc_id", "")),
        filename=str(m.get("filename", "")),
        page_start=int(m.get("page_start", 0)),
        page_end=int(m.get("page_end", 0)),
        place=str(m.get("place") or ""),
        rows=str(m.get("rows") or ""),
        sections=str(m.get("sections") or ""),
        ocr=bool(m.get("ocr", False)),
        text=c.text,
        score=round(c.dense, 6),
        quality=quality,
        source="kb",
        kept_by=why,
        keyword_rank=c.keyword_rank,
        coverage=c.coverage,
        soft=round(c.soft, 4),
        version=int(m.get("version") or 0),
    )


def withheld(c: Candidate, pages: list[tuple[str, int, int]]) -> bool:
    """The chunk touches a withheld page range of its document."""
    m = c.metadata
    start = int(m.get("page_start", 0))
    end = int(m.get("page_end", start) or start)
    return any(m.get("doc_id") == d and start <= last and end >= first for d, first, last in pages)


def _retrieve(
    ctx: RunContext, state: ResearchState, queries: list[str], limit: int, mode: Mode
) -> list[Candidate]:
    """The ranked candidates, without the excluded documents and the withheld pages (read
    deeper, then dropped: only the workspace calibration withholds pages)."""
    pages = list(state.get("withheld_pages") or [])
    ranked = retrieve(
        ctx.bench.index(state["workspace_id"], state["embed_model"]),
        queries,
        limit * WITHHELD_READ if pages else limit,
        mode=mode,
        exclude_docs=list(state.get("excluded_docs") or []),
    )
    return [c for c in ranked if not withheld(c, pages)][:limit] if pages else ranked


def _vocabulary(
    ctx: RunContext, state: ResearchState, ranked: list[Candidate]
) -> dict[str, object]:
    """The question's words no document of the workspace uses, and whether it looks written
    in another language than the passages it ranked first (``retrieval/vocabulary.py``), for
    the trace entry."""
    ws_id = state["workspace_id"]
    keywords = ctx.bench.keyword_index(ws_id).index(ws_id)
    passages = [c.text for c in ranked[:LANGUAGE_PASSAGES]]
    return vocabulary_check(keywords, standalone(state["question"]), passages)


def _computed(ctx: RunContext, state: ResearchState, evidence: list[Evidence]) -> list[Evidence]:
    """The evidence with a ranking or total the question asks computed over each retrieved
    table read whole, from this workspace's own collection (``answers.aggregate``)."""
    ws_id, model = state["workspace_id"], state["embed_model"]
    return aggregate.attach(
        state["question"],
        evidence,
        lambda doc_id: ctx.bench.store.document_chunks(model, ws_id, doc_id),
    )


def node(state: ResearchState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = runtime.context
    model = state["embed_model"]
    retry_count = int(state.get("retry_count") or 0)
    plan = state.get("plan") or {}
    queries = plan.get("rag_queries", [state["question"]])
    if not queries:  # the planner sent everything to the web
        skipped = {"node": "researcher", "skipped": True, "reason": "web only", "duration_ms": 0}
        return {"evidence": [], "trace": [skipped]}
    limit = clamp_limit(FIRST_PASS_LIMIT if retry_count == 0 else RETRY_LIMIT)
    threshold = threshold_for(model, retry_count, state.get("threshold_override"))
    mode: Mode = state.get("retrieval_mode") or ctx.bench.settings.retrieval_mode
    runtime.stream_writer(
        {"node": "researcher", "status": f"searching {len(queries)} queries ({mode})"}
    )
    with timed() as t:
        ranked = _retrieve(ctx, state, queries, limit, mode)
        judged = [(c, kept_by(c, mode, threshold, state["question"])) for c in ranked]
        passing = [(c, why) for c, why in judged if why]
        filtered_out = len(ranked) - len(passing)
        scored = [(c, why, quality_score(c.text, state["question"])) for c, why in passing]
        good = [x for x in scored if x[2] >= QUALITY_THRESHOLD]
        quality_fallback = bool(scored) and not good
        chosen = scored if quality_fallback else good
    evidence = [to_evidence(c, q, why) for c, why, q in chosen]
    evidence = _computed(ctx, state, evidence)
    reasons = [why for _, why, _ in chosen]
    entry: dict[str, Any] = {
        "node": "researcher",
        "retry_count": retry_count,
        "mode": mode,
        "queries": len(queries),
        "limit": limit,
        "chunks": len(evidence),
        "filtered_out": filtered_out,
        "navigation_dropped": sum(1 for c in ranked if navigation(c)),
        "low_quality_dropped": 0 if quality_fallback else len(scored) - len(good),
        "quality_fallback": quality_fallback,
        "avg_score": round(mean(e["score"] for e in evidence), 3) if evidence else 0.0,
        "threshold_used": threshold,
        "keyword_coverage_threshold": KEYWORD_COVERAGE if mode != "dense" else None,
        "kept_by": {r: reasons.count(r) for r in get_args(KeptBy) if r in reasons},
        "augmented_query_used": bool(plan.get("augmented")),
        "scores_kept": [round(c.dense, 4) for c, why, _ in chosen if why in ("dense", "both")],
        "scores_kept_keyword": [round(c.dense, 4) for c, why, _ in chosen if why == "keyword"],
        "scores_kept_row": [round(c.dense, 4) for c, why, _ in chosen if why == "row"],
        "scores_filtered": [round(c.dense, 4) for c, why in judged if why is None],
        "scores_low_quality": []
        if quality_fallback
        else [round(c.dense, 4) for c, _, q in scored if q < QUALITY_THRESHOLD],
        **_vocabulary(ctx, state, ranked),
        "duration_ms": t["ms"],
    }
    metrics = {
        "retrieval_scores": entry["scores_kept"],
        "avg_retrieval_score": entry["avg_score"],
    }
    if evidence:
        return {"evidence": evidence, "metrics": metrics, "trace": [entry]}
    return _no_evidence(entry, ranked, filtered_out, threshold, metrics)


def _no_evidence(
    entry: dict[str, Any],
    ranked: list[Candidate],
    filtered_out: int,
    threshold: float,
    metrics: dict[str, Any],
) -> dict[str, Any]:
    """Nothing qualified: pause for review, offering a lower bar only when passages were
    filtered (with nothing found, a lower bar finds nothing either)."""
    entry["warning"] = "no_qualifying_evidence"
    entry["results_before_filter"] = len(ranked)
    everything_filtered = len(ranked) > 0
    hitl = review(
        "no_evidence",
        ALL_FILTERED_MESSAGE if everything_filtered else NOTHING_MATCHED_MESSAGE,
        {
            "filtered_out": filtered_out,
            "threshold_used": threshold,
            "best_score": round(max(c.dense for c in ranked), 4) if ranked else None,
        },
        without=() if everything_filtered else ("retry_lower_threshold",),
    )
    return {"evidence": [], "hitl": hitl, "metrics": metrics, "trace": [entry]}
