"""The confidence fitted to each workspace: the isotonic map, where it is kept, the critic that
applies it, the job that fits it on the workspace's outline questions (real PDFs, real Chroma,
real SQLite, real jobs), the analyst's verdicts, the edges, the CLI and the inspector."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fpdf import FPDF

from evaluation.calibration import (
    ask,
    calibrate_workspace,
    calibration_questions,
    format_report,
    job_work,
    reworded,
)
from ingest.pipeline import Ingestor, Source
from masis_core.__main__ import main
from masis_core.answers import confidence
from masis_core.answers.engine import OfflineEngine
from masis_core.graph.build import first_draft_graph
from masis_core.graph.context import RunContext
from masis_core.services.inspection import confidence_paths
from masis_core.services.jobs import Job, JobManager
from masis_core.services.runs import RunService
from masis_core.storage.registry import Workspace
from masis_core.workspaces.calibration import (
    MIN_POINTS,
    CalibrationStore,
    Point,
    auc,
    fit,
    isotonic,
    map_of,
    platt,
    platt_map,
    reliability,
    stale,
)
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app
from tests.pdfs import filler, make_outlined_pdf
from tests.texts import BOILER, PUMP

PUMP_QUESTION = "How often must the hydraulic pump be inspected?"

# Topics a manual would have a section on, each page in words of its own.
TOPICS = [
    ("Steam boiler descaling", BOILER),
    ("Hydraulic pump inspection", PUMP),
    (
        "Conveyor belt tensioning",
        "Conveyor belts are tensioned until the belt sags 15 mm "
        "between idlers; a slack belt slips on the drive drum and wears its lagging.",
    ),
    (
        "Forklift battery charging",
        "Forklift batteries are charged in the ventilated charging "
        "bay only; charging produces hydrogen, and the bay's fan must run during every charge.",
    ),
    (
        "Compressor oil change",
        "The air compressor's oil is changed every 1,000 running hours "
        "with ISO 68 compressor oil; the drain plug sits under the crankcase.",
    ),
]


def under_confident(n: int = 40) -> list[Point]:
    """The judge says 0.3-0.5 for answers right 90% of the time, and 0.05 for wrong ones."""
    rng = np.random.default_rng(7)
    points = [
        Point(float(s), bool(rng.random() < 0.9), "outline") for s in rng.uniform(0.3, 0.5, n)
    ]
    points += [Point(0.05, False, "outline") for _ in range(n // 2)]
    return points


def outlined(bench: Workbench, name: str, sections: list[tuple[str, str]]) -> Workspace:
    ws = bench.create_workspace(name, "wordllama")
    pdf = make_outlined_pdf(sections)
    assert Ingestor(bench).ingest_bytes(ws, pdf, f"{name}.pdf").status == "ingested"
    return ws


# -- the map -------------------------------------------------------------------------------------
def test_isotonic_pools_adjacent_violators_and_equal_scores() -> None:
    xs, ys, ws = isotonic([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    assert list(np.round(xs, 3)) == [0.1, 0.25, 0.4]
    assert list(ys) == [0.0, 0.5, 1.0] and list(ws) == [1, 2, 1]
    # equal scores are one value, whatever their order
    xs, ys, _ = isotonic([0.5, 0.7, 0.7, 0.9], [1, 1, 0, 1])
    assert list(np.round(xs, 3)) == [0.633, 0.9] and list(np.round(ys, 3)) == [0.667, 1.0]


def test_an_under_confident_judge_is_mapped_up_and_the_error_falls() -> None:
    report = fit(under_confident())
    assert report["status"] == "fitted"
    assert report["points"] == {"outline": 60, "verdicts": 0, "right": 36, "wrong": 24}
    cmap = map_of(report, "offline")
    assert cmap is not None
    assert cmap(0.4) > 0.75 and cmap(0.05) < 0.1  # 0.4 meant ~90% right here
    assert list(cmap.probabilities) == sorted(cmap.probabilities)  # monotone
    assert report["ece_after"] < report["ece_before"] / 3
    assert report["ece_after_held_out"] < report["ece_before"]
    assert map_of(report, "ollama") is None  # fitted on the offline engine's scores only


def platt_points(n: int, seed: int) -> list[Point]:
    """Judge scores whose chance of being right follows a Platt curve (slope 1.5, offset 1)."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0.02, 0.98, n)
    chance = 1 / (1 + np.exp(-(1.5 * np.log(scores / (1 - scores)) + 1.0)))
    return [
        Point(float(s), bool(rng.random() < c), "outline")
        for s, c in zip(scores, chance, strict=True)
    ]


