"""The Streamlit app through AppTest, on a real data dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.pipeline import Ingestor
from masis_core.services import Workbench
from tests.pdfs import filler, make_pdf

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def app(bench: Workbench) -> AppTest:
    # The cached factories live per process; start each test from its own data dir.
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    return AppTest.from_file(APP, default_timeout=60)


def sidebar_text(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.sidebar.markdown, *at.sidebar.caption, *at.info])


def test_fresh_start_shows_offline_mode_and_how_to_switch(app: AppTest) -> None:
    at = app.run()
    assert not at.exception
    assert "Offline extractive mode" in sidebar_text(at)
    assert "ollama pull llama3" in at.sidebar.code[0].value
    assert "ollama pull nomic-embed-text" in at.sidebar.code[0].value
    assert any("No workspace yet" in w.value for w in at.sidebar.warning)


def test_create_a_workspace_from_the_sidebar(app: AppTest, bench: Workbench) -> None:
    at = app.run()
    at.sidebar.text_input[0].input("Field Notes")
    at.sidebar.button[0].click().run()
    assert not at.exception
    assert [w.id for w in bench.registry.list_workspaces()] == ["field-notes"]
    assert at.sidebar.selectbox[0].value == "field-notes"


def test_lists_workspaces_and_their_documents(app: AppTest, bench: Workbench) -> None:
    ws = bench.create_workspace("demo", "wordllama")
    bench.create_workspace("other", "wordllama")
    Ingestor(bench).ingest_bytes(ws, make_pdf([filler("pump", 200)]), "pump-manual.pdf")
    at = app.run()
    assert not at.exception
    assert at.sidebar.selectbox[0].options == ["demo · wordllama", "other · wordllama"]
    assert any("pump-manual.pdf" in m.value for m in at.markdown)
    at.sidebar.selectbox[0].select_index(1).run()
    assert not any("pump-manual.pdf" in m.value for m in at.markdown)
