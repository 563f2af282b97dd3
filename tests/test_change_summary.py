"""With Ollama, the chat model summarises what changed between two versions, from the cited
diff only, each claim cited to both versions (issue 56). Through the real langchain-ollama
client against the fake server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.sync import Syncer
from masis_core.__main__ import main as ask_main
from masis_core.answers.change_summary import OFFLINE_NOTE, summarise
from masis_core.answers.changes import Comparison, compare
from masis_core.answers.providers import resolve_provider
from masis_core.config import Settings, get_settings
from masis_core.services.access import Door
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama

OLD = [
    (1, "", "1. Travel\nStaff book economy class for every flight. Receipts are kept.\n"),
    (2, "", "2. Meals\nMeals are paid up to 30 euros a day.\n3. Hotels\nAny hotel will do.\n"),
]
NEW = [
    (1, "", "1. Travel\nStaff book economy class for flights under 6 hours. Receipts are kept.\n"),
    (2, "", "2. Meals\nMeals are paid up to 45 euros a day.\n"),
]


def claims(*items: tuple[str, list[int]]) -> str:
    return json.dumps({"claims": [{"text": t, "changes": c} for t, c in items]})


@pytest.fixture
def diff() -> Comparison:
    return compare("policy.md", ("v1", OLD), ("v2", NEW))


@pytest.fixture
def ollama(settings: Settings, fake_ollama: FakeOllama) -> Settings:
    settings.provider = "ollama"
    settings.ollama_host = fake_ollama.url
    return settings


def test_the_model_summarises_the_cited_diff_each_claim_cited_to_both_versions(
    ollama: Settings, fake_ollama: FakeOllama, diff: Comparison
) -> None:
    fake_ollama.state.default_reply = claims(
        ("Economy class is now required only for flights under 6 hours.", [1, 99]),
        ("The daily meal allowance rose from 30 to 45 euros.", [2]),
        ("Something the diff does not have.", [7]),
    )
    summary = summarise(ollama, diff, resolve_provider(ollama))
    assert summary.by == "ollama" and summary.model == "llama3.1:8b" and summary.note is None
    assert summary.lines() == [
        "Economy class is now required only for flights under 6 hours. "
        "[policy.md, v1, p. 1; policy.md, v2, p. 1]",
        "The daily meal allowance rose from 30 to 45 euros. "
        "[policy.md, v1, p. 2; policy.md, v2, p. 2]",
    ]
    (request,) = fake_ollama.requests_to("/api/chat")
    assert request["format"]["title"] == "DiffSummary"
    prompt = "\n".join(m["content"] for m in request["messages"])
    # The cited diff and only it: the changes numbered with both places, nothing unchanged.
    assert "[1] In section “1. Travel”, “Staff book economy class for every flight.” became" in (
        prompt
    )
    assert "(policy.md, v1, p. 2; policy.md, v2, p. 2)" in prompt
    assert "Section “3. Hotels” removed" in prompt
    assert "Receipts are kept" not in prompt


def test_offline_mode_keeps_the_extractive_diff_and_says_so(
    settings: Settings, fake_ollama: FakeOllama, diff: Comparison
) -> None:
    settings.ollama_host = fake_ollama.url  # running, but MASIS_PROVIDER=offline
    summary = summarise(settings, diff, resolve_provider(settings))
    assert (summary.by, summary.claims, summary.note) == ("offline", [], OFFLINE_NOTE)
    assert fake_ollama.requests_to("/api/chat") == []


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ({"content": '{"claims": [{"text": "The meal', "done_reason": "length"}, "cut off"),
        ("Sure! Here is what changed: {claims: oops", "returned malformed DiffSummary twice"),
    ],
)
def test_an_unusable_reply_leaves_the_diff_with_a_clear_message(
    bench: Workbench,
    fake_ollama: FakeOllama,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reply: object,
    said: str,
) -> None:
    folder = tmp_path / "followed"
    folder.mkdir()
    (folder / "policy.md").write_text("\n".join(t for _, _, t in OLD))
    ws = bench.create_workspace("demo", "wordllama")
    syncer, door = Syncer(bench), Door(bench)
    syncer.follow(door, ws.id, folder)
    syncer.sync_as(door, ws.id)
    (folder / "policy.md").write_text("\n".join(t for _, _, t in NEW))
    syncer.sync_as(door, ws.id)
    monkeypatch.setenv("MASIS_PROVIDER", "ollama")
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    get_settings.cache_clear()
    fake_ollama.state.default_reply = reply
    capsys.readouterr()
    assert ask_main(["ask", "--workspace", ws.id, "compare v1 and v2 of policy.md", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["claims"] == [] and said in out["summary"]["note"]
    assert "The model's summary could not be used" in out["answer"]
    assert "the diff below is complete" in out["answer"]
    assert "45 euros" in out["answer"] and "[policy.md, v2" in out["answer"]  # the diff shows
    assert len(fake_ollama.requests_to("/api/chat")) == 2  # one repair, then no more


def test_a_missing_model_gives_the_diff_and_the_pull_to_run(
    ollama: Settings, fake_ollama: FakeOllama, diff: Comparison
) -> None:
    status = resolve_provider(ollama)  # the model was there when the badge was drawn
    fake_ollama.state.models = ["nomic-embed-text:latest"]  # and removed since (ollama rm)
    summary = summarise(ollama, diff, status)
    assert summary.by == "offline" and summary.claims == []
    assert summary.note is not None
    assert "has no model 'llama3.1:8b'" in summary.note
    assert "Run `ollama pull llama3.1:8b`" in summary.note
    assert fake_ollama.requests_to("/api/chat")  # refused with a 404 by the server
    # When the probe already knows, the note says so without a call.
    fresh = summarise(ollama, diff, resolve_provider(ollama))
    assert fresh.note is not None and "Run `ollama pull llama3.1:8b`" in fresh.note
