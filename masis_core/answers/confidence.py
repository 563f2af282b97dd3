"""The confidence as a calibrated probability: the fitted models and their maps.

The critic's confidence is the estimated probability that the draft's lead passage answers
the question and is supported by its citations (for an answer of the development model over
the review bar, ``AnswerPolicy.low_confidence``: that answering was right, a conflict the
dispute model missed counting wrong; ``answered_probability``). It comes from small
logistic regressions over the interpretable features of ``features.py``. The parameters live
in ``masis_core/answers/confidence.json`` and are refitted with
``python -m bench.fit_confidence`` (scikit-learn, bench only); inference here is numpy.

Two models: P(dispute) — when it passes the fitted threshold and two sources speak to the
question, the two that oppose each other most are named with the point they disagree on (the
conflict review shows them, ``stances.name_conflict``) — and, for drafts without a conflict,
P(answer), which is ``confidence``. The answer model is fitted on answer against abstain
cases: a dispute is the dispute model's business, and counted as "not an answer" it only
taught the answer model to doubt well-supported drafts (docs/measurements/confidence.md).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from masis_core.llm.reader import get_reader
from masis_core.policy import POLICY

PARAMS_PATH = Path(__file__).with_name("confidence.json")
# What becomes of a judged draft; the retrieval modes are ``masis_core.modes.MODES``.
DECISIONS = ("answer", "abstain", "dispute")
# The supervisor's bar (nodes/supervisor.py): below it a draft is retried, then reviewed.
LOW_CONFIDENCE = POLICY.low_confidence


@lru_cache(maxsize=1)
def load_params() -> dict[str, Any]:
    """The fitted parameters shipped with the package (``masis_core/answers/confidence.json``)."""
    text = PARAMS_PATH.read_text()
    return json.loads(text)


# The code the features are computed by: an edited regex or cap changes what a score means as
# surely as refitted parameters do. The section ranking feeds the features too.
FEATURE_CODE: tuple[Path, ...] = (
    *(
        Path(__file__).with_name(name)
        for name in ("question.py", "stances.py", "features.py", "sections.py")
    ),
    Path(__file__).parents[1] / "text" / "figures.py",  # what a number and a year are
)


@lru_cache(maxsize=1)
def judge_version() -> str:
    """A fingerprint of what the judge's scores are made with: its fitted parameters, the
    feature code (``FEATURE_CODE``), the passage scorer's weights, which choose the lead it
    reads, and whether the reader reads with them: loaded (once per process), so a
    reader switched on (``MASIS_READER``) but refused for its weights counts as none. A
    workspace map is fitted on those scores and means nothing once they change
    (``workspaces/calibration.map_of``)."""
    digest = hashlib.sha256(PARAMS_PATH.read_bytes())
    digest.update(PARAMS_PATH.with_name("passage_weights.json").read_bytes())
    for source in FEATURE_CODE:
        digest.update(source.read_bytes())
    digest.update(b"words alone" if get_reader() is None else b"reader")
    return digest.hexdigest()[:12]


def sigmoid(z: Any) -> Any:
    """The logistic function, for one score or an array of them (the one copy: the judge and
    the workspace maps both map through it)."""
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float)))


def model_probability(model: dict[str, Any], feats: dict[str, float]) -> float:
    """One logistic regression of the parameter file on standardised features. A feature the
    draft has no measure of (absent from ``feats``: the lead chunk's retrieval scores of a
    lead citing web results alone, ``_lead_chunk_scores``) is read as its fitted mean."""
    mean = np.array(model["mean"])
    x = np.array([float(feats.get(n, m)) for n, m in zip(model["features"], mean, strict=True)])
    z = (x - mean) / np.array(model["scale"])
    return float(sigmoid(float(np.dot(model["coef"], z) + model["intercept"])))


def answered_probability(p_answer: float, params: dict[str, Any]) -> float:
    """The development model's probability of a draft it answers (at or over the review bar),
    as the probability that answering was right: an answer whose sources in fact disagree is
    wrong, however well its evidence answers. The answer model is fitted on answer against
    abstain cases (disputes would teach it to doubt every well-supported draft), so over the
    bar it spoke of the evidence alone, and overrated answers once the missed disputes count
    (docs/measurements/confidence.md). A Platt map fitted on the answered development
    drafts (``params["answered"]``, ``bench.fit_confidence``) says how often; it is held at
    the bar or above, so no decision changes. Below the bar the probability stands."""
    fitted = params.get("answered")
    if fitted is None or p_answer < LOW_CONFIDENCE:
        return p_answer
    return max(LOW_CONFIDENCE, float(sigmoid(fitted["a"] * logit(p_answer) + fitted["b"])))


def confidence_model(feats: dict[str, float], params: dict[str, Any]) -> str:
    """ "documents" for a draft drawn from document chunks (see ``probabilities``), else
    "development"."""
    docs = params.get("documents")
    if docs is not None and feats.get("passage_words", 0.0) >= docs["min_words"]:
        return "documents"
    return "development"


# The stages a confidence passes through before the analyst sees it, in order. The judge
# applies the first five (``confidence_stages``); the critic applies the workspace map
# (``workspaces/calibration.recalibrate``), a layer above.
STAGES = ("model", "cap", "opinion", "answered", "dispute", "workspace")


def confidence_stages(
    feats: dict[str, float],
    params: dict[str, Any] | None = None,
    llm_confidence: float | None = None,
    *,
    disputed: bool = False,
) -> dict[str, float]:
    """The answer probability after each stage that applies to this draft, in ``STAGES``
    order; the last is the judge's confidence.

    - ``model``: the answer model's probability. Drawn from documents (passages of
      ``min_words`` words and more: a PDF's chunks, not the development cases' short
      snippets), it is the model refitted on questions over real manuals (``p["documents"]``):
      there every passage shares the question's words, and the development model was sure
      of answers that were right half the time (docs/measurements/confidence.md).
    - ``cap`` (development model): the question asks for a figure, a date, a version or a
      name and no sentence of the answer on the question's head holds one: the answer does not
      answer, whatever its words match. The fitted rate (``asked_missing_rate``) keeps this a
      probability (how often such drafts were right on the development cases), not a flat 0.
    - ``opinion`` (Ollama): the model's own opinion stacked on (``with_opinion``).
    - ``answered`` (development model): the answered map (``answered_probability``) comes
      after the opinion, so it moves no decision in either mode.
    - ``dispute``: a conflict reported pauses the run whatever the number, which passes on
      unchanged; the stage is there when it applies."""
    p = params or load_params()
    documents = confidence_model(feats, p) == "documents"
    answer = model_probability(p["documents" if documents else "answer"], feats)
    stages = {"model": answer}
    if not documents and feats.get("asked_missing_cited") and "asked_missing_rate" in p:
        answer = stages["cap"] = min(answer, p["asked_missing_rate"])
    if llm_confidence is not None:
        answer = stages["opinion"] = with_opinion(answer, llm_confidence, p)
    if not documents:
        answer = stages["answered"] = answered_probability(answer, p)
    if disputed:
        stages["dispute"] = answer
    return stages


def rounded(stages: dict[str, float]) -> dict[str, float]:
    """The stages as the critique carries them: to three places, like its confidence."""
    return {name: round(value, 3) for name, value in stages.items()}


def probabilities(
    feats: dict[str, float],
    params: dict[str, Any] | None = None,
    llm_confidence: float | None = None,
) -> dict[str, float]:
    """P(dispute), then P(answer) for a draft the dispute model let through; P(abstain) =
    1 - P(answer).

    The dispute model sees only how the sources stand (stances, figures, negation, words of
    disagreement, attributed opinions, the question's yes/no form); the answer model is fitted
    on the drafts with no conflict reported, so its probability is the one the supervisor
    acts on: among drafts that reach the review bar, the share that should have been answered.
    Its stages: ``confidence_stages``."""
    p = params or load_params()
    answer = list(confidence_stages(feats, p, llm_confidence).values())[-1]
    return {
        "answer": answer,
        "abstain": 1.0 - answer,
        "dispute": model_probability(p["dispute"], feats),
    }


def disputed(feats: dict[str, float], probs: dict[str, float], params: dict[str, Any]) -> bool:
    """A conflict is reported when the dispute model is confident enough *and* two sources
    speak to the question's topic (the review shows them side by side, with the point they
    oppose each other on when one is found).

    A concrete point of opposition is not required as well: that gate capped dispute recall
    at the share of disputes where one of the lexical signals fires, and lowered it held out
    with overall accuracy unchanged (docs/measurements/confidence.md).

    Two sources giving different values of what the question asks (``asked_clash``) are a
    conflict whatever the model says."""
    if feats.get("asked_clash") and feats.get("answered"):  # (an empty draft disputes nothing)
        return True
    return bool(feats.get("topic_pair")) and probs["dispute"] >= params["dispute_threshold"]


def with_opinion(
    p_answer: float, llm_confidence: float, params: dict[str, Any] | None = None
) -> float:
    """Stack the LLM critic's own confidence onto the feature model (Platt-style, in log-odds).

    The weight is refitted by ``bench.fit_confidence --engine ollama``; until then it is the
    prior in the parameter file (the LLM's opinion counts half as much as the features)."""
    llm = (params or load_params()).get("llm", {"a": 1.0, "b": 0.5, "c": 0.0})
    z = llm["a"] * logit(p_answer) + llm["b"] * logit(llm_confidence) + llm["c"]
    return float(sigmoid(z))


def logit(p: Any) -> Any:
    """Log-odds of one score or an array of them, held off 0 and 1, where they are infinite."""
    p = np.clip(np.asarray(p, dtype=float), 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))