def test_an_edited_feature_makes_the_workspace_calibration_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace map is fitted on the judge's scores; a feature's code edited (one regex of
    a copy of ``features.py``) changes what those scores mean, so the fit is stale and runs
    fall back to the global model until the workspace is recalibrated."""
    copies = []
    for source in confidence.FEATURE_CODE:
        copy = tmp_path / source.name
        copy.write_bytes(source.read_bytes())
        copies.append(copy)
    monkeypatch.setattr(confidence, "FEATURE_CODE", tuple(copies))
    confidence.judge_version.cache_clear()
    try:
        report = fit(under_confident())
        assert not stale(report) and map_of(report, "offline") is not None
        features = tmp_path / "features.py"
        code = features.read_text()
        edited = code.replace("min(3, ", "min(2, ")  # a cap: reporting sources count to 2
        assert edited != code
        features.write_text(edited)
        confidence.judge_version.cache_clear()
        assert stale(report)
        assert map_of(report, "offline") is None
    finally:
        confidence.judge_version.cache_clear()


def test_platt_recovers_the_curve_and_stays_monotone() -> None:
    a, b = platt(platt_points(3000, 1))
    assert abs(a - 1.5) < 0.15 and abs(b - 1.0) < 0.15
    # A judge that ranks this workspace's answers backwards gets a flat map, never a falling one.
    backwards = [Point(p.score, not p.right, "outline") for p in platt_points(200, 2)]
    assert platt(backwards)[0] == 0.0
    # Flat at the share right: scores 0.8-0.97, right below 0.85 (30%). The backwards fit's
    # own offset, its slope cut to 0, had put the flat map at 0.71.
    high = [Point(float(s), bool(s < 0.85), "outline") for s in np.linspace(0.8, 0.97, 60)]
    slope, offset = platt(high)
    assert slope == 0.0 and abs(1 / (1 + np.exp(-offset)) - 0.3) < 0.05
    # Tabulated over the scores fitted only: below them the judge's score stands, as for the
    # isotonic map (the curve itself lifts 0.02 to 0.08 here).
    mostly = [
        Point(float(s), i % 4 != 0, "outline") for i, s in enumerate(np.linspace(0.4, 0.8, 40))
    ]
    cmap = platt_map(mostly)
    assert (cmap.scores[0], cmap.scores[-1]) == (0.4, 0.8)
    assert cmap(0.02) == 0.02 and cmap(0.6) > 0.65


def test_platt_is_kept_unless_isotonic_predicts_held_out_points_clearly_better() -> None:
    """Never right below 0.3 and nine times in ten above it: a plateau, isotonic's shape,
    which a logistic curve pulled towards the identity cannot take: isotonic's held-out
    Brier score is lower by about three standard errors. On noisy points along a Platt curve,
    and on a step of two-thirds at 0.5 (isotonic lower by 0.008, within one standard error
    of chance), Platt's two parameters are kept."""
    smooth = fit(platt_points(60, 0))
    halfway = fit(
        [
            Point(float(s), s > 0.5 and i % 3 != 0, "outline")
            for i, s in enumerate(np.linspace(0.02, 0.98, 60))
        ]
    )
    plateau = fit(
        [
            Point(float(s), s > 0.3 and i % 10 != 0, "outline")
            for i, s in enumerate(np.linspace(0.02, 0.98, 60))
        ]
    )
    assert (smooth["method"], halfway["method"], plateau["method"]) == (
        "platt",
        "platt",
        "isotonic",
    )
    assert halfway["held_out"]["isotonic"]["brier"] < halfway["held_out"]["platt"]["brier"]
    assert plateau["held_out"]["isotonic"]["brier"] < plateau["held_out"]["platt"]["brier"]
    for report in (smooth, halfway, plateau):
        assert report["ece_after_held_out"] == report["held_out"][report["method"]]["ece"]
        knots = [k["calibrated"] for k in report["table"]]
        assert knots == sorted(knots)  # either way, monotone
    mapped = map_of(plateau, "offline")
    assert mapped is not None and 0.8 < mapped(0.8) < 0.95 and mapped(0.1) < 0.15
    text = format_report({**smooth, "workspace": "w"})
    assert "map: platt (held-out Brier score platt" in text


