"""Retrieval inspector: scores against the threshold per pass, latency, retry reasons;
"Evaluate this workspace", retrieval measured on the workspace's own documents; and
"Confidence calibration", the confidence fitted to the workspace."""

from __future__ import annotations

import streamlit as st

from masis_core.retrieval.thresholds import threshold_for
from masis_core.services.inspection import (
    confidence_paths,
    kept_summary,
    node_latency,
    pass_summary,
    pass_title,
    retry_reasons,
    score_rows,
    workspace_scores,
)
from masis_core.text.markup import plain
from ui import charts
from ui.auth import door
from ui.calibration import calibration_panel, verdict_panel
from ui.evaluation import evaluation_panel
from ui.sidebar import run_picker, workspace_or_stop
from ui.trace import raw_trace

ws = workspace_or_stop("📊 Retrieval inspector")
runs = door().runs(ws.id)
runs_tab, evaluation_tab, calibration_tab = st.tabs(
    ["Runs", "Evaluate this workspace", "Confidence calibration"]
)
with evaluation_tab:
    evaluation_panel(ws)
with calibration_tab:
    calibration_panel(ws, runs)
with runs_tab:
    if not runs:
        st.info("No runs in this workspace yet: ask a question on the Research page.")
        st.stop()

    rec = run_picker(
        "Run",
        runs,
        "inspector-run",
        lambda r: f"{r.created_at} · {r.shown_status} · {plain(r.question[:80])}",
    )

    st.subheader("This run")
    summary = pass_summary(rec)
    scores = score_rows(rec)
    if summary.empty:
        st.info("This run did no retrieval.")
    else:
        passes = summary.to_dict("records")
        for row in range(0, len(passes), 3):  # every pass: a fourth, after a review, was cut
            for col, p in zip(st.columns(3), passes[row : row + 3], strict=False):
                got = scores[scores["pass"] == p["pass"]]
                title = pass_title(p)
                if got.empty:
                    col.info(f"{title}: no candidates at all.")
                else:
                    col.plotly_chart(
                        charts.score_histogram(got, p["threshold"], title),
                        key=f"h{p['pass']}",
                        config=charts.CHART_CONFIG,
                    )
        left, right = st.columns(2)
        left.plotly_chart(charts.pass_counts(summary), key="counts", config=charts.CHART_CONFIG)
        steps = node_latency(rec)
        if not steps.empty:
            right.plotly_chart(charts.latency(steps), key="latency", config=charts.CHART_CONFIG)
        st.dataframe(summary, hide_index=True, width="stretch")
    reasons = retry_reasons(rec)
    st.markdown("**Retry reasons**")
    if reasons.empty:
        st.caption("No retries in this run.")
    else:
        st.dataframe(reasons, hide_index=True, width="stretch")

    st.markdown("**Confidence, stage by stage**")
    paths = confidence_paths(rec)
    if not paths:
        st.caption("No confidence in this run: the critic did not judge a draft.")
    for n, path in enumerate(paths, start=1):
        st.caption(f"Pass {n}: {path}")
    raw_trace(rec.trace)  # field names as recorded: the Research page says it in words

    st.subheader("Confidence against your verdicts")
    verdict_panel(runs)

    st.subheader(f"All runs in {ws.id}")
    everything = workspace_scores(runs)
    if everything.empty:
        st.info("No retrieval scores recorded yet.")
    else:
        default = threshold_for(ws.embed_model, 0)
        st.plotly_chart(
            charts.score_histogram(
                everything, default, f"{len(everything)} candidates from {len(runs)} runs"
            ),
            key="workspace",
            config=charts.CHART_CONFIG,
        )
        st.caption(kept_summary(everything, ws.embed_model, default))
