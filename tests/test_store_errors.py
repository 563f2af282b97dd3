"""The storage interface's errors mean the same on both databases: a key already stored is
``DuplicateRow`` (callers read it as "already there"), any other broken constraint is a
``StoreError`` that says it is a bug — never mistaken for a duplicate."""

from __future__ import annotations

import pytest

from masis_core.errors import DuplicateRow, StoreError, WorkspaceError
from masis_core.workspaces.workbench import Workbench

pytestmark = pytest.mark.usefixtures("backend")


def test_a_duplicate_key_is_a_duplicate_and_a_missing_value_is_not(bench: Workbench) -> None:
    bench.create_workspace("plant", "wordllama")
    with pytest.raises(WorkspaceError, match="already exists"):
        bench.create_workspace("plant", "wordllama")
    with pytest.raises(DuplicateRow), bench.db.connect() as conn:
        conn.execute(
            "INSERT INTO workspaces (id, name, embed_model, created_at) VALUES (?,?,?,?)",
            ("plant", "plant", "wordllama", "2026-11-23T00:00:00Z"),
        )
    with pytest.raises(StoreError, match="this is a bug") as caught, bench.db.connect() as conn:
        conn.execute(
            "INSERT INTO workspaces (id, name, embed_model, created_at) VALUES (?,?,?,?)",
            ("other", None, "wordllama", "2026-11-23T00:00:00Z"),
        )
    assert not isinstance(caught.value, DuplicateRow)
    assert [w.id for w in bench.registry.list_workspaces()] == ["plant"]


def test_a_database_missing_an_index_gets_it_at_the_next_start(bench: Workbench) -> None:
    """An index a later version adds (on tables that already exist) is created when a
    process starts on the older database."""
    with bench.db.connect() as conn:
        conn.execute("DROP INDEX runs_by_thread")
    bench.db.ensure_schema()
    with bench.db.connect() as conn:
        if bench.settings.postgres_url is None:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        else:
            rows = conn.execute("SELECT indexname FROM pg_indexes")
        assert "runs_by_thread" in {r[0] for r in rows}
