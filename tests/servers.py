"""Real database and vector servers for the server-mode tests: Debian's PostgreSQL and
``chroma run``, each on a free loopback port and a temporary directory.

PostgreSQL starts once per session (about 2 s) and gives every test its own database; it
refuses to run as root, so as root it runs as the ``postgres`` user (``runuser``) on a
directory that user owns. A test that needs a server skips, with the reason, when the binaries
are absent; CI installs them (``.ci/run``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from masis_core.db import close_database
from tests.browser import free_port
from tests.test_faults import CHROMA, ChromaServer

PG_BINS = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: p.parts[-3])


def postgres_missing() -> str | None:
    """Why PostgreSQL cannot start here, or None."""
    if not PG_BINS:
        return "PostgreSQL's server is not installed (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root without runuser to start PostgreSQL as 'postgres'"
    return None


class PostgresServer:
    """``initdb`` + ``pg_ctl`` on a temporary directory; trust authentication on 127.0.0.1."""

    def __init__(self) -> None:
        self.bin = PG_BINS[-1].parent  # the newest installed major version
        self.root = Path(tempfile.mkdtemp(prefix="masis-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)

    def _run(self, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        done = subprocess.run(
            [*prefix, *args], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            log = self.root / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}{tail}")

    def start(self) -> None:
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off"
        )
        log = str(self.root / "log")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", log, "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = postgres_missing()
    if reason:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database of the session's server, dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres_server.admin(f"CREATE DATABASE {name}")
    url = postgres_server.url(name)
    yield url
    close_database(url)
    postgres_server.admin(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One Chroma server for the session (the tests use their own workspace names)."""
    if CHROMA is None:
        pytest.skip("the chroma command (installed with chromadb) is missing")
    root = tmp_path_factory.mktemp("chroma-server")
    server = ChromaServer(root / "data", free_port(), root / "chroma.log")
    server.start()
    yield server
    server.stop()