def test_too_few_or_one_sided_points_keep_the_global_model() -> None:
    few = fit(under_confident()[: MIN_POINTS - 1])
    assert few["status"] == "too_few" and few["table"] is None
    assert f"{MIN_POINTS - 1} labelled answers" in few["message"]
    assert "keeps the global confidence model" in few["message"]
    wrong = fit([Point(s, False, "outline") for s in np.linspace(0.1, 0.9, 30)])
    assert wrong["status"] == "one_sided" and map_of(wrong, "offline") is None
    assert "0 of 30 answers were right" in wrong["message"]
    # Just enough wrong answers, all in one held-out fold: that fold's maps are fitted on
    # right answers only, and the figures are still numbers.
    edge = [
        Point(float(s), i not in (0, 5, 10), "outline")
        for i, s in enumerate(np.linspace(0.3, 0.9, 20))
    ]
    edged = fit(edge)
    assert edged["status"] == "fitted" and edged["method"] in ("platt", "isotonic")
    assert all(
        np.isfinite(v["brier"]) and np.isfinite(v["ece"]) for v in edged["held_out"].values()
    )
    json.dumps(edged)  # stored as JSON: no numpy bools or arrays in the report


def test_too_few_new_points_leave_an_earlier_fit_in_place(bench: Workbench) -> None:
    """``calibrate --max-questions 2`` after a good fit: the fit stays, and the report says so
    rather than "keeps the global model" while the map is gone. Only a short job asks it."""
    store = CalibrationStore(bench.db)
    ws = bench.create_workspace("a", "wordllama")
    fitted = store.save(ws.id, under_confident(), [])
    assert fitted is not None and fitted["status"] == "fitted"
    again = store.save(ws.id, under_confident()[:3], [], keep_larger_fit=True)
    assert again is not None and again["status"] == "too_few"
    assert "keeps its earlier fit (60 answers, " in again["message"]
    assert again["kept_earlier_fit"] == fitted["updated_at"]
    assert store.get(ws.id) == fitted and len(store.outline_points(ws.id)) == 60
    assert store.map_for(ws.id, "offline") is not None
    # A stale fit (another judge's scores) is no fit to keep: the new report replaces it.
    stale_report = {**fitted, "judge": "an earlier judge"}
    with bench.db.connect() as conn:
        conn.execute(
            "UPDATE calibrations SET report = ? WHERE workspace_id = ?",
            (json.dumps(stale_report), ws.id),
        )
    replaced = store.save(ws.id, under_confident()[:3], [], keep_larger_fit=True)
    assert replaced is not None and "keeps the global confidence model" in replaced["message"]
    assert store.get(ws.id)["status"] == "too_few"
    # A verdict's refit (no flag) always stores: a withdrawn 👎 must count at once.
    assert store.save(ws.id, under_confident(), []) is not None
    store.save(ws.id, under_confident()[:3], [])
    assert store.get(ws.id)["status"] == "too_few"


# -- kept per workspace ---------------------------------------------------------------------------
@pytest.mark.usefixtures("backend")
def test_the_fit_is_stored_per_workspace_and_goes_with_it(bench: Workbench) -> None:
    store = CalibrationStore(bench.db)
    a = bench.create_workspace("a", "wordllama")
    bench.create_workspace("b", "wordllama")
    assert store.save(a.id, under_confident(), []) is not None
    assert store.get(a.id)["status"] == "fitted" and store.get("b") is None
    assert store.map_for("b", "offline") is None and store.map_for(a.id, "offline") is not None
    assert len(store.outline_points(a.id)) == 60
    assert store.save("gone", under_confident(), []) is None  # no workspace, nothing stored
    assert store.get("gone") is None
    bench.delete_workspace(a.id)
    assert store.get(a.id) is None


