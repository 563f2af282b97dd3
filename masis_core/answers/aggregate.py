"""Ranking and totals over a whole table, computed rather than quoted.

"Which country won the most bronze medals?" asked of a medal table had led with the totals
row ("Country: Total:; … Bronze: 251") at 68%: the composer quotes the row whose words match
best, and no row says "most". A question that ranks or sums over a column is answered here
instead: the whole table (every chunk of its sheet or file, not only the retrieved one) is
read into pandas, rows of totals are left out, and the row that ranks first is named and
cited, read with its header so the source view highlights it (``answers.rows.row_line``).

Its confidence is the computation's: high when the question names one column of one table,
under the review bar when the column is guessed between several or several tables compete.
A ranking question that cannot be computed is never answered from a row that happened to
match (``rows_allowed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from masis_core.answers.followup import standalone
from masis_core.answers.rows import (
    ROWS_PLACE,
    Table,
    _cells,
    _figures,
    _head,
    _names,
    parse,
    reading,
    table_of,
)
from masis_core.policy import POLICY
from masis_core.state import Evidence
from masis_core.text.sentences import content_stems
from masis_core.text.tables import numeric

# The words that ask for an aggregate, by what they compute; superlatives first ("the most
# medals in total" ranks by the Total column, it does not sum it).
OPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("max", frozenset({"most", "highest", "largest", "biggest", "greatest", "maximum", "top"})),
    ("min", frozenset({"least", "lowest", "smallest", "fewest", "minimum"})),
    ("mean", frozenset({"average", "mean"})),
    ("sum", frozenset({"total", "sum", "altogether", "combined", "overall"})),
)
HOW_MANY = re.compile(r"\bhow many\b", re.I)
# A row of totals: its name cell says so ("Total:", "Subtotal", "Grand total", "Sum").
TOTAL_ROW = re.compile(r"^(?:grand\s+)?(?:sub-?\s*)?totals?\b|^sum\b", re.I)
# A column is numeric when this share of its filled cells are figures.
NUMERIC_SHARE = POLICY.numeric_share
# Tables read whole per question, and rows per table: enough for any sheet a question ranks.
MAX_TABLES = POLICY.table_reads
MAX_ROWS = POLICY.max_table_rows
# The computation's confidence: one named column of one table; a guessed column or tables
# that compete (under the review bar, so the analyst looks).
COMPUTED = POLICY.computed_confidence
DOUBTFUL = POLICY.doubtful_confidence
SHOWN_TIES = POLICY.shown_ties

Fetch = Callable[[str], Sequence[tuple[str, str, dict[str, Any]]]]


@dataclass
class Whole:
    """One table read from all its chunks: its rows in order, each with its chunk's id."""

    doc_id: str
    table: Table
    chunk_of: list[str]  # per row, the id of the chunk that holds it
    chunks: dict[str, tuple[str, dict[str, Any]]]  # id -> (text, metadata)


def asked_op(question: str) -> tuple[str, str] | None:
    """What the question computes and the word that asks it: ("max", "most"), ("count",
    "how many"); None for any other question."""
    said = re.findall(r"[a-z]+", question.lower())
    for op, words in OPS:
        word = next((w for w in said if w in words), None)
        if word:
            return op, word
    return ("count", "how many") if HOW_MANY.search(question) else None


def table_key(ev: Evidence) -> tuple[str, str] | None:
    """A table chunk's document and the place of its table without the row numbers (every
    block of a sheet or a file is one table)."""
    if table_of(ev) is None:
        return None
    place = str(ev.get("place") or "")
    return str(ev.get("doc_id") or ""), ROWS_PLACE.sub("", place).rstrip(", ")


