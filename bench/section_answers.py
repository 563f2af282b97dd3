"""Today's composer against section-first composition, on the same evidence, in one run.

    python -m bench.section_answers --data-dir DIR --workspace NAME --pdfs DIR \
        --questions bench/data/X-answerable.json bench/data/X-unanswerable.json \
        [--cache evidence.pkl] [--json]

Each question is asked once through the first-draft graph (planner, researcher: what a run
retrieves); its evidence is kept (``--cache`` keeps it for the next run, so a composer change
is measured in seconds). Then both composers write a draft from that evidence and the offline
critic judges it: the lead states the answer (``answer_quality.lead_answers``); the answer is
in the lead or in one of the two passages offered beside it; answerable questions answered at
the 0.65 bar (and how many of those leads are right); unanswerable ones abstained; the
calibration error of the confidence against "the lead states the answer" and its AUC.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.answer_quality import lead_answers
from bench.fit_confidence import DOCUMENT_FEATURES, DOCUMENT_WORDS, _logistic
from bench.manual_abstain import workspace
from evaluation.calibration import ask
from ingest.chunking import flat
from ingest.parsing import parse_pdf
from ingest.pipeline import chunked
from ingest.sections import sections_json
from masis_core.answers import compose as composer
from masis_core.answers import confidence, judgement, sections
from masis_core.answers.confidence import LOW_CONFIDENCE
from masis_core.answers.engine import OfflineEngine
from masis_core.answers.offline import render_answer
from masis_core.config import Settings
from masis_core.graph.build import first_draft_graph
from masis_core.graph.context import RunContext
from masis_core.state import Evidence
from masis_core.workspaces.calibration import rank_auc, reliability
from masis_core.workspaces.workbench import Workbench


def citations_of(evidence: list[Evidence]) -> list[dict[str, Any]]:
    return [
        {
            "n": n,
            "filename": ev.get("filename"),
            "page": ev.get("page_start"),
            "page_end": ev.get("page_end"),
        }
        for n, ev in enumerate(evidence, start=1)
    ]


def answer_holds(q: dict[str, Any], answer: str, citations: list[dict[str, Any]]) -> bool:
    """The answer is in the lead or in a passage offered beside it."""
    if "answer_terms" in q:
        return any(re.search(t, answer, re.I) for t in q["answer_terms"])
    if "gold_page" not in q:
        return False

    for passage in answer.split("\n\n"):
        if passage.strip() == "Also relevant":
            continue
        if lead_answers(q, passage, citations):
            return True
    return False


def evidence_for(
    bench: Workbench, ws_name: str, pdfs: Path, questions: list[dict[str, Any]], cache: Path | None
) -> list[list[Evidence]]:
    if cache and cache.exists():
        return pickle.loads(cache.read_bytes())
    ws_id = workspace(bench, pdfs, ws_name)
    ws = bench.open_workspace(ws_id, create=False)
    context = RunContext(bench, OfflineEngine())
    graph = first_draft_graph()
    out, seconds = [], []
    for i, q in enumerate(questions):
        started = time.perf_counter()
        result = ask(graph, context, ws, q["question"])
        seconds.append(time.perf_counter() - started)
        out.append([*(result.get("evidence") or []), *(result.get("web_evidence") or [])])
        print(f"\r{i + 1}/{len(questions)}", end="", file=sys.stderr)
    print(
        f"\nfirst draft (planner to evaluator): median {statistics.median(seconds):.2f} s, "
        f"p95 {sorted(seconds)[int(0.95 * (len(seconds) - 1))]:.2f} s, "
        f"load {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    if cache:
        cache.write_bytes(pickle.dumps(out))
    return out


def with_sections(evidence: list[list[Evidence]], pdfs: Path) -> int:
    """Evidence cached before chunks stored their sections gets them from the same ingest
    code (each PDF parsed and chunked again; a chunk whose text differs is left without).
    Returns how many chunks were given sections."""
    settings = Settings()
    made: dict[str, list] = {}
    given = 0
    for ev in (e for evs in evidence for e in evs):
        name = str(ev.get("filename") or "")
        index = composer.chunk_index(ev)
        if index is None or "sections" in ev or not (pdfs / name).is_file():
            continue
        if name not in made:
            parsed = parse_pdf((pdfs / name).read_bytes())
            made[name] = chunked(parsed, settings.chunk_words, settings.chunk_overlap_words)[0]
        chunks = made[name]
        if index < len(chunks) and flat(chunks[index].text) == flat(ev.get("text", "")):
            ev["sections"] = sections_json(chunks[index].sections)
            given += bool(chunks[index].sections)
    return given


def without_sections(evidence: list[list[Evidence]]) -> list[list[Evidence]]:
    """The same evidence as chunks stored before this change saw it."""
    return [[{k: v for k, v in e.items() if k != "sections"} for e in evs] for evs in evidence]  # type: ignore[misc]


def measure(
    questions: list[dict[str, Any]], evidence: list[list[Evidence]], use_sections: bool
) -> dict:
    rows = []
    for q, ev in zip(questions, evidence, strict=True):
        compose = sections.compose if use_sections else composer.compose
        parts = compose(q["question"], ev) if ev else []
        answer = render_answer(parts)
        cites = citations_of(ev)
        conf, feats = 0.0, None
        if answer:
            section = sections.ranking(q["question"], ev)
            verdict = judgement.judge(q["question"], answer, ev, section=section)
            conf, feats = round(verdict.confidence, 3), verdict.features
        answerable = "gold_page" in q or "answer_terms" in q
        rows.append(
            {
                "question": q["question"],
                "answerable": answerable,
                "lead": answerable and lead_answers(q, answer, cites),
                "held": answerable and answer_holds(q, answer, cites),
                "confidence": conf,
                "answer": answer,
                "features": feats,
            }
        )
    return summarise(rows) | {"rows": rows}


def _auc(pos: list[float], neg: list[float]) -> float:
    found = rank_auc(pos, neg)
    return float("nan") if found is None else found


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ans = [r for r in rows if r["answerable"]]
    un = [r for r in rows if not r["answerable"]]
    answered = [r for r in ans if r["confidence"] >= LOW_CONFIDENCE]
    pairs = [(r["confidence"], bool(r["lead"])) for r in rows]
    return {
        "answerable": len(ans),
        "lead": sum(r["lead"] for r in ans) / max(1, len(ans)),
        "held": sum(r["held"] for r in ans) / max(1, len(ans)),
        "answered": len(answered) / max(1, len(ans)),
        "answered_right": sum(r["lead"] for r in answered) / max(1, len(answered)),
        "abstained": sum(r["confidence"] < LOW_CONFIDENCE for r in un) / max(1, len(un)),
        "ece": reliability(pairs)["ece"],
        "auc": _auc([c for c, y in pairs if y], [c for c, y in pairs if not y]),
    }


# The judge's document model, refitted on section-first drafts: the shipped model's features
# and what separates answerable from unanswerable questions (issue 51): the best keyword match,
# how clearly the first section won, its BM25 and reader scores.
JUDGE_FEATURES = (
    *DOCUMENT_FEATURES,
    "top_keywords",
    "section_margin",
    "section_keywords",
    "section_meaning",
)


def fit_judge(rows: list[dict[str, Any]], c: float = 1.0, folds: int = 5) -> dict[str, Any]:
    """The document model fitted on drafts from documents, labelled "the lead states the
    answer" (an unanswerable question's never does), with its k-fold held-out figures."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    docs = documents_only(rows)
    y = np.array([bool(r["lead"]) for r in docs])
    names = list(JUDGE_FEATURES)
    held = np.zeros(len(docs))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    for train, test in splitter.split(np.zeros(len(docs)), y):
        model = _logistic([docs[i] for i in train], names, y[train], c)
        for i in test:
            held[i] = confidence.model_probability(model, docs[i]["features"])
    pairs = list(zip(held.tolist(), y.tolist(), strict=True))
    return {
        **_logistic(docs, names, y, c),
        "min_words": DOCUMENT_WORDS,
        "label": "the lead states the answer",
        "held_out": {
            "drafts": len(docs),
            "ece": reliability(pairs)["ece"],
            "auc": _auc([p for p, ok in pairs if ok], [p for p, ok in pairs if not ok]),
        },
    }


