"""The retrieval modes, defined once: settings, state, the research page and the CLI list them
from here."""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["dense", "bm25", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
