"""The Network UPS Tools FAQ (an outline entry per question) ingested through the app and asked
offline through the whole graph, as the browser run of issue 51 asked it: the passage that
answers is the lead, or one of the two offered beside it (the picker's cards when the run
pauses, "Also relevant" when it completes)."""

from __future__ import annotations

import pytest

from masis_core.services.records import RunRecord
from masis_core.services.runs import RunService
from masis_core.text.sentences import strip_markers
from masis_core.workspaces.workbench import Workbench


@pytest.fixture(scope="module")
def nut(nut_faq: tuple[Workbench, str]) -> tuple[RunService, str]:
    bench, ws_id = nut_faq
    return RunService(bench), ws_id


def offered(rec: RunRecord) -> list[str]:
    """The passages the analyst is shown, the lead first, without their markers."""
    if rec.status == "needs_human":
        cards = (rec.hitl or {}).get("details", {}).get("candidates") or []
        return [str(c["text"]) for c in cards]
    said = (rec.answer or "").split("\n\n")
    return [" ".join(strip_markers(p).split()) for p in said if p.strip() != "Also relevant"]


def test_data_stale_offers_its_entrys_opening(nut: tuple[RunService, str]) -> None:
    """Led with "Sometimes the driver loses the connection ..." at 65%, completed, and none of
    the three passages held what data stale means nor the remedy: "upsd refuses to serve up
    data ..." (a sentence the segmenter had dropped as debris) cut the entry's opening off
    from its remedy. The opening is now one passage, offered beside the lead (that the
    window scorer still prefers the lead's restatement of the question is left open:
    docs/measurements/passages.md)."""
    runs, ws_id = nut
    passages = offered(runs.ask(ws_id, "What does data stale mean and how do I fix it?"))
    opening = "It means your UPS driver hasn’t updated things in a little while."
    assert any(p.startswith(opening) and "make sure your driver is still running" in p
               for p in passages)  # fmt: skip


def test_more_than_one_computer_is_answered_from_the_right_entry(
    nut: tuple[RunService, str],
) -> None:
    """Led with the entry's own title, "I have to run THREE programs to monitor my UPS!", and
    none of the three passages held the data-room sentences further down the entry."""
    runs, ws_id = nut
    passages = offered(runs.ask(ws_id, "Can more than one computer monitor the same UPS?"))
    assert not any("THREE programs" in p for p in passages)
    assert (
        "Imagine a data room with a bunch of machines all drawing power from the same UPS."
        in (passages[0])
    )
    assert "The rest of them just run upsmon." in passages[0]


def test_an_entry_with_a_two_sentence_title_and_labelled_answers(
    nut: tuple[RunService, str],
) -> None:
    """Entry 4, shaped like the one above: a title of two sentences, then "Answer 1 The
    drivers drop root privileges ..." (read as a heading "1 The drivers ...", never quoted)."""
    runs, ws_id = nut
    passages = offered(runs.ask(ws_id, "Why does my UPS driver fail to start as root?"))
    said = "The drivers drop root privileges long before the serial port is opened."
    assert any(said in p for p in passages)
