"""Shared fixtures: a loopback-only network guard, isolated settings, a real Workbench."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from masis_core.config import Settings, get_settings
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench
from tests.fake_ollama import FakeOllama
from tests.pdfs import make_pdf
from tests.texts import BOILER, BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, PUMP

pytest_plugins = ["tests.servers"]  # postgres_server, postgres_url, chroma_server

FIXTURES = Path(__file__).parent / "fixtures"
# A port nothing listens on: "Ollama is down" without leaving loopback.
DEAD_HOST = "http://127.0.0.1:9"


class NetworkBlocked(AssertionError):
    pass


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and the like never leave the machine
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", maxsplit=1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that opens a connection to anything but this machine."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            raise NetworkBlocked(f"test tried to reach {address!r}; only loopback is allowed")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        if not _is_loopback(address):
            raise NetworkBlocked(f"test tried to reach {address!r}; only loopback is allowed")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The database a store test runs against: a test (or module, through
    ``pytest.mark.usefixtures("backend")``) that asks for it runs once on each; ``settings``
    then points at a fresh PostgreSQL database for the second."""
    return str(request.param)


@pytest.fixture
def settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Settings]:
    """Offline settings on a private data dir, also visible to code that reads the env."""
    for key in (
        "MASIS_CHROMA_HOST",
        "TAVILY_API_KEY",
        "MASIS_EMBED_MODEL",
        "MASIS_PROVIDER",
        "MASIS_POSTGRES_URL",
        "MASIS_AUTH",
        "MASIS_ALLOW_OPEN",
        "MASIS_TOKEN",
        "MASIS_PASSWORD",
    ):
        monkeypatch.delenv(key, raising=False)
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "postgres":
        monkeypatch.setenv("MASIS_POSTGRES_URL", request.getfixturevalue("postgres_url"))
    monkeypatch.setenv("MASIS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MASIS_PROVIDER", "offline")
    monkeypatch.setenv("OLLAMA_HOST", DEAD_HOST)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.fixture
def bench(settings: Settings) -> Workbench:
    return Workbench(settings)


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as fake:
        yield fake


@pytest.fixture
def boiler_log(bench: Workbench) -> Workspace:
    """Two notes whose offline answer to ``BOILER_LOG_QUESTION`` pauses on a lead that answers
    half of it, the other half in its "Also relevant" passage."""
    from ingest.pipeline import Ingestor

    ws = bench.create_workspace("plant", "wordllama")
    ingestor = Ingestor(bench)
    ingestor.ingest_bytes(ws, BOILER_LOG_PLACE.encode(), "office.txt")
    ingestor.ingest_bytes(ws, BOILER_LOG_ENTRIES.encode(), "log.txt")
    return ws


@pytest.fixture
def plant(bench: Workbench) -> Workspace:
    """A workspace holding one two-page PDF: the boiler page, then the pump page."""
    from ingest.pipeline import Ingestor

    ws = bench.create_workspace("plant", "wordllama")
    report = Ingestor(bench).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "plant.pdf")
    assert report.status == "ingested"
    return ws


NUT_FAQ = Path(__file__).parent / "fixtures" / "nut-faq.pdf"


@pytest.fixture(scope="module")
def nut_faq(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workbench, str]:
    """The NUT FAQ (an outline entry per question) ingested once per module: tests only read
    it."""
    from ingest.pipeline import Ingestor

    bench = Workbench(Settings.local(tmp_path_factory.mktemp("nut"), provider="offline"))
    ws = bench.create_workspace("nut", "wordllama")
    assert Ingestor(bench).ingest_path(ws, NUT_FAQ).status == "ingested"
    return bench, ws.id
