"""The production path against the replies the real Ollama server sends (issue 52): thinking
models, cut-off JSON, prompts beyond the window, hosts without a scheme, cold starts, full
queues, broken streams, long embedding inputs, loose schemas and the model choice. Each goes
through the fake server and the real langchain-ollama and ollama clients."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from masis_core.answers.ollama_engine import OllamaEngine
from masis_core.answers.providers import resolve_provider
from masis_core.config import Settings, get_settings
from masis_core.llm.embeddings import OllamaEmbedder
from masis_core.llm.ollama import chat_model, probe
from masis_core.state import Evidence
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama
from tests.ollama_helpers import PLAN, REVIEW_OK, ask, draft, ollama_plant, replies, scripted

ANSWER = "The pump is inspected every 500 operating hours."
QUESTION = "How often is the pump inspected?"


@pytest.fixture
def setup(bench: Workbench, fake_ollama: FakeOllama):
    return ollama_plant(bench, fake_ollama)


def node(rec, name: str) -> dict:
    return next(t for t in rec.trace if t["node"] == name)


def chats(fake: FakeOllama) -> list[dict]:
    """The chat requests that asked for an answer (not the warm-up's empty one)."""
    return [b for b in fake.requests_to("/api/chat") if b.get("messages")]


def passages(count: int, chars: int) -> list[Evidence]:
    words = "the relief valve of the hydraulic pump opens at ninety bar under load "
    text = (words * (chars // len(words) + 1))[:chars]
    return [
        Evidence(chunk_id=f"c{n}", doc_id=f"d{n}", filename=f"f{n}.txt", page_start=1, text=text)
        for n in range(1, count + 1)
    ]


# -- 1. thinking models --------------------------------------------------------------------
def test_a_thinking_model_is_told_not_to_think_and_answers(setup) -> None:
    """Ollama 0.12.4+ thinks when ``think`` is left out; all the output had landed in
    ``message.thinking`` and the draft fell back to the extractive answer."""
    research, fake = setup
    fake.state.thinks = True
    fake.state.default_reply = replies(draft((ANSWER, [1])))
    rec = ask(research)
    assert rec.status == "completed", rec.error
    assert "error" not in node(rec, "synthesizer")
    assert rec.answer == f"{ANSWER} [1]"
    assert {b["think"] for b in chats(fake)} == {False}


def test_an_answer_lost_in_the_thinking_is_said_plainly(setup, bench: Workbench) -> None:
    research, fake = setup
    bench.settings.ollama_think = "true"
    fake.state.thinks = True
    fake.state.default_reply = replies(draft((ANSWER, [1])))
    rec = ask(research)
    error = node(rec, "synthesizer")["error"]
    assert "spent its reply thinking" in error and "gave no answer" in error
    assert "MASIS_OLLAMA_THINK=false" in error
    assert "Invalid json output" not in error
    assert {b["think"] for b in chats(fake)} == {True}


def test_gpt_oss_cannot_stop_thinking_so_it_is_asked_for_low(fake_ollama: FakeOllama) -> None:
    fake_ollama.state.models.append("gpt-oss:20b")
    settings = Settings(ollama_host=fake_ollama.url)
    assert chat_model(settings, model="gpt-oss:20b").invoke("hi").content == "{}"
    assert chat_model(settings.model_copy(update={"ollama_think": "high"})).invoke("hi")
    sent = [b["think"] for b in fake_ollama.requests_to("/api/chat")]
    assert sent == ["low", "high"]


# -- 2. cut-off JSON -----------------------------------------------------------------------
def test_a_reply_cut_at_the_length_limit_is_malformed_whatever_parsed(setup) -> None:
    """The JSON parser closes the brackets of a cut reply: it had become a valid draft."""
    research, fake = setup
    whole = draft((ANSWER, [1]), ("The technician checks the seals.", [1]))
    cut = {"content": whole[: whole.rindex("]}")], "done_reason": "length"}
    fake.state.default_reply = replies(cut, draft((ANSWER, [1])))  # type: ignore[arg-type]
    rec = ask(research)
    assert rec.status == "completed", rec.error
    synth = node(rec, "synthesizer")
    assert synth["model_calls"] == 2
    assert rec.answer == f"{ANSWER} [1]"
    draft_calls = [b for b in chats(fake) if b["format"]["title"] == "Draft"]
    assert len(draft_calls[1]["messages"]) == len(draft_calls[0]["messages"])  # not repeated


# -- 3. the prompt and the window ----------------------------------------------------------
def test_evidence_beyond_the_window_is_left_out_lowest_ranked_first_and_said(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    """Twenty 2,000-character passages overflow an 8,192-token window: the server had kept
    the first tokens and the end, losing the rules, the question and the best passages."""
    settings.ollama_host, settings.ollama_num_ctx = fake_ollama.url, 8192
    fake_ollama.state.default_reply = draft((ANSWER, [1]))
    result = OllamaEngine(settings).synthesize(QUESTION, passages(20, 2000), "documents first")
    assert result.error is None and not result.prompt_cut
    (note,) = result.notes
    assert "could not see all the evidence" in note
    kept = int(note.split(": ", 1)[1].split(" of ")[0])
    assert 0 < 20 - kept < 20 and f"from [{20 - kept + 1}]" in note
    (seen,) = fake_ollama.state.seen
    assert "You write" in seen[:200] or "<|system|>" in seen[:20]
    assert "[1] (f1.txt" in seen and f"[{20 - kept + 1}] (" not in seen
    assert seen.rstrip().endswith(f"The question again: {QUESTION}")
    # One passage longer than the window is cut short, and said so.
    (one,) = OllamaEngine(settings).synthesize(QUESTION, passages(1, 40000), "").notes
    assert "passage [1] cut short" in one
    assert fake_ollama.state.seen[-1].rstrip().endswith(QUESTION)


def test_a_prompt_the_server_cut_flags_the_run(setup, bench: Workbench) -> None:
    """Dense text (here 2 tokens a character) beats the 3-characters-a-token budget: the
    server cuts the prompt and ``prompt_eval_count`` shows it saw about half the window."""
    research, fake = setup
    bench.settings.ollama_num_ctx = 2048
    fake.state.chars_per_token = 0.5
    fake.state.default_reply = replies(draft((ANSWER, [1])))
    rec = ask(research)
    synth = node(rec, "synthesizer")
    assert synth["prompt_cut"] is True
    assert rec.metrics["prompt_cut"] is True  # the run is flagged, not only the step
    assert any("could not see all the evidence: it read 1,027 tokens" in n for n in synth["notes"])
    assert "The question again" in fake.state.seen[1] and "<|system|>" not in fake.state.seen[1]


# -- 4. OLLAMA_HOST without a scheme -------------------------------------------------------
def test_ollama_host_without_a_scheme_is_read_as_the_ollama_client_reads_it(
    settings: Settings, fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = fake_ollama.url.removeprefix("http://")
    monkeypatch.setenv("OLLAMA_HOST", bare)
    monkeypatch.setenv("MASIS_PROVIDER", "auto")
    get_settings.cache_clear()
    configured = get_settings()
    assert configured.ollama_host == fake_ollama.url
    assert resolve_provider(configured).mode == "ollama"
    assert probe(bare).reachable
    assert Settings(ollama_host="0.0.0.0:11434").ollama_host == "http://0.0.0.0:11434"


# -- 5. cold start, queue, timeouts --------------------------------------------------------
def test_the_model_is_loaded_first_kept_loaded_and_the_trace_says_so(setup) -> None:
    research, fake = setup
    fake.state.default_reply = replies(draft((ANSWER, [1])))
    events: list[tuple[str, dict]] = []
    rec = research.ask(
        "plant", QUESTION, engine="ollama", on_event=lambda kind, p: events.append((kind, p))
    )
    assert rec.status == "completed", rec.error
    said = [p.get("status") for kind, p in events if kind == "progress"]
    assert said.index("loading llama3.1:8b…") < said.index("planning")  # while it loads
    load, *rest = fake.requests_to("/api/chat")
    assert load["messages"] == [] and load["keep_alive"] == "30m"
    assert all(b["keep_alive"] == "30m" for b in rest)
    assert node(rec, "planner")["model_load"].startswith("loading llama3.1:8b…")


def test_timeouts_connect_short_read_long_and_keep_alive_as_set(fake_ollama: FakeOllama) -> None:
    settings = Settings(ollama_host=fake_ollama.url, ollama_keep_alive="-1")
    model = chat_model(settings)
    timeout = model._client._client.timeout
    assert (timeout.connect, timeout.read) == (5.0, 300.0)
    model.invoke("hi")
    assert fake_ollama.requests_to("/api/chat")[0]["keep_alive"] == -1  # a number: forever
    with pytest.raises(ValidationError, match="a duration such as 30m"):
        Settings(ollama_keep_alive="forever")  # Ollama would refuse it on every call


def test_a_full_queue_is_said_as_such(setup) -> None:
    research, fake = setup
    fake.state.busy = True
    rec = ask(research)
    assert rec.status == "failed"
    assert "Ollama server" in rec.error and "is busy (queue full)" in rec.error


def test_an_error_in_the_middle_of_the_stream_is_said_with_its_text(setup) -> None:
    research, fake = setup
    broken = {"content": '{"sent', "error": "an error was encountered while running the model"}
    fake.state.default_reply = scripted(
        {"StrategicPlan": [json.dumps(PLAN)], "Draft": [broken], "Review": [json.dumps(REVIEW_OK)]}  # type: ignore[list-item]
    )
    rec = ask(research)
    assert rec.status == "failed"
    assert "an error was encountered while running the model" in rec.error
    assert "HTTP -1" not in rec.error


# -- 6. embedding inputs -------------------------------------------------------------------
def test_long_embedding_inputs_are_cut_to_the_window_and_recorded(
    fake_ollama: FakeOllama,
) -> None:
    """A dense 4,000-character chunk is beyond nomic-embed-text's 2,048 tokens: Ollama
    0.13.5 to 0.15.6 refused the batch, so the whole file failed."""
    fake_ollama.state.embed_context, fake_ollama.state.dim = 2048, 768
    fake_ollama.state.chars_per_token = 1.0  # CJK: about a character a token
    embedder = OllamaEmbedder("nomic-embed-text", host=fake_ollama.url)
    texts = ["泵每运行五百小时检查一次。" * 300, "short note"]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (2, 768)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert embedder.cut == 1
    sent = fake_ollama.requests_to("/api/embed")[0]["input"]
    assert len(sent[0]) <= 1800 + len("search_document: ") < len(texts[0])
    assert sent[1] == "search_document: short note"


@pytest.mark.parametrize(
    ("model", "doc", "query"),
    [
        ("nomic-embed-text-v2-moe", "search_document: ", "search_query: "),
        ("embeddinggemma:300m", "title: none | text: ", "task: search result | query: "),
    ],
)
def test_newer_embedders_get_their_task_prefixes(
    fake_ollama: FakeOllama, model: str, doc: str, query: str
) -> None:
    fake_ollama.state.models.append(model)
    embedder = OllamaEmbedder(model, host=fake_ollama.url)
    embedder.embed_documents(["pump"])
    embedder.embed_query("which pump?")
    sent = [c["input"] for c in fake_ollama.requests_to("/api/embed")]
    assert sent == [[doc + "pump"], [query + "which pump?"]]


# -- 7. strict schemas ---------------------------------------------------------------------
def test_schemas_require_their_fields_and_a_citation(setup) -> None:
    research, fake = setup
    fake.state.default_reply = scripted(
        {
            "StrategicPlan": ["{}"],
            "Draft": [draft((ANSWER, [])), draft((ANSWER, [1]))],
            "Review": [json.dumps(REVIEW_OK)],
        }
    )
    rec = ask(research)
    assert "query expansion failed" in node(rec, "planner")["error"]
    assert node(rec, "synthesizer")["model_calls"] == 2  # an uncited sentence is repaired
    formats = {b["format"]["title"]: b["format"] for b in chats(fake)}
    assert set(formats["StrategicPlan"]["required"]) == set(PLAN)
    cited = formats["Draft"]["$defs"]["CitedSentence"]
    assert cited["required"] == ["text", "citations"]
    assert cited["properties"]["citations"]["minItems"] == 1
    review = formats["Review"]
    assert set(review["required"]) == set(REVIEW_OK)
    assert review["properties"]["confidence"]["maximum"] == 1.0


# -- 8. the model and its window -----------------------------------------------------------
def test_auto_mode_takes_an_installed_model_from_the_preference_list(setup, bench) -> None:
    research, fake = setup
    fake.state.models = ["gemma4:e4b", "qwen3.5:9b", "nomic-embed-text:latest"]
    bench.settings.provider = "auto"
    status = resolve_provider(bench.settings)
    assert (status.mode, status.label) == ("ollama", "Ollama · qwen3.5:9b")
    fake.state.default_reply = replies(draft((ANSWER, [1])))
    rec = ask(research)
    assert rec.status == "completed", rec.error
    assert {b["model"] for b in fake.requests_to("/api/chat")} == {"qwen3.5:9b"}
    # A model chosen by setting is the one used, installed or not.
    named = resolve_provider(bench.settings.model_copy(update={"chat_model": "llama3"}))
    assert named.mode == "offline" and "ollama pull llama3" in named.reason


def test_the_window_is_the_models_trained_one_within_the_memory_bound(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    """llama3.1's 128k window, within the 32k default bound; llama3's 8k, which Ollama
    clamps any larger ``num_ctx`` to (raising the setting had done nothing)."""
    settings.ollama_host = fake_ollama.url
    fake_ollama.state.default_reply = draft((ANSWER, [1]))
    cases = [(131072, None, 32768), (8192, None, 8192), (8192, 65536, 8192), (131072, 16384, 16384)]
    for trained, setting, window in cases:
        settings.ollama_num_ctx = setting
        fake_ollama.state.context_length = trained
        OllamaEngine(settings).synthesize(QUESTION, passages(1, 200), "")
        assert chats(fake_ollama)[-1]["options"]["num_ctx"] == window, (trained, setting)


def _trace_page() -> None:
    """A page drawing two synthesizer panels: one whose prompt the server cut, one whose
    answer was lost in the model's thinking."""
    from ui.trace import render_trace

    render_trace(
        [
            {
                "node": "synthesizer",
                "sentences": 1,
                "notes": ["the model could not see all the evidence: it read 1,027 tokens"],
                "prompt_cut": True,
            },
            {
                "node": "synthesizer",
                "sentences": 2,
                "error": "llama3.1:8b returned malformed Draft twice (last error: the model "
                "spent its reply thinking (80 characters of thoughts) and gave no answer)",
            },
        ]
    )


def test_the_page_says_what_the_model_could_not_see_and_an_answer_lost_in_thinking() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_trace_page).run()
    assert not at.exception
    assert [s.state for s in at.status] == ["error", "error"]
    (warning,) = at.warning
    assert "could not see all the evidence" in warning.value and "1,027 tokens" in warning.value
    assert "spent its reply thinking" in at.error[0].value


def test_a_file_of_dense_chunks_is_ingested_and_its_report_says_they_were_cut(
    bench: Workbench, fake_ollama: FakeOllama
) -> None:
    """Chinese has no spaces: a 200-word chunk runs to thousands of characters, beyond
    nomic-embed-text's window; the 400 had failed the whole file."""
    from ingest.pipeline import Ingestor

    bench.settings.ollama_host = fake_ollama.url
    fake_ollama.state.embed_context, fake_ollama.state.chars_per_token = 2048, 1.0
    ws = bench.create_workspace("cjk", "nomic-embed-text")
    text = "泵每运行五百小时检查一次，技术员检查密封件和安全阀。" * 150 + "\n\nshort closing note"
    report = Ingestor(bench).ingest_bytes(ws, text.encode(), "pump-zh.txt")
    assert report.status == "ingested", report.error
    assert any("embedded from their first ~1,800 tokens only" in n for n in report.notes)
