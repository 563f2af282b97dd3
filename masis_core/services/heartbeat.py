"""The heartbeat of the runs this process drives: one daemon thread refreshes their
``heartbeat`` column, so the sweep (``RunStore.sweep_orphans``) leaves them alone."""

from __future__ import annotations

import logging
import threading
import time

from masis_core.services.records import RunStore
from masis_core.storage.owners import current_owner

log = logging.getLogger(__name__)

# A running run's owner refreshes its heartbeat this often; one silent for STALE_RUN
# (masis_core/services/records.py) is taken for dead.
HEARTBEAT_S = 15.0


class Heartbeat:
    """One per ``RunService``: the ids it drives and the thread that beats for them."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._driving: set[str] = set()
        self._lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def beating(self, run_id: str, on: bool) -> None:
        """Keep this process's running runs' heartbeats fresh from one daemon thread."""
        with self._lock:
            if on:
                self._driving.add(run_id)
            else:
                self._driving.discard(run_id)
            if on and self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="run-heartbeat", daemon=True)
                self.thread.start()

    def _loop(self) -> None:
        """Beat while this process drives runs; end when none is left (the next run starts a
        new thread), so an idle service holds no thread and can be collected."""
        while True:
            time.sleep(HEARTBEAT_S)
            with self._lock:
                ids = sorted(self._driving)
                if not ids:
                    self.thread = None
                    return
            try:
                self.store.beat(current_owner(), ids)
            except Exception:  # a busy or unreachable database: the next beat will do
                log.warning("could not refresh run heartbeats", exc_info=True)
