"""Who holds a piece of long work (an ingest row, a running run), and whether it still runs.

A crashed process cannot clean up after itself; whoever comes next needs to tell a live owner
from a dead one without a lock server. The owner is "host:pid"; on this host a signal-0 probe
answers, and for another host only the age of the work (or its heartbeat) can.
"""

from __future__ import annotations

import os
import socket

HOST = socket.gethostname()


def current_owner() -> str:
    """This process's owner tag (computed on each call: a forked child has its own pid)."""
    return f"{HOST}:{os.getpid()}"


def owner_alive(owner: str | None) -> bool:
    """Whether the process that claimed the work still runs. An owner from another host (or
    none recorded) counts as alive: only its age can retire it."""
    host, _, pid = (owner or "").rpartition(":")
    if host != HOST or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True
