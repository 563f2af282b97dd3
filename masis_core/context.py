"""What nodes need besides state: services and the engine, passed in ``config``.

Kept out of the checkpointed state on purpose: clients are not serialisable and a resumed run
gets fresh ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from masis_core.llm.engine import Engine
from masis_core.services import Workbench

# (queries, trusted_only or None for the setting, domains or None for the setting) -> outcome
WebSearch = Callable[[list[str], bool | None, list[str] | None], dict[str, Any]]


@dataclass
class RunContext:
    bench: Workbench
    engine: Engine
    web_search: WebSearch | None = None


def ctx_of(config: RunnableConfig) -> RunContext:
    return config["configurable"]["ctx"]


@contextmanager
def timed() -> Iterator[dict[str, int]]:
    """``with timed() as t: ...`` then ``t['ms']``: node latency for the trace."""
    box = {"ms": 0}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["ms"] = int((time.perf_counter() - start) * 1000)


def emit(event: dict[str, Any]) -> None:
    """Progress to the UI through LangGraph's custom stream; a no-op outside a run."""
    try:
        from langgraph.config import get_stream_writer

        get_stream_writer()(event)
    except Exception:
        pass