def test_the_critic_reports_the_workspace_map_and_the_judges_own_score(
    bench: Workbench, plant: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    research = RunService(bench)
    before = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    judged = before.confidence
    critic = [e for e in before.trace if e["node"] == "critic"][-1]
    assert critic["calibration"] == "global" and critic["judged_confidence"] is None
    assert next(iter(critic["confidence_stages"])) == "model"
    assert list(critic["confidence_stages"].values())[-1] == judged
    # This workspace's answers at the judge's score were right a fifth of the time.
    points = [Point(judged, i % 5 == 0, "outline") for i in range(25)]
    points += [Point(0.01, False, "outline") for _ in range(5)]
    assert CalibrationStore(bench.db).save(plant.id, points, []) is not None
    # Fitted but not applied while MASIS_CALIBRATE_WORKSPACES is off.
    monkeypatch.setattr(bench.settings, "calibrate_workspaces", False)
    kept = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    assert kept.confidence == judged and kept.status == "completed"
    monkeypatch.setattr(bench.settings, "calibrate_workspaces", True)
    after = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    critic = [e for e in after.trace if e["node"] == "critic"][-1]
    assert critic["calibration"] == "workspace"
    assert critic["judged_confidence"] == judged
    assert after.confidence == pytest.approx(critic["confidence"])
    # The workspace map is the path's last stage, and the Inspector shows the whole path.
    assert critic["confidence_stages"]["workspace"] == critic["confidence"]
    path = confidence_paths(after)[-1]
    assert path.startswith("model ") and path.endswith(f"→ workspace {critic['confidence']:.2f}")
    assert after.confidence < 0.35  # mapped down, so the answer now goes to review
    assert after.status == "needs_human" and after.hitl["kind"] == "low_confidence"


# -- the job -------------------------------------------------------------------------------------
def test_the_job_asks_the_outline_and_scores_each_lead_against_its_page(bench: Workbench) -> None:
    ws = outlined(bench, "plant", TOPICS)
    seen: list[tuple[int, int, str]] = []
    report = calibrate_workspace(bench, ws.id, progress=lambda d, t, w: seen.append((d, t, w)))
    # 5 headings, and the 1st and 4th asked again with their section withheld
    assert report["questions"] == 5 and report["withheld"] == 2
    assert report["points"]["outline"] + report["unscored"] + report["elsewhere"] == 7
    # each heading is its own page's topic: the lead cites it
    assert report["points"]["right"] >= 4
    # the short sections share their chunks: with a section withheld no passage is left, so
    # the two asked again get no draft (were the pages not withheld, both would be right)
    assert report["unscored"] == 2 and report["points"]["outline"] == 5
    assert report["status"] == "too_few" and report["table"] is None
    assert seen[0][2] == "reading the outlines" and seen[-1][:2] == (6, 7)
    stored = CalibrationStore(bench.db).get(ws.id)
    assert stored["points"] == report["points"]


def test_a_withheld_section_is_never_retrieved(bench: Workbench) -> None:
    """The page range withheld leaves retrieval itself: the rest of the document answers."""
    long_pages = [(title, f"{text} {filler(title, 250)}") for title, text in TOPICS]
    ws = outlined(bench, "plant", long_pages)
    doc = bench.documents(ws.id)[0].doc_id
    graph, context = first_draft_graph(), RunContext(bench, OfflineEngine())

    def pages(state: dict[str, Any], name: str = "plant.pdf") -> set[int]:
        return {
            page
            for ev in state.get("evidence") or []
            if ev["filename"] == name
            for page in range(int(ev["page_start"]), int(ev["page_end"]) + 1)
        }

    assert 2 in pages(ask(graph, context, ws, PUMP_QUESTION))  # the pump's own page
    kept = ask(graph, context, ws, PUMP_QUESTION, pages=[(doc, 2, 3)])
    assert kept.get("evidence") is not None and not pages(kept) & {2, 3}
    assert all(c.get("page") not in (2, 3) for c in kept.get("citations") or [])
    # another document's pages of the same numbers are not withheld
    other = make_outlined_pdf([("Pump notes", PUMP), ("Hydraulic pump inspection", PUMP)])
    assert Ingestor(bench).ingest_bytes(ws, other, "notes.pdf").status == "ingested"
    again = ask(graph, context, ws, PUMP_QUESTION, pages=[(doc, 2, 3)])
    assert 2 in pages(again, "notes.pdf") and not pages(again) & {2, 3}


def test_each_outline_question_is_asked_of_its_own_document(bench: Workbench) -> None:
    """A heading does not say which document it is in: a note on the same topic, in the
    heading's very words, must not make the PDF's own section count as missed, nor answer
    the heading when its section is withheld."""
    ws = outlined(bench, "plant", TOPICS)
    note = " ".join(
        f"{title}: {title.lower()} notes and {title.lower()} tips." for title, _ in TOPICS
    )
    assert Ingestor(bench).ingest_bytes(ws, note.encode(), "tips.txt").status == "ingested"
    report = calibrate_workspace(bench, ws.id)
    assert report["points"]["right"] == 5
    # Searched, the note would hold each heading as a phrase: left out as "elsewhere".
    assert report["withheld"] == 2 and report["elsewhere"] == 0
    text = format_report(report)
    assert "5 outline questions, 2 of them asked again with their section withheld" in text


def test_a_withheld_heading_answered_from_the_rest_of_its_document(bench: Workbench) -> None:
    """With its section withheld, a heading is answered from another page of the same
    document: by other words, an on-topic draft the workspace has no section for (the map's
    negative); in the heading's own words, not known (left out)."""
    reversed_words = " ".join(
        f"Notes on {' and the '.join(reversed(title.lower().split()))}: kept in the office."
        for title, _ in TOPICS
    )
    long_pages = [(title, f"{text} {filler(title, 250)}") for title, text in TOPICS]
    ws = outlined(bench, "plant", [*long_pages, ("Office notes", reversed_words)])
    report = calibrate_workspace(bench, ws.id)
    assert report["withheld"] == 2 and report["elsewhere"] == 0
    assert report["points"]["wrong"] >= 1  # "Steam boiler descaling", from the notes' page
    same_words = " ".join(f"{title} is kept in the office." for title, _ in TOPICS)
    ws = outlined(bench, "depot", [*long_pages, ("Office notes", same_words)])
    report = calibrate_workspace(bench, ws.id)
    assert report["withheld"] == 2 and report["elsewhere"] >= 1
    left_out = f"{report['elsewhere']} of those left out: another place has the heading"
    assert left_out in format_report(report)


def test_a_title_heading_two_documents_is_not_asked(bench: Workbench) -> None:
    ws = outlined(bench, "a", [("Introduction", BOILER), ("Hydraulic pump inspection", PUMP)])
    other = make_outlined_pdf([("Introduction", TOPICS[2][1])])
    assert Ingestor(bench).ingest_bytes(ws, other, "b.pdf").status == "ingested"
    questions, _ = calibration_questions(bench, ws.id)
    assert [q["question"] for q in questions] == ["Hydraulic pump inspection"]


def test_a_workspace_of_one_short_note_says_so_and_keeps_the_global_model(
    bench: Workbench,
) -> None:
    ws = bench.create_workspace("note", "wordllama")
    note = b"Pump: inspect every 500 hours."
    assert Ingestor(bench).ingest_bytes(ws, note, "note.txt").status == "ingested"
    report = calibrate_workspace(bench, ws.id)
    assert report["status"] == "too_few" and report["questions"] == 0
    assert "keeps the global confidence model" in report["message"]
    assert "0 outline questions (none asked again with its section withheld; 0 drafts" in (
        format_report(report)
    )
    assert CalibrationStore(bench.db).map_for(ws.id, "offline") is None


def test_outline_questions_in_another_language_are_asked_and_scored(bench: Workbench) -> None:
    ws = outlined(
        bench,
        "usine",
        [
            (
                "Détartrage de la chaudière",
                "La chaudière est détartrée tous les trois mois "
                "avec une solution d'acide citrique; on vidange d'abord le circuit.",
            ),
            (
                "Inspection de la pompe hydraulique",
                "La pompe hydraulique est inspectée toutes "
                "les 500 heures de fonctionnement par un technicien qualifié.",
            ),
        ],
    )
    report = calibrate_workspace(bench, ws.id)
    assert report["questions"] == 2 and report["withheld"] == 1
    assert report["points"]["outline"] + report["unscored"] + report["elsewhere"] == 3
    assert report["points"]["right"] == 2


def test_when_every_outline_question_fails_it_says_so_and_keeps_the_global_model(
    bench: Workbench,
) -> None:
    # Every bookmark points three pages off its topic: each lead cites another page.
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for i in range(len(TOPICS)):
        pdf.add_page()
        pdf.start_section(TOPICS[(i + 3) % len(TOPICS)][0])
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(w=190, h=4.5, text=f"{TOPICS[i][1]} {filler(str(i), 300)}")
    ws = bench.create_workspace("shuffled", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, bytes(pdf.output()), "shuffled.pdf")
    assert report.status == "ingested"
    report = calibrate_workspace(bench, ws.id)
    assert report["points"]["right"] == 0 and report["points"]["outline"] >= 3
    assert report["notes"][0] == (
        "none of the 5 outline questions was answered from its heading's page"
    )
    assert report["table"] is None
    assert "keeps the global confidence model" in report["message"]


def test_verdicts_that_contradict_the_fit_pull_it_their_way(
    bench: Workbench, plant: Workspace
) -> None:
    research = RunService(bench)
    rec = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    judged = float(rec.confidence)
    # The outline said: answers at this score are always right.
    outline = [Point(judged, True, "outline") for i in range(20)]
    outline += [Point(0.01, False, "outline") for _ in range(10)]
    store = CalibrationStore(bench.db)
    fitted = store.save(plant.id, outline, [], elsewhere=2)
    high = store.map_for(plant.id, "offline")(judged)
    assert high > 0.8
    # The analyst marks eight answers at that score wrong.
    for _ in range(8):
        run = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
        research.mark(run.run_id, False)  # each verdict refits the map
    refit = store.get(plant.id)
    assert refit["points"]["verdicts"] == 8 and refit["points"]["outline"] == 30
    assert refit["elsewhere"] == 2  # the job's counts outlive a refit
    lowered = store.map_for(plant.id, "offline")(judged)
    assert lowered < high - 0.2  # 20 of 44 at this score right now (a verdict counts 3 times)
    assert refit["ece_before"] != fitted["ece_before"]
    knots = [k["calibrated"] for k in refit["table"]]
    assert knots == sorted(knots)


def test_a_workspace_deleted_while_its_calibration_runs_stores_nothing(
    bench: Workbench,
) -> None:
    ws = outlined(bench, "doomed", TOPICS)
    research = RunService(bench)

    def delete_after_the_first(done: int, total: int, what: str) -> None:
        if done == 1:
            research.delete_workspace(ws.id)

    report = calibrate_workspace(bench, ws.id, progress=delete_after_the_first)
    assert report == {"workspace": ws.id, "status": "deleted"}
    with bench.db.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM calibrations").fetchone()[0] == 0


def _manager(bench: Workbench) -> JobManager:
    return JobManager(RunService(bench), Ingestor(bench), after_batch=job_work(bench))


def test_a_batch_queues_the_calibration_and_a_cancelled_one_stores_nothing(
    bench: Workbench,
) -> None:
    manager = _manager(bench)
    ws = bench.create_workspace("plant", "wordllama")
    hold = threading.Event()
    blocker = manager.task("evaluation", ws.id, "holds the batch worker", lambda job: hold.wait(60))
    batch = manager.ingest(ws, [Source.of_bytes("plant.pdf", make_outlined_pdf(TOPICS))])
    assert manager.active(ws.id, "calibration") == []  # queued only once the batch has ended
    hold.set()
    assert blocker.wait(60) and batch.wait(60)
    (calibration,) = [j for j in manager._jobs.values() if j.kind == "calibration"]
    assert calibration.wait(120) and calibration.state == "done"
    assert calibration.result["questions"] == 5
    assert CalibrationStore(bench.db).get(ws.id)["points"] == calibration.result["points"]
    # Recalibrating, cancelled before it starts: it ends 'cancelled' and keeps nothing new.
    hold.clear()
    manager.task("evaluation", ws.id, "holds the batch worker", lambda job: hold.wait(60))
    again = manager.task("calibration", ws.id, "again", job_work(bench)(ws))
    again.cancel()
    hold.set()
    assert again.wait(60) and again.state == "cancelled"
    assert again.result == {"workspace": ws.id, "status": "cancelled"}
    assert CalibrationStore(bench.db).get(ws.id)["updated_at"] == (calibration.result["updated_at"])


def test_research_is_not_held_up_by_a_running_calibration(bench: Workbench) -> None:
    manager = _manager(bench)
    ws = outlined(bench, "plant", TOPICS)
    answered: dict[str, Any] = {}

    def work(job: Job) -> dict[str, Any]:
        def progress(done: int, total: int, what: str) -> None:
            if done == 1 and not answered:  # mid-calibration: a question is asked
                run = manager.ask(ws.id, PUMP_QUESTION, max_retries=0)
                answered["done"] = run.wait(60)
                answered["status"] = manager.get(run.id).record.status

        return calibrate_workspace(bench, ws.id, progress=progress)

    job = manager.task("calibration", ws.id, "calibration", work)
    assert job.wait(120) and job.state == "done"
    # the run ended (answered, or paused for review) while the calibration was mid-way
    assert answered["done"] and answered["status"] in ("completed", "needs_human")


# -- the command line and the inspector --------------------------------------------------------
def test_calibrate_cli_prints_the_fit_and_the_error_before_and_after(
    bench: Workbench, capsys
) -> None:
    ws = outlined(bench, "plant", TOPICS)
    assert main(["calibrate", "--workspace", ws.id, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["workspace"] == ws.id and report["questions"] == 5
    assert {"table", "ece_before", "ece_after", "points", "message", "method", "held_out"} <= set(
        report
    )
    assert report["elsewhere"] == 0 and report["withheld"] == 2  # one document: sections withheld
    assert main(["calibrate", "--workspace", ws.id]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"workspace {ws.id}: ") and "outline questions" in text
    assert "2 of them asked again with their section withheld" in text
    assert main(["calibrate", "--workspace", "nowhere", "--json"]) == 2
    assert "There is no workspace 'nowhere'" in capsys.readouterr().err


def test_the_inspector_draws_the_workspace_reliability_before_and_after(
    bench: Workbench, plant: Workspace
) -> None:
    at = fresh_app().run()
    at.switch_page("pages/inspector.py").run()
    assert not at.exception
    assert any("No calibration of this workspace yet" in i.value for i in at.info)
    CalibrationStore(bench.db).save(plant.id, under_confident(), [], elsewhere=3)
    at.run()
    assert not at.exception
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [f["layout"]["title"]["text"] for f in figures]
    assert any(t.startswith("Before: the judge's score") for t in titles)
    assert any(t.startswith("After: this workspace's map") for t in titles)
    after = [f for f in figures if "map" in f["layout"]["title"]["text"]]
    counts = sum(int(n) for f in after for n in f["data"][0]["text"])
    assert counts == 60  # every point in a bar, labelled with its count
    assert [s.value for s in at.success] == ["fitted on 60 answers (36 right, 24 wrong)"]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["outline questions"], metrics["answers you marked"]) == ("60", "0")
    report = CalibrationStore(bench.db).get(plant.id)
    assert metrics["ECE after, fitted points"] == f"{report['ece_after']:.3f}"
    assert metrics["ECE after, held out"] == f"{report['ece_after_held_out']:.3f}"
    kept = {"platt": "Platt scaling", "isotonic": "isotonic regression"}[report["method"]]
    assert any(c.value.startswith(f"Map: {kept}. Platt scaling is kept unless") for c in at.caption)
    assert any(
        "3 withheld answers left out: with the heading's section withheld, another place" in c.value
        for c in at.caption
    )


def test_a_map_fitted_on_an_earlier_judges_scores_is_not_applied_until_refitted(
    bench: Workbench, plant: Workspace
) -> None:
    """Refitting the shipped judge changes what its scores mean (the development model's
    answers read lower since issue 28's answered map): a workspace map fitted on the old
    scores is not read against the new ones, a verdict does not refit it (its outline points
    are the old judge's), and a verdict on a run the old judge scored is no point of a new fit.
    The inspector says why; the calibration job fits it again."""
    research = RunService(bench)
    store = CalibrationStore(bench.db)
    judged = float(research.ask(plant.id, PUMP_QUESTION, max_retries=0).confidence)
    points = [Point(judged, i % 5 == 0, "outline") for i in range(25)]
    points += [Point(0.01, False, "outline") for _ in range(5)]
    assert store.save(plant.id, points, []) is not None
    assert store.map_for(plant.id, "offline") is not None
    with bench.db.connect() as conn:  # as a fit stored before the judge was refitted
        report = {**store.get(plant.id), "judge": "an-old-judge"}
        conn.execute(
            "UPDATE calibrations SET report = ? WHERE workspace_id = ?",
            (json.dumps(report), plant.id),
        )
    assert store.map_for(plant.id, "offline") is None
    run = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    critic = [e for e in run.trace if e["node"] == "critic"][-1]
    assert critic["calibration"] == "global" and run.confidence == pytest.approx(judged)
    research.mark(run.run_id, False)
    assert store.get(plant.id)["judge"] == "an-old-judge"  # not refitted by the verdict
    at = fresh_app().run()
    at.switch_page("pages/inspector.py").run()
    assert not at.exception
    assert any("Fitted on an earlier version of the judge" in w.value for w in at.warning)
    assert not at.success
    # A verdict on an answer the earlier judge scored is not one of today's points.
    old = research.ask(plant.id, PUMP_QUESTION, max_retries=0)
    old.trace = [{**e, "judge": "an-old-judge"} for e in old.trace]
    research.store.save(old)
    research.mark(old.run_id, True)
    report = calibrate_workspace(bench, plant.id)
    assert report["judge"] == store.get(plant.id)["judge"] != "an-old-judge"
    assert store.get(plant.id)["points"]["verdicts"] == 1  # the first verdict only


def test_reliability_bins_and_ece() -> None:
    perfect = [(0.25, True)] + [(0.25, False)] * 3 + [(0.95, True)] * 19 + [(0.95, False)]
    out = reliability(perfect)
    assert out["ece"] == pytest.approx(0.0, abs=1e-9)
    assert len(out["bins"]) == 10
    assert [b["count"] for b in out["bins"]] == [0, 0, 4, 0, 0, 0, 0, 0, 0, 20]
    assert out["bins"][2] == {
        "lo": 0.2,
        "hi": 0.3,
        "count": 4,
        "mean_confidence": 0.25,
        "accuracy": 0.25,
    }
    over = reliability([(0.9, False), (0.9, True), (1.0, True)])
    # One bin (0.9-1.0, 1.0 included): confidence 0.933, accuracy 0.667.
    assert over["ece"] == pytest.approx(0.2667, abs=1e-3)
    assert reliability([])["ece"] is None
    assert len(reliability([(0.5, True)], bins=4)["bins"]) == 4


def test_a_map_no_better_on_held_out_answers_is_not_applied() -> None:
    """Scores that already say how often answers are right: a map fitted on them predicts the
    answers it did not see worse than the scores themselves, so none is kept (issue 51)."""
    points = [Point(0.9, i % 10 != 0, "outline") for i in range(20)]
    points += [Point(0.01, False, "outline") for _ in range(10)]
    report = fit(points)
    assert report["status"] == "not_better" and report["table"] is None
    assert "no better on held-out answers" in report["message"]
    assert "keeps the global confidence model" in report["message"]


def test_an_analysts_verdict_counts_three_times() -> None:
    outline = [Point(0.5, i % 2 == 0, "outline") for i in range(20)]
    outline += [Point(0.1, False, "outline") for _ in range(5)]
    verdicts = [Point(0.5, True, "verdict") for _ in range(5)]
    cmap = map_of(fit([*outline, *verdicts]), "offline")
    assert cmap is not None
    # 10 + 15 right of 35 at 0.5: the map rises towards 0.71, not towards 0.6 (15 of 25).
    assert cmap(0.5) > 0.62


def test_the_job_asks_each_heading_reworded_not_word_for_word() -> None:
    assert reworded("Installing R under Windows") == "Windows Installing"
    assert reworded("How do I remove a package?") == "package remove"
    assert reworded("Debugging") == "Debugging"  # one word: nothing to reorder


def test_a_map_of_a_judge_that_cannot_rank_is_not_kept_when_it_would_lift_answers() -> None:
    """The workspace's own questions are mostly answered right, and the judge's score tells
    the right from the wrong ones no better than chance: a map would only lift every answer,
    an unanswerable question's too, to their share right, over the review bar. Measured on
    the second held-out set (2026-11-29): AUC 0.57 on its points; with the map 0.93 of real
    questions answered, 0.67 right, 0.22 of unanswerable ones abstained (1.00 without)."""
    rng = np.random.default_rng(3)
    points = [
        Point(float(s), bool(rng.random() < 0.8), "outline") for s in rng.uniform(0.3, 0.8, 60)
    ]
    assert auc(points) < 0.65
    report = fit(points)
    assert report["status"] == "not_ranking" and report["table"] is None
    assert "little better than chance" in report["message"]
    assert "keeps the global confidence model" in report["message"]
    # The same share right, with a score that ranks: the map is fitted.
    ranked = [
        Point(0.3 + 0.5 * p.right + 0.01 * n % 0.1, p.right, "outline")
        for n, p in enumerate(points)
    ]
    assert auc(ranked) > 0.9 and fit(ranked)["status"] == "fitted"
