"""The benchmark scripts still import after a name moves inside the package: ruff does not look
across modules and mypy checks the package only, so `bench.fit_confidence` importing a function
that had moved out of `answers/judgement.py` was caught by nothing but running it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import bench

OURS = {"masis_core", "ingest", "evaluation", "bench", "ui", "tests"}
MODULES = sorted(m.name for m in pkgutil.iter_modules(bench.__path__))


def test_the_benchmarks_are_all_listed() -> None:
    assert {"answer_quality", "fit_confidence", "fit_passages", "workspace_calibration"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_imports_what_it_names_from_the_workbench(name: str) -> None:
    try:
        importlib.import_module(f"bench.{name}")
    except ModuleNotFoundError as missing:
        # Only a benchmark-only package (bench/requirements.txt) may be missing here.
        assert (missing.name or "").split(".")[0] not in OURS, missing
