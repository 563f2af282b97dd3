"""Judgement: answer, abstain or dispute — the judge's one entry point.

``judge`` reads the question (``question.py``), measures the draft (``features.py``), turns
the measures into calibrated probabilities (``confidence.py``) and, for a dispute, names the
two sources that oppose each other (``stances.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from masis_core.answers.confidence import (
    confidence_model,
    confidence_stages,
    disputed,
    load_params,
    probabilities,
)
from masis_core.answers.features import features
from masis_core.answers.stances import in_focus, name_conflict
from masis_core.state import Evidence


@dataclass
class Judgement:
    features: dict[str, float]
    probabilities: dict[str, float]
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    # Which fitted model gave the probability: "development" or "documents" (the trace shows
    # it, so the analyst can tell a snippet's calibration from a library's).
    model: str = "development"
    # The confidence after each stage that applied (``confidence.confidence_stages``).
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def confidence(self) -> float:
        return self.probabilities["answer"]


def judge(
    question: str,
    answer: str,
    evidence: list[Evidence],
    *,
    llm_confidence: float | None = None,
    params: dict[str, Any] | None = None,
    section: dict[str, float] | None = None,
) -> Judgement:
    """Features, the three probabilities, and the conflict to show when it is a dispute.

    ``.confidence`` is the probability, in [0, 1], that the answer's lead passage
    (``lead_of``) answers the question (over the bar, for the development model: that
    answering was right, ``answered_probability``); a workspace map wraps this one number."""
    p = params or load_params()
    feats = features(question, answer, evidence, section)
    probs = (
        probabilities(feats, p, llm_confidence)
        if answer
        else {"answer": 0.0, "abstain": 1.0, "dispute": 0.0}
    )
    dispute = disputed(feats, probs, p)
    conflicts = name_conflict(question, in_focus(answer, evidence)) if dispute else []
    stages = confidence_stages(feats, p, llm_confidence, disputed=dispute) if answer else {}
    return Judgement(feats, probs, conflicts, confidence_model(feats, p), stages)
