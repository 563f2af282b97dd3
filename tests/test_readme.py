"""The README is the front door: at most 250 lines (it had grown to 258), and it says what an
install costs on a fresh machine (issue 54, point 13)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
MAX_LINES = 250


def test_the_readme_is_short_and_states_the_install_size_and_time() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    install = text[text.index("**Install size and time.**") :][:600]
    assert re.search(r"\d+(?:\.\d+)? GB", install), install
    assert re.search(r"\d+ min \d+ s", install), install
    for link in re.findall(r"\]\((docs/[^)#]+)", text):  # what moved out is still there
        assert (README.parent / link).exists(), link
