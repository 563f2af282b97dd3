"""The Library's followed folders and versions through AppTest (issue 56), on a real data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.sync import Syncer
from masis_core.config import get_settings
from masis_core.services.access import Door
from masis_core.storage.versions import Versions
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.fake_ollama import FakeOllama
from tests.pdfs import filler

POLICY = "# Travel policy\n\n## Expenses\n\nMeals are refunded up to 40 euros a day. {extra}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "policies"
    d.mkdir()
    (d / "travel.md").write_text(POLICY.format(extra=filler("travel", 80)))
    return d


def test_follow_sync_change_compare_and_delete_a_version(bench: Workbench, folder: Path):
    ws = bench.create_workspace("demo", "wordllama")
    at = fresh_app().run()
    at.text_input(key="follow-path").input(str(folder))
    at.button(key="FormSubmitter:follow-Follow").click().run()
    assert not at.exception, at.exception
    assert [f.path for f in Versions(bench.db).folders(ws.id)] == [str(folder.resolve())]
    next(b for b in at.button if b.label == "Sync now").click().run()
    settle(at)
    assert any("Sync done: 1 added" in s.value for s in at.success)
    # A revision whose new sentence carries markup: it is shown as words.
    (folder / "travel.md").write_text(
        POLICY.replace("40 euros", "55 euros **[bold](javascript:alert(1))**").format(
            extra=filler("travel", 80)
        )
    )
    next(b for b in at.button if b.label == "Sync now").click().run()
    settle(at)
    assert any("1 updated" in s.value for s in at.success)
    (doc,) = bench.documents(ws.id)
    lineage = Versions(bench.db).version_of(ws.id, doc.doc_id)
    assert lineage is not None and lineage.version == 2
    at.button(key=f"cmp-{lineage.lineage}").click().run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert ":red-background[40]" in shown and ":green-background[55]" in shown
    assert "\\[bold\\](javascript" in shown  # its bracket escaped: no live link
    captions = " ".join(c.value for c in at.caption)
    assert "travel.md, v1, p. 1" in captions and "travel.md, v2, p. 1" in captions
    # The question asks for the same diff on the Research page.
    at.switch_page("pages/research.py").run()
    at.text_area[0].input("What changed in travel.md?")
    at.button(key="FormSubmitter:ask-Ask").click().run()
    assert not at.exception, at.exception
    assert ":green-background[55]" in " ".join(m.value for m in at.markdown)
    at.switch_page("pages/library.py").run()
    first = Versions(bench.db).versions(ws.id, lineage.lineage)[0]
    at.button(key=f"delv-{first.doc_id}").click().run()
    assert not at.exception, at.exception
    assert [v.version for v in Versions(bench.db).versions(ws.id, lineage.lineage)] == [2]
    assert [d.doc_id for d in bench.documents(ws.id)] == [doc.doc_id]


def test_a_folder_the_server_may_not_read_is_refused_with_the_reason(
    bench: Workbench, tmp_path: Path
):
    bench.create_workspace("demo", "wordllama")
    at: AppTest = fresh_app().run()
    at.text_input(key="follow-path").input(str(tmp_path / "absent"))
    at.button(key="FormSubmitter:follow-Follow").click().run()
    assert any("does not exist" in e.value for e in at.error)


def test_with_ollama_the_comparison_opens_with_the_models_cited_summary(
    bench: Workbench,
    folder: Path,
    fake_ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
):
    ws = bench.create_workspace("demo", "wordllama")
    syncer, door = Syncer(bench), Door(bench)
    syncer.follow(door, ws.id, folder)
    syncer.sync_as(door, ws.id)
    (folder / "travel.md").write_text(
        POLICY.replace("40 euros", "55 euros").format(extra=filler("travel", 80))
    )
    syncer.sync_as(door, ws.id)
    monkeypatch.setenv("MASIS_PROVIDER", "ollama")
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    get_settings.cache_clear()
    claim = {"text": "The meal allowance rose from 40 to 55 euros a day.", "changes": [1]}
    fake_ollama.state.default_reply = json.dumps({"claims": [claim]})
    at = fresh_app().run()
    (doc,) = bench.documents(ws.id)
    v = Versions(bench.db).version_of(ws.id, doc.doc_id)
    assert v is not None
    at.button(key=f"cmp-{v.lineage}").click().run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "**In short** — written by llama3.1\\:8b from the diff below:" in shown
    assert (
        "- The meal allowance rose from 40 to 55 euros a day. "
        "[travel.md, v1, p. 1; travel.md, v2, p. 1]"
    ) in shown
    assert ":green-background[55]" in shown  # the diff follows
    # Opening a version's page reruns the page; the model is not asked again.
    first = Versions(bench.db).versions(ws.id, v.lineage)[0]
    at.toggle(key=f"vp-{first.doc_id[:16]}-1").set_value(True).run()
    assert not at.exception, at.exception
    assert "travel.md, v1, p. 1: the page as it was" in [c.value for c in at.caption]
    assert len(fake_ollama.requests_to("/api/chat")) == 1
