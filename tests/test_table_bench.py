"""The table bench's two columns: the run with table rows is not served the draft that the run
without them composed from the same evidence (``sections`` remembers recent drafts)."""

from __future__ import annotations

from bench.table_answers import without_rows
from masis_core.answers import sections
from masis_core.state import Evidence

QUESTION = "What was the sunspot activity in 1750?"
SUNSPOTS = Evidence(
    text="statsmodels sunspots\nYEAR | SUNACTIVITY\n\n1749 | 80.9\n1750 | 83.4\n1751 | 47.7",
    place="rows 50–52",
    source="kb",
    chunk_id="bench/sunspots/000001",
    doc_id="sunspots",
    filename="sunspots.csv",
)


def test_the_run_with_rows_composes_its_own_draft_after_the_run_without() -> None:
    """Before the fix both columns of bench.table_answers measured the composer without rows:
    the second run read back the first run's draft, keyed by the same question and evidence."""
    with without_rows():
        assert [s["text"] for s in sections.compose(QUESTION, [SUNSPOTS])] == []
    after = [s["text"] for s in sections.compose(QUESTION, [SUNSPOTS])]
    assert after == ["YEAR: 1750; SUNACTIVITY: 83.4"]
