"""Helpers both command lines share."""

from __future__ import annotations

import logging


def setup_logging(verbose: bool) -> None:
    """Warnings only by default: command output is for people and scripts, not logs."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