def whole_table(ev: Evidence, fetch: Fetch) -> Whole | None:
    """Every row of the retrieved chunk's table, from the chunks of its document at the same
    table place under the same header."""
    key, first = table_key(ev), table_of(ev)
    if key is None or first is None:
        return None
    rows: list[str] = []
    owners: list[str] = []
    chunks: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, text, meta in sorted(fetch(key[0]), key=lambda c: c[0]):
        part = parse(text)
        same = ROWS_PLACE.sub("", str(meta.get("place") or "")).rstrip(", ") == key[1]
        if part is None or not same or part.header != first.header:
            continue
        chunks[cid] = (text, meta)
        rows.extend(part.rows)
        owners.extend([cid] * len(part.rows))
    if not rows or len(rows) > MAX_ROWS:
        return None
    return Whole(key[0], Table(first.heading, first.header, rows), owners, chunks)


def _frame(table: Table) -> pd.DataFrame:
    width = len(table.header)
    cells = [(_cells(line) + [""] * width)[:width] for line in table.rows]
    return pd.DataFrame(cells, columns=range(width))


def _numbers(column: pd.Series) -> pd.Series:
    cleaned = column.str.replace(",", "", regex=False).str.rstrip("%")
    return pd.to_numeric(cleaned.where(column.map(numeric)), errors="coerce")


def _numeric_columns(frame: pd.DataFrame) -> list[int]:
    out = []
    for k in frame.columns:
        filled = frame[k][frame[k] != ""]
        if len(filled) >= 2 and filled.map(numeric).mean() >= NUMERIC_SHARE:
            out.append(int(k))
    return out


def _label_column(table: Table, question: str, numbers: list[int]) -> int:
    """The column that names a row: the one the question asks by ("Which country …"), else
    the first that is not figures."""
    asked = content_stems(question)
    for k, name in enumerate(table.header):
        if k not in numbers and content_stems(name) & asked:
            return k
    return next((k for k in range(len(table.header)) if k not in numbers), 0)


def _value_column(table: Table, question: str, word: str, numbers: list[int]) -> tuple[int, bool]:
    """The figures' column the question names, and whether that is certain (one column named
    most); (-1, False) when none is named. The word that asks the aggregate counts only when
    nothing else names a column ("the total of Bronze" is Bronze; "the highest Total" Total)."""
    for asked in (content_stems(question) - content_stems(word), content_stems(question)):
        scores = {k: len(asked & content_stems(table.header[k])) for k in numbers}
        best = max(scores.values(), default=0)
        if best:
            named = [k for k, s in scores.items() if s == best]
            return named[0], len(named) == 1
    return -1, False


def _named_rows(table: Table, question: str, label: int) -> list[int] | None:
    """The rows the question narrows to by a name it gives outside the table's head; None
    when it names none (or none of the table's rows)."""
    names = _names(question) - content_stems(_head(table))
    if not names:
        return None
    held = [i for i, row in enumerate(table.rows) if names & content_stems(_cells(row)[label])]
    return held if held and len(held) < len(table.rows) else None


def lookup(table: Table, question: str) -> bool:
    """The question asks about a row it names, a lookup the rows answer, not an aggregate:
    by a figure outside the table's head ("the grade point average of student 1", "the
    county with a population of 677": both had been computed over every row), or by the
    name of one row ("How many bronze medals did Kenya win?")."""
    if _figures(question) - _figures(_head(table)):
        return True
    numbers = _numeric_columns(_frame(table))
    named = _named_rows(table, question, _label_column(table, question, numbers))
    return named is not None and len(named) == 1


def ranks_over(ev: Evidence, question: str) -> bool:
    """A retrieved table chunk the question ranks or totals over: it names one of its columns
    of figures and the column that names its rows ("Which House committee had the largest
    staff?" of "COMMITTEE | … | STAFF"). Kept as evidence like a keyword hit: the question's
    other words ("House", "largest") are in no row, and the table was dropped under the bar."""
    table, found = table_of(ev), asked_op(standalone(question))
    if table is None or found is None or not table.header or lookup(table, question):
        return False
    numbers = _numeric_columns(_frame(table))
    label = _label_column(table, question, numbers)
    column, _ = _value_column(table, question, found[1], [k for k in numbers if k != label])
    return column >= 0 and bool(content_stems(table.header[label]) & content_stems(question))


