"""Fault injection for the crash-safety tests: a process kills itself where a test asks.

Each long, resumable operation (an ingest, the collection migration, the keyword words'
backfill) calls ``kill_at`` between its steps with a variable of its own; unset, as always
outside those tests, it does nothing."""

from __future__ import annotations

import logging
import os
import signal

log = logging.getLogger(__name__)


def kill_at(variable: str, step: int, where: str = "") -> None:
    """SIGKILL this process when the environment's ``variable`` names this ``step``
    (``where``: what the log line calls the place)."""
    if os.environ.get(variable) == str(step):
        log.warning("test fault injection: killing the process at %s=%s %s", variable, step, where)
        os.kill(os.getpid(), signal.SIGKILL)
