"""The inspector's "Confidence calibration": the workspace's confidence map, how it was fitted,
and the reliability diagram before and after it.

The fit runs as a job of the server process after every batch that adds documents (and on
"Recalibrate now"), in the batch worker: research runs have their own workers and never wait
for it. The analyst's thumbs up and down refit it at once.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evaluation.calibration import job_work
from masis_core.policy import POLICY
from masis_core.services.calibration import reliability_frame
from masis_core.services.inspection import marked_answers, verdict_reliability
from masis_core.services.records import RunRecord
from masis_core.storage.registry import Workspace
from masis_core.text.markup import counted, percent, untrusted
from masis_core.workspaces.calibration import STALE, CalibrationStore, stale
from ui import charts
from ui.auth import door
from ui.follow import follow_task
from ui.resources import jobs, workbench

LAST_JOB = "calibration_job"


def _start(ws: Workspace) -> None:
    gate = door()
    if gate.may(ws.id, "calibrate") and st.button("Recalibrate now", key="calibration-start"):
        work = job_work(workbench())(gate.start_task(ws.id, "calibrate"))
        job = jobs().task("calibration", ws.id, f"confidence calibration of {ws.id}", work)
        st.session_state[LAST_JOB] = job.id
        st.rerun()


def _diagrams(report: dict[str, Any]) -> None:
    before = reliability_frame(report, "before")
    after = reliability_frame(report, "after")
    left, right = st.columns(2)
    if before is not None:
        left.plotly_chart(
            charts.reliability(
                before,
                f"Before: the judge's score ({report['ece_before']:.3f} ECE)",
            ),
            key="calibration-before",
            config=charts.CHART_CONFIG,
        )
    if after is not None:
        right.plotly_chart(
            charts.reliability(
                after,
                f"After: this workspace's map ({report['ece_after']:.3f} ECE)",
            ),
            key="calibration-after",
            config=charts.CHART_CONFIG,
        )
    else:
        right.info("No map: the global model is kept, so there is no 'after'.")


def _report(report: dict[str, Any], marked: int) -> None:
    p = report["points"]
    fitted = report["status"] == "fitted" and not stale(report)
    (st.success if fitted else st.warning)(report["message"])  # our words and counts
    if stale(report):
        st.warning(STALE)
    cols = st.columns(5)
    cols[0].metric("outline questions", p["outline"], help="answers of the job's questions")
    cols[1].metric(
        "answers you marked",
        marked,
        help="answers of this workspace you marked 👍 or 👎 (choosing a lead at review marks "
        "it 👍), counted as the Runs tab counts them",
    )
    cols[2].metric(
        "ECE before", f"{report['ece_before']:.3f}" if p["outline"] + p["verdicts"] else "–"
    )
    after, held = report["ece_after"], report.get("ece_after_held_out")
    # Two metrics, not "0.065 (0.047)": which figure was which had to be found in a tooltip.
    cols[3].metric(
        "ECE after, fitted points",
        "–" if after is None else f"{after:.3f}",
        help="the map's error on the answers it was fitted on",
    )
    cols[4].metric(
        "ECE after, held out",
        "–" if after is None or held is None else f"{held:.3f}",
        help="the error on answers each fit did not see (5-fold): what to expect of new ones",
    )
    st.caption(
        "Every figure here is measured on the headings reworded (their content words only, "
        "reordered) and on your verdicts, which count three times — not on the headings word "
        "for word, which find their own section far more easily than questions people ask."
    )
    left_out = report.get("elsewhere") or 0
    st.caption(
        f"{p['right']} right, {p['wrong']} wrong; updated {report.get('updated_at', '')}. "
        + _verdict_points(p["verdicts"], marked)
        + (
            f"{left_out} withheld {'answer' if left_out == 1 else 'answers'} left out: "
            "with the heading's section withheld, another place still had the heading's words, "
            "so whether it answers is not known. "
            if left_out
            else ""
        )
        + "Bars: the share right per confidence bin, labelled with the number of answers."
    )
    _diagrams(report)
    _map(report)
    for note in report.get("notes") or []:
        st.caption(f"Note: {untrusted(note)}")


def _map(report: dict[str, Any]) -> None:
    """The fitted map, and why that method."""
    if not report["table"]:
        return
    if report.get("held_out"):
        names = {"platt": "Platt scaling", "isotonic": "isotonic regression"}
        briers = ", ".join(f"{names[m]} {v['brier']:.3f}" for m, v in report["held_out"].items())
        st.caption(
            f"Map: {names[report['method']]}. Platt scaling is kept unless isotonic "
            f"regression predicts the points each fit did not see clearly better "
            f"(Brier score, 5-fold: {briers})."
        )
    with st.expander("The fitted map (judge score → calibrated probability)"):
        st.dataframe(pd.DataFrame(report["table"]), hide_index=True, width="stretch")


def _verdict_points(points: int, marked: int) -> str:
    """How the fit's points from the analyst relate to the answers they marked."""
    if points == marked:
        return ""
    return (
        f"The fit holds {counted(points, 'point')} from your answers: a lead you chose at "
        "review adds the lead passed over, as wrong (an answer marked without the judge's "
        "score of today, or of another engine, adds none). "
    )


