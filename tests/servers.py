"""Real database and vector servers for the server-mode tests: Debian's PostgreSQL and
``chroma run``, each on a free loopback port and a temporary directory.

PostgreSQL starts once per session (about 2 s) and gives every test its own database; it
refuses to run as root, so as root it runs as the ``postgres`` user (``runuser``) on a
directory that user owns. A test that needs a server skips, with the reason, when the binaries
are absent; CI installs them (``.ci/run``).

Neither outlives the test process, even one killed with SIGKILL: Chroma's server asks the
kernel for SIGKILL when its parent dies; PostgreSQL, which ``pg_ctl`` detaches, has a small
watchdog process that stops it and removes its directory when the pipe from the tests closes.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.isolate import die_with_parent
from masis_core.storage.db import close_database
from tests.browser import free_port

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


def chroma_command() -> str | None:
    """The ``chroma`` installed beside this Python first: ``.venv/bin/python -m pytest`` runs
    without the venv on PATH, and the command is still right there."""
    return shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")


CHROMA = chroma_command()


class ChromaServer:
    """``chroma run`` on a directory and a loopback port; killed with the test process."""

    def __init__(self, path: Path, port: int, log: Path) -> None:
        self.path, self.port, self.log = path, port, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        assert CHROMA is not None
        parent = os.getpid()
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [CHROMA, "run", "--host", "127.0.0.1", "--port", str(self.port),
                 "--path", str(self.path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=lambda: die_with_parent(parent),  # noqa: PLW1509 (no threads yet)
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while not self.healthy():  # readiness poll, bounded; not a timing assertion
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chroma did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.2)

    def healthy(self) -> bool:
        try:
            url = f"http://127.0.0.1:{self.port}/api/v2/heartbeat"
            with urllib.request.urlopen(url, timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


# Run beside PostgreSQL: waits for a line on stdin; EOF (the tests died) or anything but
# "done" stops the server at once and removes its directory (argv: the stop command, then the
# directory).
WATCHDOG = """
import shutil, subprocess, sys
if sys.stdin.readline().strip() != "done":
    subprocess.run(sys.argv[1:-1], capture_output=True, timeout=60)
    shutil.rmtree(sys.argv[-1], ignore_errors=True)
"""


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

    def _as_postgres(self, *args: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if self.as_root else list(args)

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            self._as_postgres(*args), capture_output=True, text=True, timeout=120, check=False
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
        # Its own session: a signal to the tests' process group must not stop it before it
        # has stopped the server.
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG,
             *self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m",
                                "immediate", "-w", "stop"),
             str(self.root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", log, "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.watchdog.communicate(b"done\n", timeout=30)

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


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    """A Chroma server of the test's own (the fault tests stop and restart it)."""
    if CHROMA is None:
        pytest.fail("the chroma command (installed with chromadb) is missing", pytrace=False)
    server = ChromaServer(tmp_path / "chroma-server", free_port(), tmp_path / "chroma.log")
    server.start()
    yield server
    server.stop()


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
