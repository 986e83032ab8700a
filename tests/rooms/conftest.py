"""Class mode's fixtures: a real redis-server on a free port, each room store in turn, and the
app with only its rooms (no runner: nothing here runs a program)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from gradient_lab.main import create_app
from gradient_lab.rooms.model import Limits
from gradient_lab.rooms.service import open_rooms
from gradient_lab.rooms.store import RoomStore
from gradient_lab.settings import Settings, get_settings

LIMITS = Limits(rooms=50, students=50, idle_seconds=600.0, message_bytes=4096)
ROOT = Path(__file__).resolve().parents[2]


def strings(lang: str) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(
        (ROOT / "static" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return loaded


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server_binary() -> str | None:
    for candidate in (os.environ.get("REDIS_SERVER"), "/usr/bin/redis-server",
                      shutil.which("redis-server")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class RedisServer:
    """Debian's redis-server on a loopback port, in memory only, for one test session."""

    def __init__(self) -> None:
        binary = redis_server_binary()
        if binary is None:
            pytest.skip("REDIS TESTS NOT RUN: no redis-server at /usr/bin/redis-server or on "
                        "PATH (apt-get install redis-server; scripts/test.sh does this when it "
                        "can)")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no"],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self._log.seek(0)
        self.stop()
        pytest.fail(f"redis-server did not start: {self._log.read().decode(errors='replace')}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self._log.close()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    server = RedisServer()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "redis"])
def store_setting(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """APP_ROOM_STORE for each backend: a fresh SQLite file, or Redis under a fresh database."""
    if request.param == "sqlite":
        return str(tmp_path / "rooms.sqlite3")
    url: str = request.getfixturevalue("redis_url")
    _flush(url)
    return url


def _flush(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(16).startswith(b"+OK")


@pytest.fixture
async def store(store_setting: str) -> AsyncIterator[RoomStore]:
    async with open_rooms(store_setting) as rooms:
        yield rooms.store


def rooms_only(setting: str) -> Callable[[FastAPI], object]:
    """A lifespan with the rooms and no runner: the rooms' routes need nothing else."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_rooms(setting) as app.state.rooms:
            yield
    return lifespan


def rooms_app(setting: str, **settings: object) -> FastAPI:
    app = create_app()
    app.router.lifespan_context = rooms_only(setting)  # type: ignore[assignment]
    tight = Settings(**settings)  # type: ignore[arg-type]

    async def overridden() -> Settings:
        return tight

    app.dependency_overrides[get_settings] = overridden
    return app


@pytest.fixture
def client_for(store_setting: str) -> Iterator[Callable[..., TestClient]]:
    """client_for(**settings): a TestClient on the rooms app with those settings."""
    clients: list[TestClient] = []

    def make(**settings: object) -> TestClient:
        client = TestClient(rooms_app(store_setting, **settings))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