def calibration_panel(ws: Workspace, runs: list[RunRecord]) -> None:
    """Follow or start the calibration job, then the stored fit; ``runs``: the workspace's,
    whose marked answers are counted as the Runs tab counts them."""
    st.caption(
        "After each upload the workspace's outline headings are reworded (content words "
        "only, reordered) and asked as questions, each of its own document; an answer is "
        "right when its lead cites the heading's section. The judge's confidence is then "
        "mapped (Platt scaling or isotonic regression, whichever predicts held-out answers "
        "better) to how often answers were right here, so that the "
        f"{percent(POLICY.low_confidence)} review bar means the "
        "same in every workspace. Your 👍 / 👎 add labelled "
        "answers."
    )
    running = jobs().active(ws.id, "calibration")
    if running:
        follow_task(
            running[0].id,
            "research is not held up by it; you can switch pages.",
            cancel_label="Cancel the calibration",
        )
    else:
        _start(ws)
    last = jobs().get(st.session_state.get(LAST_JOB))
    if last is not None and last.workspace_id == ws.id and last.state == "failed":
        st.error(f"The calibration failed: {untrusted(last.error)}")
    if not workbench().settings.calibrate_workspaces:
        st.caption(
            "Fitted and shown only: MASIS_CALIBRATE_WORKSPACES is off, so answers keep the "
            "judge's confidence."
        )
    report = CalibrationStore(workbench().db).get(ws.id)
    if report is None:
        st.info(
            "No calibration of this workspace yet: it runs after an upload in the Library and "
            "after `python -m ingest` (unless `--no-calibrate`), or press Recalibrate now. "
            "Until then the global confidence model is used."
        )
        return
    _report(report, len(marked_answers(runs)))


def verdict_panel(runs: list[RunRecord]) -> None:
    """The confidence runs reported against the analyst's 👍 / 👎, with how many verdicts it
    rests on: an error drawn from one verdict had read as a measurement, and beside the
    calibration tab's (another fit, on more points) as a contradiction."""
    calibration = verdict_reliability(runs)
    if calibration is None:
        st.caption(
            "Mark answers right or wrong (👍 / 👎 under each answer) to see here how well the "
            "confidence a run reports predicts your verdicts."
        )
        return
    bins, ece = calibration
    marked = len(marked_answers(runs))
    n = int(bins["count"].sum())
    answers = counted(marked, "answer")
    title = f"Confidence vs {answers} you marked (expected calibration error {ece:.3f})"
    st.plotly_chart(charts.reliability(bins, title), key="reliability", config=charts.CHART_CONFIG)
    few = (
        f"With fewer than {POLICY.map_min_points} marked answers this error is mostly chance. "
        if n < POLICY.map_min_points
        else ""
    )
    unscored = (
        f"{marked - n} of them reported no confidence and are not drawn. " if marked > n else ""
    )
    st.caption(
        few
        + unscored
        + "Each run's confidence as it was shown, against your 👍 / 👎. The Confidence "
        "calibration tab's error is another measure: the judge's score before and after this "
        "workspace's map, over the outline questions' answers and the answers you marked."
    )