def _totals(frame: pd.DataFrame, values: pd.Series, label: int) -> pd.Series:
    """Rows of totals: a name cell that says so, or (unnamed) a figure that is the sum of
    every other row's."""
    said = frame.apply(
        lambda row: any(TOTAL_ROW.match(str(c)) for c in row if c and not numeric(c)), axis=1
    )
    rest = values.sum() - values
    summed = (values.notna()) & (frame[label] == "") & ((values - rest).abs() <= 1e-9 * rest.abs())
    return said | (summed if values.notna().sum() > 2 else False)


def _figure(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def compute(question: str, whole: Whole) -> dict[str, Any] | None:
    """The aggregate the question asks of the table, as the answer states it: the statement,
    the row that ranks first (its reading and its chunk) and how certain the column is;
    None when the question asks none, names one row, or names no column to compute over."""
    found = asked_op(question)
    table = whole.table
    if found is None or not table.header:
        return None
    op, word = found
    frame = _frame(table)
    numbers = _numeric_columns(frame)
    label = _label_column(table, question, numbers)
    numbers = [k for k in numbers if k != label]
    column, certain = _value_column(table, question, word, numbers)
    asked = content_stems(question)
    if op == "count" and column >= 0:
        op = "sum"  # "How many bronze medals were won?": the column's figures added up
    if column < 0 and (op != "count" or not content_stems(table.header[label]) & asked):
        return None  # a count counts what the question names: "How many countries …"
    if lookup(table, question):
        return None
    named = _named_rows(table, question, label)
    values = _numbers(frame[column]) if column >= 0 else pd.Series(1.0, index=frame.index)
    keep = ~_totals(frame, values, label)
    if named is not None:
        keep &= frame.index.isin(named)
    values = values[keep]
    if values.notna().sum() == 0:
        return None
    name = table.header[column] if column >= 0 else ""
    said, ranked = _statement(op, word, (column, name), frame, values, label)
    row = reading(table, table.rows[ranked], set()) if ranked is not None else None
    return {
        "op": op,
        "column": name,
        "rows": int(values.notna().sum()),
        "left_out": int((~keep).sum()),
        "statement": said,
        "row": row,
        "chunk_id": whole.chunk_of[ranked] if ranked is not None else next(iter(whole.chunks)),
        "certain": certain or op == "count",
    }


def _statement(
    op: str, word: str, column: tuple[int, str], frame: pd.DataFrame, values: pd.Series, label: int
) -> tuple[str, int | None]:
    """The answer's sentence, and the row it names (None for a sum, an average or a count,
    which no one row holds). A ranked figure is the cell as the sheet writes it."""
    rows = int(values.notna().sum())
    left = "; rows of totals left out" if len(values) < len(frame) else ""
    if op == "count":
        return f"The table lists {rows} rows{left}.", None
    if op in ("sum", "mean"):
        value = values.sum() if op == "sum" else values.mean()
        what = "Total" if op == "sum" else "Average"
        return f"{what} {column[1]} over the table's {rows} rows: {_figure(value)}{left}.", None
    best = values.max() if op == "max" else values.min()
    ties = [int(i) for i in values.index[values == best]]
    named = [frame.at[i, label] or f"row {i + 1}" for i in ties[:SHOWN_TIES]]
    who = " and ".join(named) + (" and others" if len(ties) > SHOWN_TIES else "")
    verb = "has" if len(ties) == 1 else "have"
    return f"{who} {verb} the {word} {column[1]}: {frame.at[ties[0], column[0]]}.", ties[0]


def _chunk_evidence(cid: str, text: str, meta: dict[str, Any]) -> Evidence:
    """A chunk of the table the retrieval did not return, as evidence: the row it cites."""
    return Evidence(
        chunk_id=cid,
        doc_id=str(meta.get("doc_id", "")),
        filename=str(meta.get("filename", "")),
        page_start=int(meta.get("page_start", 0)),
        page_end=int(meta.get("page_end", 0)),
        place=str(meta.get("place") or ""),
        ocr=bool(meta.get("ocr", False)),
        text=text,
        score=0.0,
        quality=1.0,
        source="kb",
        kept_by="row",
        keyword_rank=None,
        coverage=0.0,
        soft=0.0,
    )


def attach(question: str, evidence: list[Evidence], fetch: Fetch) -> list[Evidence]:
    """The evidence with the aggregate the question asks computed over each retrieved table
    read whole (the first ``MAX_TABLES``, in rank order) and set on the chunk that holds the
    row it names, that chunk added when retrieval did not return it. When several tables
    name the column, they compete: each result is then uncertain."""
    question = standalone(question)
    if asked_op(question) is None:
        return evidence
    keys = list(dict.fromkeys(k for ev in evidence if (k := table_key(ev)) is not None))
    if _asks_a_row(question, evidence):
        return evidence  # a retrieved table holds the row it names: a lookup
    results = []
    for key in keys[:MAX_TABLES]:
        ev = next(e for e in evidence if table_key(e) == key)
        whole = whole_table(ev, fetch)
        done = compute(question, whole) if whole is not None else None
        if done is not None and whole is not None:
            results.append((done, whole))
    if not results:
        return evidence
    done, whole = results[0]
    done = {**done, "certain": done["certain"] and len(results) == 1, "tables": len(results)}
    out: list[Evidence] = [Evidence(**ev) for ev in evidence]
    at = next((i for i, ev in enumerate(out) if ev.get("chunk_id") == done["chunk_id"]), None)
    if at is None:
        out.append(_chunk_evidence(done["chunk_id"], *whole.chunks[done["chunk_id"]]))
        at = len(out) - 1
    out[at]["computed"] = {**done, "question": question}
    return out


def computed_of(question: str, evidence: list[Evidence]) -> tuple[int, dict[str, Any]] | None:
    """The evidence marker and the aggregate computed for this question, if any."""
    question = standalone(question)
    for marker, ev in enumerate(evidence, start=1):
        done = ev.get("computed")
        if isinstance(done, dict) and done.get("question") == question:
            return marker, done
    return None


def stated(ev: Evidence, sentence: str) -> bool:
    """The sentence is the aggregate computed over this chunk's table: its figure (a total,
    an average, a count) is the computation's, in no passage."""
    done = ev.get("computed")
    return isinstance(done, dict) and " ".join(sentence.split()) == done.get("statement")


def parts(question: str, evidence: list[Evidence]) -> list[dict[str, Any]] | None:
    """The computed answer as the composer's parts: the statement, then the row it names
    read with its header (what the source view highlights), both cited at the row's chunk."""
    found = computed_of(question, evidence)
    if found is None:
        return None
    marker, done = found
    said = [done["statement"], *([done["row"]] if done.get("row") else [])]
    return [{"text": text, "citations": [marker], "passage": 0} for text in said]


def confidence(question: str, answer: str, evidence: list[Evidence]) -> float | None:
    """The computed answer's confidence, when the draft leads with it: it is computed, so
    high when one named column of one table was ranked, under the bar otherwise."""
    found = computed_of(question, evidence)
    if found is None or not answer.startswith(found[1]["statement"]):
        return None
    return COMPUTED if found[1]["certain"] else DOUBTFUL


def _asks_a_row(question: str, evidence: list[Evidence]) -> bool:
    """A retrieved table holds the row the question names (``lookup``)."""
    tables = [t for ev in evidence if (t := table_of(ev)) is not None]
    return any(lookup(t, question) for t in tables)


def rows_allowed(question: str, evidence: list[Evidence]) -> bool:
    """Whether a retrieved row may answer: not for a question that ranks without naming the
    row it asks about. "Which country won the most bronze medals?" had been answered by the
    one row whose words matched, the totals row. A total, an average or "how many" is
    mostly asked of one row ("In Shanghai, how many smokers had cancer?"): its rows stay."""
    question = standalone(question)
    found = asked_op(question)
    return found is None or found[0] not in ("max", "min") or _asks_a_row(question, evidence)


def without_rows(evidence: list[Evidence]) -> list[Evidence]:
    """The evidence with its table chunks emptied, markers unchanged: nothing of them is
    quoted."""
    return [Evidence(**{**ev, "text": ""}) if table_of(ev) else ev for ev in evidence]
