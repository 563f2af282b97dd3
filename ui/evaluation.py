"""The inspector's "Evaluate this workspace": retrieval measured on the analyst's own library.

The evaluation runs as a job of the server process (like an ingest batch, in the same worker),
so the page can be left while it runs; each result is stored and the history is drawn beside
the latest, so a change of documents or settings can be compared with an earlier day.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evaluation.outline import PER_DOC, EvaluationStore, load_question_file, run_evaluation
from masis_core.errors import InputError, MasisError
from masis_core.services.jobs import Job
from masis_core.storage.registry import Workspace
from masis_core.text.markup import counted, untrusted
from ui import charts
from ui.auth import door, role_notice
from ui.follow import follow_task
from ui.resources import jobs, workbench

SOURCES = {
    "outline": "Questions from the PDFs' own outlines",
    "file": "An uploaded question file (JSON or CSV)",
}
LAST_JOB = "evaluation_job"


def _start(ws: Workspace) -> None:
    gate = door()
    if not gate.may(ws.id, "evaluate"):
        role_notice(ws.id, "running an evaluation", " The evaluations already run are below.")
        return
    with st.form("evaluate"):
        source = st.radio(
            "Questions",
            list(SOURCES),
            format_func=SOURCES.__getitem__,
            horizontal=True,
            help="Outline: each bookmark (or numbered section heading, where a PDF has no "
            "outline) is asked as a question; its page is the page to find.",
        )
        upload = st.file_uploader(
            "Question file: columns or keys doc, question, gold_page",
            type=["json", "csv"],
        )
        k = st.number_input("k (a hit is the gold page in the top k)", 1, 20, 5, step=1)
        submitted = st.form_submit_button("Evaluate this workspace", type="primary")
    if not submitted:
        return
    questions = None
    if source == "file":
        if upload is None:
            st.warning("Choose a question file first, or use the outlines.")
            return
        try:
            questions = load_question_file(upload.name, upload.getvalue())
        except InputError as exc:
            st.error(untrusted(str(exc)))
            return
    try:
        gate.start_task(ws.id, "evaluate")  # checked again, and audited
    except MasisError as exc:
        st.error(untrusted(str(exc)))
        return
    bench = workbench()

    def work(job: Job) -> dict[str, Any]:
        def progress(done: int, total: int, what: str) -> None:
            job.progress = {"done": done, "total": total, "what": what}

        return run_evaluation(bench, ws.id, k=int(k), questions=questions, progress=progress)

    job = jobs().task("evaluation", ws.id, f"evaluation of {ws.id}", work)
    st.session_state[LAST_JOB] = job.id
    st.rerun()


def _history_table(history: list[dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for h in history:
        row: dict[str, Any] = {
            "evaluation": h["eval_id"],
            "created": h["created_at"],
            "source": h["source"],
            "questions": h["questions"],
            "k": h["k"],
        }
        for mode, m in h["per_mode"].items():
            row[f"{mode} page-hit@k"] = m.get(f"page_hit@{h['k']}")
            row[f"{mode} MRR"] = m.get("mrr")
            row[f"{mode} keep"] = m.get("keep_rate")
        rows.append(row)
    return pd.DataFrame(rows)


def _long_history(history: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"created": h["created_at"], "mode": mode, "page-hit@k": m.get(f"page_hit@{h['k']}")}
            for h in history
            for mode, m in h["per_mode"].items()
        ]
    )


def _per_mode_columns(per_mode: dict[str, Any]) -> list[tuple[Any, str, dict[str, Any]]]:
    """One column per retrieval mode, with the mode and its figures."""
    columns = st.columns(len(per_mode))
    return [(col, mode, per_mode[mode]) for col, mode in zip(columns, per_mode, strict=True)]


def _harder(report: dict[str, Any]) -> None:
    """The harder variant beside the headings' figure, each saying what it measured."""
    harder = report.get("harder") or {}
    k = report["k"]
    if harder.get("skipped"):
        st.caption(f"No harder variant: {harder['skipped']}.")
    if not harder.get("per_mode"):
        return
    st.markdown(
        f"**Harder: page-hit@{k} {harder['label']}** ({counted(harder['questions'], 'question')}"
        "; closer to what an analyst types than the heading itself)"
    )
    for col, mode, m in _per_mode_columns(harder["per_mode"]):
        col.metric(f"{mode} page-hit@{k}, harder", f"{m[f'page_hit@{k}']:.3f}")
        col.caption(f"MRR {m['mrr']:.3f} · keep rate {m['keep_rate']:.0%}")


