from pathlib import Path

import pytest

from masis_core.config import Settings, _problem, get_settings
from masis_core.errors import ConfigError
from tests.apptest import fresh_app
from tests.proc import run_module


def test_settings_read_the_documented_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "MASIS_DATA_DIR": "/srv/masis",
        "MASIS_PROVIDER": "ollama",
        "OLLAMA_HOST": "http://127.0.0.1:11500",
        "MASIS_CHAT_MODEL": "llama3.1",
        "MASIS_EMBED_MODEL": "nomic-embed-text",
        "MASIS_CHROMA_HOST": "127.0.0.1",
        "MASIS_CHROMA_PORT": "8010",
        "MASIS_RETRIEVAL_MODE": "dense",
        "TAVILY_API_KEY": "tvly-test",
        "MASIS_TAVILY_BASE_URL": "http://127.0.0.1:9999",
        "MASIS_MAX_UPLOAD_MB": "50",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    s = Settings()
    assert s.data_dir == Path("/srv/masis")
    assert s.db_path == Path("/srv/masis/masis.db")
    assert (s.provider, s.ollama_host, s.chat_model) == ("ollama", env["OLLAMA_HOST"], "llama3.1")
    assert (s.embed_model, s.chroma_host, s.chroma_port) == ("nomic-embed-text", "127.0.0.1", 8010)
    assert s.retrieval_mode == "dense"
    assert s.tavily_api_key.get_secret_value() == "tvly-test"
    assert (s.tavily_base_url, s.max_upload_mb) == ("http://127.0.0.1:9999", 50)


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASIS_PROVIDER", "openai")
    with pytest.raises(ValueError, match="provider"):
        Settings()


def test_a_bad_value_is_said_by_its_variable_not_by_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``MASIS_PROVIDER=Offline`` ended the CLI (and the page) in pydantic's traceback."""
    monkeypatch.setenv("MASIS_PROVIDER", "Offline")
    monkeypatch.setenv("MASIS_WEB_MAX_RESULTS", "99")
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigError) as raised:
            get_settings()
    finally:
        get_settings.cache_clear()
    said = str(raised.value)
    assert said.startswith("MASIS_PROVIDER='Offline': Input should be 'auto', 'ollama' or")
    assert "MASIS_WEB_MAX_RESULTS='99': Input should be less than or equal to 20" in said
    assert said.endswith("Correct or unset it and start again.")
    # A secret's value is not repeated; an alias is named as the user sets it.
    bad_url = {"loc": ("postgres_url",), "msg": "bad", "input": "postgresql://u:pw@h/db"}
    assert _problem(bad_url) == "MASIS_POSTGRES_URL: bad"
    assert _problem({"loc": ("ollama_host",), "msg": "bad", "input": 1}) == "OLLAMA_HOST=1: bad"
    # The command lines say it in one line and exit 2.
    for cmd in (["masis_core", "status"], ["ingest", "--workspace", "w", "--list"]):
        done = run_module(cmd, tmp_path, {"MASIS_WEB_MAX_RESULTS": "99"})
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: MASIS_WEB_MAX_RESULTS='99'"), done.stderr
        assert "Traceback" not in done.stderr


def test_the_page_says_a_bad_value_instead_of_a_traceback(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.setenv("MASIS_WEB_MAX_RESULTS", "99")
    get_settings.cache_clear()
    at = fresh_app().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "MASIS_WEB_MAX_RESULTS='99': Input should be less than or equal to 20. "
        "Correct or unset it and start again."
    ]
