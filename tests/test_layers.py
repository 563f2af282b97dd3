"""The packages depend on each other one way only, as the README's Layout section draws it.

masis_core (settings, state, graph, nodes, engines, retrieval, storage, runs, jobs)
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


def package_of(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every import in the module, including those inside functions."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


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
