"""Plotly figures for the inspector, built from ``masis_core.services.inspection`` tables."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

# One meaning per colour on every Inspector chart: these five are what happened to a
# candidate passage (green kept, blue kept by keyword, light blue kept for the table row the
# question names, red below threshold, amber low quality),
# and no other chart uses them for anything else. The per-pass counts used Plotly's default
# sequence, where green meant "low quality" beside a histogram where it meant "kept".
OUTCOME_COLORS = {
    "kept": "#2e7d32",
    "kept by keyword match": "#1565c0",
    "kept for the table row it names": "#64b5f6",
    "below threshold": "#c62828",
    "low content quality": "#f9a825",
}
# The per-pass counts' columns, named and coloured as the histogram's outcomes.
PASS_OUTCOMES = {
    "kept": "kept",
    "filtered_out": "below threshold",
    "low_quality": "low content quality",
}
# Charts whose bars are not outcomes: a neutral grey (time), and the analyst's verdicts.
NEUTRAL = "#78909c"
VERDICT = "#1f4e79"
# Bars of a score histogram over its axis.
BINS = 30
# Retrieval modes in the evaluation history: none of the outcome colours.
MODE_COLORS = {"hybrid": "#6a1b9a", "dense": "#00838f", "bm25": "#8d6e63"}
# Plotly's toolbar (the "modebar") sits in the figure's top 30 px and showed, on hover, over
# the title: every title is placed below that strip, in a top margin made for both.
MODEBAR_PX = 30
TITLE_PX = 24
TOP_MARGIN = MODEBAR_PX + TITLE_PX + 16
# Passed to ``st.plotly_chart``: the toolbar only while the pointer is on the chart, and
# without Plotly's logo (a link out of the workbench).
CHART_CONFIG = {"displayModeBar": "hover", "displaylogo": False}


def _framed(fig: go.Figure, height: int = 300) -> go.Figure:
    """The layout every Inspector chart shares: its title below the toolbar's strip."""
    fig.update_layout(
        height=height,
        margin={"t": TOP_MARGIN, "b": 30},
        title={
            "x": 0,
            "xanchor": "left",
            "xref": "paper",
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": MODEBAR_PX},
        },
    )
    return fig


def score_histogram(scores: pd.DataFrame, threshold: float | None, title: str) -> go.Figure:
    """Candidate scores coloured by what happened to them, with the threshold as a line. The
    bins are fixed (30 over the axis): Plotly's own, for a pass with one candidate, drew a
    single bar across the whole axis."""
    low = min(0.0, float(scores["score"].min()) if len(scores) else 0.0)
    fig = px.histogram(
        scores,
        x="score",
        color="outcome",
        barmode="stack",
        color_discrete_map=OUTCOME_COLORS,
        title=title,
        range_x=[low, 1.0],
    )
    fig.update_traces(xbins={"start": low, "end": 1.0, "size": (1.0 - low) / BINS})
    if threshold is not None:
        fig.add_vline(
            x=float(threshold),
            line_dash="dash",
            line_color="black",
            annotation_text=f"threshold {threshold}",
            annotation_position="top",
        )
    fig.update_layout(legend_title_text="")
    return _framed(fig)


def pass_counts(summary: pd.DataFrame) -> go.Figure:
    long = summary.rename(columns=PASS_OUTCOMES).melt(
        id_vars="pass", value_vars=list(PASS_OUTCOMES.values()), var_name="outcome"
    )
    fig = px.bar(
        long,
        x="pass",
        y="value",
        color="outcome",
        barmode="group",
        title="Per pass",
        color_discrete_map=OUTCOME_COLORS,
    )
    fig.update_layout(xaxis={"dtick": 1}, yaxis_title="")
    return _framed(fig)


def latency(steps: pd.DataFrame) -> go.Figure:
    per_node = steps.groupby("node", as_index=False)["duration_ms"].sum()
    fig = px.bar(
        per_node.sort_values("duration_ms"),
        x="duration_ms",
        y="node",
        orientation="h",
        title="Time per node (ms, all passes)",
        color_discrete_sequence=[NEUTRAL],
    )
    fig.update_layout(yaxis_title="")
    return _framed(fig)


def reliability(bins: pd.DataFrame, title: str) -> go.Figure:
    """Share of answers marked right per confidence bin against the diagonal a calibrated
    confidence would follow; each bar's width spans its bin, its label counts the answers."""
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=(bins["lo"] + bins["hi"]) / 2,
            y=bins["accuracy"],
            width=bins["hi"] - bins["lo"],
            text=bins["count"].tolist(),
            textposition="outside",
            name="right",
            marker_color=VERDICT,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="calibrated",
            line={"dash": "dash", "color": NEUTRAL},
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"title": "confidence", "range": [0, 1]},
        yaxis={"title": "share right", "range": [0, 1.1]},
    )
    return _framed(fig, height=320)


def rank_distribution(ranks: list[int | None], k: int, title: str) -> go.Figure:
    """Where the gold page came in one mode's rankings: rank 1..k, or not in the top k."""
    labels = [str(r) for r in range(1, k + 1)] + [f"not in top {k}"]
    counts = [sum(1 for x in ranks if x == r) for r in range(1, k + 1)]
    counts.append(sum(1 for x in ranks if x is None))
    # Found (kept) green, missed (below threshold) red: the outcomes' own colours.
    colors = [OUTCOME_COLORS["kept"]] * k + [OUTCOME_COLORS["below threshold"]]
    fig = go.Figure(go.Bar(x=labels, y=counts, marker_color=colors, text=counts))
    fig.update_layout(
        title=title,
        xaxis={"title": "rank of the first chunk on the gold page", "type": "category"},
        yaxis={"title": "questions"},
    )
    return _framed(fig)


def evaluation_history(history: pd.DataFrame, metric: str) -> go.Figure:
    """One line per retrieval mode: ``metric`` of each stored evaluation over time."""
    fig = px.line(
        history.sort_values("created"),
        x="created",
        y=metric,
        color="mode",
        markers=True,
        title=f"{metric} per evaluation",
        color_discrete_map=MODE_COLORS,
    )
    fig.update_layout(yaxis={"range": [0, 1.05]})
    return _framed(fig)
