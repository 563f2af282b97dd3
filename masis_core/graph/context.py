"""What nodes need besides state: services and the engine, LangGraph's run-time context.

Passed as ``graph.stream(..., context=RunContext(...))`` and read by a node as
``runtime.context``. Kept out of the checkpointed state on purpose: clients are not
serialisable, and a resumed run gets fresh ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from masis_core.answers.engine import Engine
from masis_core.workspaces.workbench import Workbench

# (queries, trusted_only or None for the setting, domains or None for the setting) -> outcome
WebSearch = Callable[[list[str], bool | None, list[str] | None], dict[str, Any]]


@dataclass
class RunContext:
    bench: Workbench
    engine: Engine
    web_search: WebSearch | None = None


@contextmanager
def timed() -> Iterator[dict[str, int]]:
    """``with timed() as t: ...`` then ``t['ms']``: node latency for the trace."""
    box = {"ms": 0}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["ms"] = int((time.perf_counter() - start) * 1000)
