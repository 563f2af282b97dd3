"""A workspace's picks teach its passage scorer, a little.

The window scorer (``answers.compose``) is one fitted model for every library
(``passage_weights.json``, ``bench/fit_passages.py``). Each "This answers it" is a labelled
choice among the windows a review offered: the chosen one against those passed over. Kept per
run, per workspace, and once a workspace has ``MIN_PICKS`` of them its windows are scored with
weights refitted on them: the same features and the same model as ``fit_passages`` (a softmax
over each choice's windows), by Newton's method, with a Gaussian prior of precision
``PICK_PRIOR`` centred on the shipped weights, so a few picks move the weights only as far as
they agree. Another workspace keeps the shipped weights (docs/review.md, "Picks teach the
workspace's passage scorer").
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import numpy as np

from masis_core.answers.compose import load_weights
from masis_core.policy import POLICY
from masis_core.storage.db import Database
from masis_core.storage.registry import now_iso

log = logging.getLogger(__name__)

MIN_PICKS = POLICY.min_picks
PICK_PRIOR = POLICY.pick_prior
MAX_PICKS = POLICY.max_picks
NEWTON_STEPS = POLICY.pick_newton_steps

Features = dict[str, float]
Pick = tuple[Features, list[Features]]  # (chosen, passed over)


def refit(shipped: Features, picks: Sequence[Pick], prior: float = PICK_PRIOR) -> Features:
    """The weights that best make each chosen window the softmax's choice among its review's
    windows, pulled towards ``shipped`` by a Gaussian prior of precision ``prior``."""
    names = sorted(shipped)
    w0 = np.array([shipped[n] for n in names])
    groups = [
        np.array([[f.get(n, 0.0) for n in names] for f in (chosen, *others)])
        for chosen, others in picks
        if others
    ]
    w = w0.copy()
    for _ in range(NEWTON_STEPS):
        grad = prior * (w - w0)
        hess = prior * np.eye(len(names))
        for x in groups:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ x
            grad += mean - x[0]
            hess += (x * p[:, None]).T @ x - np.outer(mean, mean)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return {n: round(float(v), 4) for n, v in zip(names, w, strict=True)}


class PickStore:
    """The picks of every workspace, a row per run (a second pick on a run replaces it)."""

    UPSERT = (
        "INSERT INTO passage_picks (run_id, workspace_id, created_at, chosen, passed_over)"
        " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?)"
        " ON CONFLICT (run_id) DO UPDATE SET chosen = excluded.chosen,"
        " passed_over = excluded.passed_over, created_at = excluded.created_at"
    )

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, ws_id: str, run_id: str, chosen: Features, others: list[Features]) -> None:
        row = (run_id, ws_id, now_iso(), json.dumps(chosen), json.dumps(others))
        with self.db.connect() as conn:
            conn.execute(self.UPSERT, (*row, ws_id))

    def picks(self, ws_id: str) -> list[Pick]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT chosen, passed_over FROM passage_picks WHERE workspace_id = ?"
                " ORDER BY created_at DESC LIMIT ?",
                (ws_id, MAX_PICKS),
            ).fetchall()
        return [(json.loads(r["chosen"]), json.loads(r["passed_over"])) for r in rows]

    def weights(self, ws_id: str | None) -> Features | None:
        """The workspace's window weights, refitted on its picks; None (the shipped weights)
        with fewer than ``MIN_PICKS``."""
        picks = self.picks(ws_id) if ws_id else []
        if len(picks) < MIN_PICKS:
            return None
        return refit(load_weights(), picks)