def _report(report: dict[str, Any], previous: dict[str, Any] | None) -> None:
    k = report["k"]
    sources = ", ".join(f"{n} from {s}" for s, n in report["sources"].items())
    st.caption(
        f"{report['questions']} questions ({sources}) over {report['documents']} documents, "
        f"k = {k}; keep rate: the share of hits the researcher keeps under the current "
        f"threshold {report['threshold']} and keyword rule."
    )
    if report.get("label"):  # questions made from the outlines (not an uploaded file)
        entries = report.get("outline_entries") or report["questions"]
        st.markdown(
            f"**page-hit@{k} {report['label']}** ({report['questions']} of {entries} outline "
            "entries, each asked as written: the notes below say which were left out and why)"
        )
    for col, mode, m in _per_mode_columns(report["per_mode"]):
        before = (previous or {}).get("per_mode", {}).get(mode)
        delta = None
        if before is not None and previous is not None and previous["k"] == k:
            delta = round(m[f"page_hit@{k}"] - before[f"page_hit@{k}"], 3)
        col.metric(f"{mode} page-hit@{k}", f"{m[f'page_hit@{k}']:.3f}", delta=delta)
        col.caption(f"MRR {m['mrr']:.3f} · keep rate {m['keep_rate']:.0%}")
        col.plotly_chart(
            charts.rank_distribution(
                [r["ranks"][mode] for r in report["results"]], k, f"{mode}: rank of the gold page"
            ),
            key=f"eval-ranks-{mode}",
            config=charts.CHART_CONFIG,
        )
    _harder(report)
    for note in report.get("notes") or []:
        st.caption(f"Note: {untrusted(note)}")
    if report.get("unknown_documents"):
        st.caption(
            "Skipped, not in this workspace: "
            + untrusted(", ".join(report["unknown_documents"][:10]))
        )
    misses = [r for r in report["results"] if all(v is None for v in r["ranks"].values())]
    if not misses:
        return
    with st.expander(f"{counted(len(misses), 'question')} that no mode found in the top {k}"):
        st.dataframe(
            pd.DataFrame(
                [
                    {"document": r["doc"], "question": r["question"], "gold page": r["gold_page"]}
                    for r in misses
                ],
                columns=["document", "question", "gold page"],
            ),
            hide_index=True,
            width="stretch",
        )


def evaluation_panel(ws: Workspace) -> None:
    """Start an evaluation (or follow the running one), then the stored results."""
    st.caption(
        "Measures retrieval on your own documents, no question set needed: outline entries "
        f"(at most {PER_DOC} per document, spread over it) are asked as questions and each "
        "one's page is the page to find; then again cut to their content words and shuffled, "
        "a harder test. Dense, BM25 and hybrid retrieval are measured side by side."
    )
    workers = jobs()
    running = workers.active(ws.id, "evaluation")
    if running:
        follow_task(
            running[0].id, "you can switch pages; the evaluation goes on and shows here when done."
        )
    else:
        _start(ws)
    last = workers.get(st.session_state.get(LAST_JOB))
    if last is not None and last.workspace_id == ws.id and last.state == "failed":
        st.error(f"The evaluation failed: {untrusted(last.error)}")
    store = EvaluationStore(workbench())
    history = store.list(ws.id)
    if not history:
        st.info("No evaluation of this workspace yet.")
        return
    by_id = {h["eval_id"]: h for h in history}
    chosen = st.selectbox(
        "Evaluation",
        list(by_id),
        format_func=lambda i: (
            f"{by_id[i]['created_at']} · {by_id[i]['source']} · {by_id[i]['questions']} questions"
        ),
        key="eval-chosen",
    )
    report = store.get(chosen)
    if report is None:
        return
    older = [h for h in history if h["created_at"] < by_id[chosen]["created_at"]]
    _report(report, older[0] if older else None)
    st.markdown("**Every evaluation of this workspace**")
    st.dataframe(_history_table(history), hide_index=True, width="stretch")
    if len(history) > 1:
        st.plotly_chart(
            charts.evaluation_history(_long_history(history), "page-hit@k"),
            key="eval-history",
            config=charts.CHART_CONFIG,
        )
