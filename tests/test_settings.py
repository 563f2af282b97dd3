from pathlib import Path

import pytest

from masis_core.config import Settings


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