def documents_only(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The drafts the document model speaks for: a lead passage of enough words."""
    return [
        r
        for r in rows
        if r["features"] is not None and r["features"].get("passage_words", 0.0) >= DOCUMENT_WORDS
    ]


def refit_confidence(row: dict[str, Any], model: dict[str, Any]) -> float:
    """A draft's confidence under another document model (other drafts keep theirs)."""
    if documents_only([row]):
        return confidence.model_probability(model, row["features"])
    return float(row["confidence"])


def by_set(sets: dict[str, list[dict[str, Any]]], c: float) -> list[dict[str, Any]]:
    """Leave one set out: the document model fitted on the other sets, each set's figures
    (``summarise``) under the shipped model and under that refit. Sets are documents and
    question writers apart, so this is the held-out figure that carries to a new library
    (five folds mix one document's questions into training and test)."""
    import numpy as np

    shipped = json.loads(confidence.PARAMS_PATH.read_text())["documents"]
    out = []
    for name, rows in sets.items():
        train = documents_only([r for other, rs in sets.items() if other != name for r in rs])
        labels = np.array([bool(r["lead"]) for r in train])
        model = _logistic(train, list(JUDGE_FEATURES), labels, c)
        for label, m in (("shipped", shipped), ("refit", model)):
            scored = [{**r, "confidence": refit_confidence(r, m)} for r in rows]
            out.append({"set": name, "model": label, **summarise(scored)})
    return out


def refit(files: list[Path], c: float, write: bool) -> None:
    """The judge's document model refitted on these sets' section drafts (``--out`` files),
    with each set held out in turn beside the shipped model; ``write`` stores it."""
    sets = {f.stem: json.loads(f.read_text())["sections"]["rows"] for f in files}
    keys = ["lead", "answered", "answered_right", "abstained", "ece", "auc"]
    print(f"{'held out':16} {'model':8} " + " ".join(f"{k:>14}" for k in keys))
    loso = by_set(sets, c)
    for r in loso:
        print(f"{r['set']:16} {r['model']:8} " + " ".join(f"{r[k]:14.3f}" for k in keys))
    model = fit_judge([r for rows in sets.values() for r in rows], c)
    model["held_out"]["by_set"] = [{k: r[k] for k in ("set", "model", *keys)} for r in loso]
    model["provenance"] = {"sets": sorted(sets), "c": c}
    print(json.dumps({k: v for k, v in model["held_out"].items() if k != "by_set"}))
    if write:
        params = json.loads(confidence.PARAMS_PATH.read_text())
        params["documents"] = model
        confidence.PARAMS_PATH.write_text(json.dumps(params, indent=1) + "\n")


FUNNEL = ("evidence", "window", "top_section", "top3_sections", "lead", "held")


def funnel(questions: list[dict[str, Any]], evidence: list[list[Evidence]]) -> dict[str, float]:
    """Where the answer is lost, stage by stage (questions with answer terms): in a retrieved
    chunk, in a quotable window, in the first section's windows, in the first three
    sections', in the lead, in the lead or an option. Each stage bounds the ones after it:
    no lead can state an answer no window holds (the ceiling of issue 51's targets)."""
    hits = dict.fromkeys(FUNNEL, 0)
    asked = [(q, ev) for q, ev in zip(questions, evidence, strict=True) if "answer_terms" in q]
    for q, ev in asked:
        found, headings = sections.scored_windows(q["question"], ev) if ev else ([], {})
        ranked = sections.rank(q["question"], sections.group(found, headings))
        has = [any(answer_holds(q, w.text, []) for w in sec.windows) for sec in ranked]
        parts = sections.compose(q["question"], ev) if ev else []
        stages = {
            "evidence": any(answer_holds(q, e.get("text", ""), []) for e in ev),
            "window": any(answer_holds(q, w.text, []) for w in found),
            "top_section": any(has[:1]),
            "top3_sections": any(has[:3]),
            "lead": answer_holds(q, " ".join(p["text"] for p in parts if p["passage"] == 0), []),
            "held": answer_holds(q, " ".join(p["text"] for p in parts), []),
        }
        for k, v in stages.items():
            hits[k] += v
    return {k: v / max(1, len(asked)) for k, v in hits.items()} | {"questions": len(asked)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--workspace")
    parser.add_argument("--pdfs", type=Path)
    parser.add_argument("--questions", type=Path, nargs="+")
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--fit",
        type=Path,
        nargs="*",
        help="refit the judge's document model on these sets' section drafts (--out files)",
    )
    parser.add_argument("--write", action="store_true", help="store the refit in confidence.json")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the refit")
    parser.add_argument(
        "--funnel", action="store_true", help="print where answers are lost, stage by stage"
    )
    args = parser.parse_args()
    if args.fit:
        refit(args.fit, args.c, args.write)
        return
    questions = [q for f in args.questions for q in json.loads(f.read_text())]
    bench = Workbench(Settings.local(args.data_dir, provider="offline", embed_model="wordllama"))
    evidence = evidence_for(bench, args.workspace, args.pdfs, questions, args.cache)
    given = with_sections(evidence, args.pdfs)
    chunks = sum(1 for evs in evidence for e in evs if e.get("sections"))
    print(f"chunks with stored sections: {chunks} ({given} added to cached evidence)")
    if args.funnel:
        print(json.dumps(funnel(questions, evidence)))
        return
    bare = without_sections(evidence)
    results = {
        "today": measure(questions, bare, False),
        "segmenter": measure(questions, bare, True),
        "stored": measure(questions, evidence, True),
    }
    results["sections"] = results["stored"]  # what --fit reads
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    keys = ["lead", "held", "answered", "answered_right", "abstained", "ece", "auc"]
    print(f"{'measure':16} {'today':>8} {'segmenter':>10} {'stored':>8}")
    for k in keys:
        r = results
        print(f"{k:16} {r['today'][k]:8.3f} {r['segmenter'][k]:10.3f} {r['stored'][k]:8.3f}")


if __name__ == "__main__":
    main()
