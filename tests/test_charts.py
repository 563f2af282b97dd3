"""The Inspector's charts: Plotly's toolbar never covers a title."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest

from ui import charts

SCORES = pd.DataFrame({"score": [0.2, 0.5, 0.7], "outcome": ["below threshold", "kept", "kept"]})
SUMMARY = pd.DataFrame({"pass": [1], "kept": [2], "filtered_out": [1], "low_quality": [0]})
BINS = pd.DataFrame({"lo": [0.5], "hi": [0.6], "accuracy": [1.0], "count": [2]})
HISTORY = pd.DataFrame({"created": ["2026-11-01"], "mode": ["hybrid"], "page-hit@k": [0.8]})

FIGURES = {
    "score histogram": lambda: charts.score_histogram(SCORES, 0.27, "pass 1 · threshold 0.27"),
    "per pass": lambda: charts.pass_counts(SUMMARY),
    "latency": lambda: charts.latency(pd.DataFrame({"node": ["critic"], "duration_ms": [3]})),
    "reliability": lambda: charts.reliability(BINS, "Confidence vs 2 answers you marked"),
    "ranks": lambda: charts.rank_distribution([1, None], 5, "hybrid: rank of the gold page"),
    "history": lambda: charts.evaluation_history(HISTORY, "page-hit@k"),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_title_sits_below_the_toolbar(name: str) -> None:
    """The toolbar takes the figure's top ``MODEBAR_PX`` on hover: each title is pinned to the
    figure's top edge and padded below that strip, with a top margin that holds both (the
    titles had sat in the middle of a 50 px margin, under the toolbar)."""
    fig: go.Figure = FIGURES[name]()
    title = fig.layout.title
    assert title.text
    assert (title.yref, title.y, title.yanchor) == ("container", 1, "top")
    assert title.pad.t >= charts.MODEBAR_PX
    assert fig.layout.margin.t >= charts.MODEBAR_PX + charts.TITLE_PX


def test_the_toolbar_shows_only_on_hover_without_the_logo() -> None:
    assert charts.CHART_CONFIG == {"displayModeBar": "hover", "displaylogo": False}
