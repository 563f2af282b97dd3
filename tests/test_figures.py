"""One place says what a number and a year are (``masis_core/text/figures.py``); where two
definitions differ, the difference is the point, and these examples show it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from masis_core.text import figures

ROOT = Path(__file__).resolve().parents[1]


def test_each_shape_of_a_number_takes_what_its_reader_needs() -> None:
    # In prose a figure stands alone: not inside a path, not a fraction's numerator.
    assert figures.STANDALONE.findall("plant/000001 rose -3.5% to 1,200") == ["-3.5%", "1,200"]
    # A unit of one letter is a measure ("5 m") but not a unit two sources' figures clash on.
    assert figures.MEASURE.match("5 m").group(1) == "m"
    assert figures.FIGURE_WITH_UNIT.match("5 m").group(2) is None
    assert figures.FIGURE_WITH_UNIT.match("21 kilograms").groups() == ("21", "kilograms")
    # A line's words: times and ranges are numeric, but not bare numbers.
    assert figures.NUMERIC_WORD.match("1990-95") and not figures.BARE_NUMBER.match("1990-95")
    assert figures.BARE_NUMBER.match("5+") and figures.STARTS_WITH_FIGURE.match("(12)")
    # A table's figure inside a word; the question's own figures end on a digit.
    assert figures.CELL_FIGURE.findall("COVID-19 in susv3") == ["19", "3"]
    assert figures.DIGIT_RUN.findall("version 4.2.2.") == ["4.2.2."]
    assert re.findall(figures.QUESTION_FIGURE, "in 2019.") == ["2019"]
    assert figures.numeric("1,200") and figures.numeric("50%") and not figures.numeric("12a")


def test_the_two_years_differ_where_they_are_read() -> None:
    """Prose reads 1500-2099 as years; a table header 1800-2100."""
    assert figures.YEAR.fullmatch("1592") and 1592 not in figures.HEADER_YEARS
    assert 2100 in figures.HEADER_YEARS and not figures.YEAR.fullmatch("2100")


def test_no_other_module_defines_a_year_or_a_figure() -> None:
    """The former definitions are gone from the modules that held them."""
    held = {
        "masis_core/text/sentences.py": {"_NUMBER", "_NUMERIC", "_BARE_NUMBER", "_STATISTIC"},
        "masis_core/answers/question.py": {"DIGITS", "YEAR", "_MEASURE"},
        "masis_core/answers/stances.py": {"_FIGURE"},
        "masis_core/answers/rows.py": {"_FIGURE"},
        "masis_core/text/tables.py": {"_YEARS", "numeric"},
    }
    for path, names in held.items():
        tree = ast.parse((ROOT / path).read_text())
        defined = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        } | {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert not defined & names, (path, defined & names)
