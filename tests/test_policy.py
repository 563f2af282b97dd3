"""One frozen AnswerPolicy holds every threshold of retrieval, the segmenter and answering: a
reader finds each there, with how it was set and why, and none left as a bare number in the
modules that use them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from masis_core.policy import POLICY, AnswerPolicy, provenance

ROOT = Path(__file__).resolve().parents[1]
# The modules whose thresholds the policy gathers.
USERS = [
    "masis_core/answers/compose.py",
    "masis_core/answers/sections.py",
    "masis_core/answers/question.py",
    "masis_core/answers/stances.py",
    "masis_core/answers/features.py",
    "masis_core/answers/confidence.py",
    "masis_core/answers/support.py",
    "masis_core/answers/aggregate.py",
    "masis_core/graph/nodes/researcher.py",
    "masis_core/graph/nodes/supervisor.py",
    "masis_core/graph/nodes/critic.py",
    "masis_core/graph/nodes/human_review.py",
    "masis_core/workspaces/calibration.py",
    "masis_core/workspaces/picks.py",
]
# The layers below answers, whose fractions (weights, shares, similarity bars) the policy holds
# too, in its sections; their counts and caps (a pool's depth, a list's length) stay, as a
# length is not a threshold. A module of a whole package is listed by its folder.
LOWER = ["masis_core/retrieval", "masis_core/text", "masis_core/answers/changes.py"]
# ``percent``'s 0.005 and 0.995 are where a probability shown would round to 0% or 100%: how a
# figure is written, not a decision on it.
DISPLAY = ["masis_core/text/markup.py"]
# Where limits are read for the analyst: pages, the UI, services and the command line.
READERS = ["pages", "ui", "masis_core/services", "masis_core/__main__.py", "masis_core/cli.py"]


def is_number(node: ast.expr) -> bool:
    """A literal number, or arithmetic on literal numbers (``1 / 3``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return is_number(node.operand)
    if isinstance(node, ast.BinOp):
        return is_number(node.left) and is_number(node.right)
    return False


def is_fraction(node: ast.expr) -> bool:
    """A literal number that is no whole count: ``0.6``, ``1 / 3`` (not ``2``, ``-1``)."""
    return is_number(node) and any(
        isinstance(n, ast.Div) or (isinstance(n, ast.Constant) and type(n.value) is float)
        for n in ast.walk(node)
    )


def bare_thresholds(path: Path, fractions_only: bool = False) -> list[str]:
    """Module-level UPPER_CASE names bound to a number (or, in the lower layers, to a
    fraction) rather than read from the policy."""
    found = []
    bare = is_fraction if fractions_only else is_number
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            value = getattr(node, "value", None)
        for t in targets:
            name = t.id if isinstance(t, ast.Name) else ""
            if name.lstrip("_").isupper() and value is not None and bare(value):
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


def is_threshold(node: ast.expr) -> bool:
    """A literal fraction a score is held against (``0.65``, ``-0.5``), or a share of a count
    (``0.6 * n``); not 0 or 1 (a share's ends), not an integer (a count), not a numerical
    guard under 0.001 (``1e-9``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return is_threshold(node.left) or is_threshold(node.right)
    if not (isinstance(node, ast.Constant) and type(node.value) is float):
        return False
    return node.value >= 0.001 and node.value not in (0.0, 1.0)


def literal_thresholds(path: Path) -> list[str]:
    """Where a score is compared with a literal fraction (``c >= 0.65``) or clamped by one
    (``max(0.05, t)``) instead of reading the policy's field."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
        ):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("min", "max"):
            operands = list(node.args)
        else:
            continue
        if any(is_threshold(o) for o in operands):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def files_of(parts: list[str]) -> list[Path]:
    """The modules named, and those of the folders named."""
    return [
        p
        for part in parts
        for p in ([ROOT / part] if part.endswith(".py") else sorted((ROOT / part).rglob("*.py")))
        if p.exists()
    ]


def policed_files() -> list[Path]:
    """The modules that use the policy's thresholds, those below that hold fractions, and
    those that read its limits."""
    display = set(files_of(DISPLAY))
    return [p for p in files_of(USERS + LOWER + READERS) if p not in display]


def test_every_threshold_says_how_it_was_set_and_why() -> None:
    said = provenance(POLICY)
    assert {"relevance", "pair_topic", "keyword_coverage", "low_confidence"} <= set(said)
    assert {"max_retries_limit", "default_max_retries", "short_section_words"} <= set(said)
    assert {"retrieval.default_threshold", "retrieval.quality_threshold"} <= set(said)
    assert {"retrieval.dense_weight", "text.figures_share", "renamed_alike"} <= set(said)
    for name, (_, set_by, why) in said.items():
        assert set_by in {"fitted", "measured", "hand"}, name
        assert len(why) > 10, name
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICY.low_confidence = 0.5  # type: ignore[misc]
    assert AnswerPolicy(low_confidence=0.7).low_confidence == 0.7  # a variant is a new object


def test_no_threshold_lives_outside_the_policy() -> None:
    bare = [b for path in USERS for b in bare_thresholds(ROOT / path)]
    bare += [b for path in files_of(LOWER) for b in bare_thresholds(path, fractions_only=True)]
    assert not bare, "\n".join(bare)


def test_no_score_is_held_against_a_literal_fraction() -> None:
    literal = [hit for path in policed_files() for hit in literal_thresholds(path)]
    assert not literal, "\n".join(literal)


def test_the_checker_sees_a_literal_threshold() -> None:
    module = ROOT / "tests" / "_probe_literal.py"
    try:
        module.write_text(
            "a = c >= 0.65\nb = max(0.05, t)\nc = 0.3 < s <= POLICY.x\nd = s < -0.5\n"
            "e = n > 2\nf = p > 1e-9\ng = min(1.0, x)\nh = s == 0.5\ni = s >= POLICY.relevance\n"
            "j = w >= 0.6 * n\nk = n > 2 * m\nl = w >= POLICY.text.wordish_share * n\n"
        )
        assert [hit.split(": ", 1)[1] for hit in literal_thresholds(module)] == [
            "c >= 0.65",
            "max(0.05, t)",
            "0.3 < s <= POLICY.x",
            "s < -0.5",
            "w >= 0.6 * n",
        ]
    finally:
        module.unlink()


def test_the_checker_sees_a_bare_threshold(tmp_path: Path) -> None:
    module = ROOT / "tests" / "_probe_policy.py"
    try:
        module.write_text("A = 0.5\n_B = 1 / 3\nC = POLICY.relevance\nD = 'text'\nE: int = 2\n")
        assert bare_thresholds(module) == [
            "tests/_probe_policy.py: A",
            "tests/_probe_policy.py: _B",
            "tests/_probe_policy.py: E",
        ]
        assert bare_thresholds(module, fractions_only=True) == [
            "tests/_probe_policy.py: A",
            "tests/_probe_policy.py: _B",
        ]
    finally:
        module.unlink()


def test_pages_services_and_the_cli_read_limits_from_the_policy() -> None:
    files = [
        p
        for part in READERS
        for p in ([ROOT / part] if part.endswith(".py") else (ROOT / part).rglob("*.py"))
    ]
    wrong = [
        f"{p.relative_to(ROOT)} imports {n.module}.{a.name}"
        for p in files
        if p.exists()
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("masis_core.graph.nodes")
        for a in n.names
        if a.name.isupper()
    ]
    assert not wrong, "\n".join(wrong)
