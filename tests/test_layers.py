"""The packages depend on each other one way only, as the README's Layout section draws it.

masis_core, inside, bottom to top (``CORE_LAYERS``):
  foundation (config, errors, faults, prompts, modes, state, policy: top-level modules)
  ← text, storage, llm ← retrieval ← answers ← workspaces ← graph ← services
  ← ingest (parsing, chunking, the pipeline)
  ← evaluation (measures on data sets and folders of PDFs: ingests, then asks)
  ← ui (Streamlit building blocks) ← pages, app.py

A module may import its own package and the ones below it. The command lines
(``python -m masis_core``, ``python -m ingest``) are entry points, like the pages: they sit on
top and may reach any layer. Only ``ui``, the pages and ``app.py`` import Streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"masis_core": 0, "ingest": 1, "evaluation": 2, "ui": 3, "pages": 4, "app": 4}
ENTRY_POINTS = {"__main__.py"}
STREAMLIT_ALLOWED = {"ui", "pages", "app"}


# masis_core's subpackages by rank; the foundation modules are rank 0 and may import each
# other. A package imports its own modules and those of lower rank, never one beside it.
FOUNDATION = {"config", "errors", "faults", "prompts", "modes", "state", "policy"}
CORE_LAYERS: list[set[str]] = [
    FOUNDATION,
    {"text", "storage", "llm"},
    {"retrieval"},
    {"answers"},
    {"workspaces"},
    {"graph"},
    {"services"},
]
CORE_RANK = {part: rank for rank, parts in enumerate(CORE_LAYERS) for part in parts}


def package_of(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def imported_modules(path: Path) -> set[str]:
    """Dotted names of every import in the module, including those inside functions
    (``from a.b import c`` gives ``a.b.c``: ``c`` may be a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every import in the module."""
    return {name.split(".")[0] for name in imported_modules(path)}


def core_part(dotted: str) -> str | None:
    """The rank-holding part of a ``masis_core`` module: its subpackage or foundation module."""
    parts = dotted.split(".")
    return parts[1] if parts[0] == "masis_core" and len(parts) > 1 else None


def core_violations(path: Path, own: str) -> list[str]:
    """The parts of ``masis_core`` that a module of part ``own`` must not import but does."""
    wrong = set()
    for name in imported_modules(path):
        part = core_part(name)
        if part is None or part == own or part not in CORE_RANK:
            continue
        both_foundation = part in FOUNDATION and own in FOUNDATION
        if CORE_RANK[part] >= CORE_RANK[own] and not both_foundation:
            wrong.add(part)
    return sorted(wrong)


def modules() -> list[Path]:
    found = [ROOT / "app.py"]
    for package in LAYERS:
        folder = ROOT / package
        if folder.is_dir():
            found.extend(sorted(folder.rglob("*.py")))
    return found


def test_no_layer_imports_a_higher_one() -> None:
    wrong = []
    for path in modules():
        if path.name in ENTRY_POINTS:
            continue
        own = LAYERS[package_of(path)]
        for name in imported_packages(path):
            if name in LAYERS and LAYERS[name] > own:
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_core_packages_import_downwards_only() -> None:
    wrong = []
    for path in sorted((ROOT / "masis_core").rglob("*.py")):
        own = path.relative_to(ROOT / "masis_core").parts[0].removesuffix(".py")
        if own in {"__main__", "cli", "__init__"}:
            continue
        wrong.extend(
            f"{path.relative_to(ROOT)} imports masis_core.{part}"
            for part in core_violations(path, own)
        )
    assert not wrong, "\n".join(wrong)


def test_every_core_part_has_a_rank() -> None:
    """A new subpackage or foundation module must be placed in ``CORE_LAYERS`` (and in the
    README's Layout) before it is used."""
    parts = {
        path.name.removesuffix(".py")
        for path in (ROOT / "masis_core").iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").exists())
        and path.name not in {"__init__.py", "__main__.py", "cli.py"}
    }
    assert parts == set(CORE_RANK)


def test_only_the_ui_layers_import_streamlit() -> None:
    wrong = [
        str(path.relative_to(ROOT))
        for path in modules()
        if package_of(path) not in STREAMLIT_ALLOWED and "streamlit" in imported_packages(path)
    ]
    assert not wrong, wrong


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The rule is not vacuous: an upward import in a core module is caught."""
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from ui.resources import jobs\n    import streamlit\n")
    assert {"ui", "streamlit"} <= imported_packages(module)


def test_the_core_checker_sees_sideways_and_upward_imports(tmp_path: Path) -> None:
    """retrieval importing answers (upward) and text importing storage (beside) are caught;
    retrieval importing text and config importing modes are not."""
    module = tmp_path / "probe.py"
    module.write_text(
        "def f():\n    from masis_core.answers import judgement\n"
        "from masis_core.text.words import words\n"
    )
    assert core_violations(module, "retrieval") == ["answers"]
    module.write_text("from masis_core.storage import db\n")
    assert core_violations(module, "text") == ["storage"]
    module.write_text("from masis_core import modes\n")
    assert core_violations(module, "config") == []
    assert core_violations(module, "retrieval") == []


# The judge's rooms inside ``answers``, bottom to top: reading the question, how sources
# stand, the features, the fitted confidence, and the one entry point ``judge``.
JUDGE_ROOMS = ["question", "stances", "features", "confidence", "judgement"]


def test_the_judges_rooms_import_downwards_only() -> None:
    """``question`` knows nothing of the judge; ``compose`` and ``sections`` read the question
    from it, not from the judge; no room imports one above it."""
    rank = {room: k for k, room in enumerate(JUDGE_ROOMS)}
    wrong = []
    for room in JUDGE_ROOMS:
        path = ROOT / "masis_core" / "answers" / f"{room}.py"
        for name in imported_modules(path):
            other = name.removeprefix("masis_core.answers.").split(".")[0]
            if name.startswith("masis_core.answers.") and rank.get(other, -1) > rank[room]:
                wrong.append(f"{room} imports {other}")
    for reader in ("compose", "sections"):
        path = ROOT / "masis_core" / "answers" / f"{reader}.py"
        wrong.extend(
            f"{reader} borrows from {name}"
            for name in imported_modules(path)
            if name.split(".")[2:3] and name.split(".")[2] in JUDGE_ROOMS[1:]
        )
    assert not wrong, "\n".join(wrong)


def module_name(path: Path, root: Path = ROOT) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def import_graph(paths: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    """Each module's imports of the others, wherever in it they stand (a function-level or
    ``TYPE_CHECKING`` import hides a circle from Python, not from a reader)."""
    names = {module_name(path, root): path for path in paths}

    def known(dotted: str) -> str:
        """``a.b.c``: the module c, else the module a.b that holds the name c."""
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted

    return {
        name: {known(d) for d in imported_modules(path)} - {"", name}
        for name, path in names.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules that reach each other through imports: strongly connected components of
    more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    """A circle (``ingest.parsing`` importing the kinds, which import its pages) is held
    together by imports inside functions and breaks on the next edit: none may be left."""
    assert circles(import_graph(modules())) == []


def test_the_circle_checker_sees_a_circle_through_a_function_level_import(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("from b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from c import g\n")
    (tmp_path / "c.py").write_text("import a\n")
    (tmp_path / "d.py").write_text("import a\n")
    assert circles(import_graph(sorted(tmp_path.glob("*.py")), tmp_path)) == [["a", "b", "c"]]
