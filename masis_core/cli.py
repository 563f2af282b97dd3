"""Helpers both command lines share."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable


def setup_logging(verbose: bool) -> None:
    """Warnings only by default: command output is for people and scripts, not logs."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type for a whole number in ``[low, high]``: a value out of range is bad
    usage (exit 2, with the range) rather than a traceback or a silent default far down."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            span = f"{low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: give {span}")
        return value

    return parse


def share(text: str) -> float:
    """An argparse type for a share in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is out of range: give a share above 0, up to 1")
    return value
