"""Fit the offline passage scorer's weights (``masis_core/answers/passage_weights.json``).

    python -m bench.fit_passages --manual-cache /tmp/manual-drafts.jsonl [more.jsonl ...] \
        [--questions bench/data/manual-answerable.json bench/data/manual-howto.json] \
        [--validation bench/data/manual-howto-validation.json] [--folds 5] [--write]

The drafts recorded by ``bench.fit_confidence --manual-cache`` hold each manual question's
evidence as the critic saw it (retrieval does not depend on the composer, so a change of the
scorer needs no new runs). Every window of 1-4 adjacent sentences the composer considers is
labelled: it answers when it holds one of a how-to question's ``answer_terms``, or when its
chunks hold the question's gold page and, where the question asks for a figure, a date, a
version or a name, it holds one (``bench.answer_quality.lead_answers``, the same check as the
benchmark's). A listwise logistic model over the windows' features (each question's windows a
softmax; scipy) learns the
weights; the composer leads with the window of the highest weighted sum. Reported: the share
of questions, among those with an answering window, whose chosen lead answers — with the
shipped weights and held out (k folds by question), and on the validation set never fitted on.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from masis_core.answers import compose, confidence
from masis_core.answers.question import asked_kind, kind_present

QUESTIONS = [Path("bench/data/manual-answerable.json"), Path("bench/data/manual-howto.json")]
VALIDATION = [Path("bench/data/manual-howto-validation.json")]


def answers(q: dict[str, Any], w: compose.Window, evidence: list[dict[str, Any]]) -> bool:
    """Does the window answer the question (see the module's docstring)?"""
    if "answer_terms" in q:
        return any(re.search(t, w.text, re.I) for t in q["answer_terms"])
    gold = int(q["gold_page"])
    pages: set[int] = set()
    for s in w.sentences:
        for m in s.markers:
            ev = evidence[m - 1]
            if ev.get("filename") == q["doc"]:
                start = int(ev.get("page_start") or 0)
                pages.update(range(start, int(ev.get("page_end") or start) + 1))
    kind = asked_kind(q["question"])
    specific = kind not in ("open", "yes_no")
    return bool(pages & {gold, gold + 1}) and (
        not specific or kind_present(kind, w.text, q["question"])
    )


def load(caches: list[Path], files: list[Path]) -> list[dict[str, Any]]:
    """Each question of ``files`` with its recorded evidence (from any of ``caches``), windows
    and their labels."""
    drafts = {}
    for cache in caches:
        for line in cache.read_text().splitlines():
            row = json.loads(line) if line else None
            if row and row.get("judged"):
                drafts[row["id"]] = row["judged"]["evidence"]
    out = []
    for path in files:
        for n, q in enumerate(json.loads(path.read_text())):
            evidence = drafts.get(f"{path.stem}-{n}")
            if not evidence:
                continue
            found = compose.windows(q["question"], evidence)
            labels = [answers(q, w, evidence) for w in found]
            out.append({"q": q, "evidence": evidence, "windows": found, "labels": labels})
    return out


def lead_right(item: dict[str, Any], weights: dict[str, float]) -> bool:
    for w in item["windows"]:
        w.score = sum(weights.get(k, 0.0) * v for k, v in w.features.items())
    chosen = compose.choose(item["windows"])
    return bool(chosen) and answers(item["q"], chosen[0], item["evidence"])


def accuracy(items: list[dict[str, Any]], weights: dict[str, float]) -> dict[str, Any]:
    """Share of questions whose lead answers, over all and over those that could."""
    able = [it for it in items if any(it["labels"])]
    right = sum(lead_right(it, weights) for it in items)
    return {
        "questions": len(items),
        "answerable_by_some_window": len(able),
        "lead_answers": round(right / len(items), 3) if items else None,
        "lead_answers_when_possible": round(right / len(able), 3) if able else None,
    }


def _groups(items: list[dict[str, Any]], names: list[str]) -> list[tuple[np.ndarray, ...]]:
    """Per question: the windows' features and their labels."""
    out: list[tuple[np.ndarray, ...]] = []
    for it in items:
        x = np.array([[w.features[n] for n in names] for w in it["windows"]]).reshape(
            -1, len(names)
        )
        labels = np.array(it["labels"], dtype=bool)
        out.append((x, labels))
    return out


def _listwise(groups: list[tuple[np.ndarray, ...]], d: int, c: float) -> np.ndarray:
    """A conditional logistic model: each question's windows a softmax over their scores,
    fitted to put the mass on the answering ones (L2 penalty ``1 / c``, scipy's L-BFGS)."""
    from scipy.optimize import minimize

    usable = [(x, y) for x, y in groups if y.any() and not y.all()]

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 / c * float(beta @ beta), beta / c
        for x, labels in usable:
            z = x @ beta
            p_all = np.exp(z - z.max())
            p_pos = p_all * labels
            total -= float(np.log(p_pos.sum()) - np.log(p_all.sum()))
            grad = grad - (p_pos @ x) / p_pos.sum() + (p_all @ x) / p_all.sum()
        return total, grad

    return np.asarray(minimize(loss, np.zeros(d), jac=True, method="L-BFGS-B").x)


def fit(items: list[dict[str, Any]], names: list[str], c: float) -> dict[str, float]:
    """Weights that make an answering window the lead (``_listwise``). Tuning each weight
    for the share of answering leads as well fitted the questions better (0.535 against
    0.521) and held-out ones worse (0.44-0.45 against 0.46-0.48, two seeds): not kept."""
    beta = _listwise(_groups(items, names), len(names), c)
    return {n: round(float(w), 4) for n, w in zip(names, beta, strict=True)}


def cross_validate(
    items: list[dict[str, Any]], names: list[str], c: float, folds: int, seed: int
) -> dict[str, Any]:
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    right = 0
    for k in range(folds):
        test = [items[i] for i in order[k::folds]]
        train = [items[i] for n, i in enumerate(order) if n % folds != k]
        weights = fit(train, names, c)
        right += sum(lead_right(it, weights) for it in test)
    return {"lead_answers": round(right / len(items), 3) if items else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fit_passages")
    ap.add_argument("--manual-cache", type=Path, nargs="+", required=True)
    ap.add_argument("--questions", type=Path, nargs="*", default=QUESTIONS)
    ap.add_argument("--validation", type=Path, nargs="*", default=VALIDATION)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    items = load(args.manual_cache, args.questions)
    held_back = load(args.manual_cache, args.validation)
    names = list(items[0]["windows"][0].features)
    shipped = compose.load_weights()
    fitted = fit(items, names, args.c)
    held_out = cross_validate(items, names, args.c, args.folds, args.seed)
    validation = accuracy(held_back, fitted)
    report = {
        "shipped": {
            "fitted_on": accuracy(items, shipped),
            "validation": accuracy(held_back, shipped),
        },
        "fitted": {
            "in_sample": accuracy(items, fitted),
            "held_out": held_out,
            "validation": validation,
        },
        "weights": fitted,
    }
    print(json.dumps(report, indent=1))
    if args.write:
        provenance = {
            "fitted": datetime.now(UTC).strftime("%Y-%m-%d"),
            "questions": len(items),
            "held_out": held_out,
            "validation": validation,
            "command": "python -m bench.fit_passages " + " ".join(argv or sys.argv[1:]),
        }
        text = json.dumps({"weights": fitted, "provenance": provenance}, indent=1) + "\n"
        compose.WEIGHTS_PATH.write_text(text)
        compose.load_weights.cache_clear()
        confidence.judge_version.cache_clear()  # the leads change: workspace maps are stale
        print(f"written: {compose.WEIGHTS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
