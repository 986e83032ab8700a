"""Class mode's fixtures: a real redis-server on a free port, each room store in turn, and the
app with only its rooms (no runner: nothing here runs a program)."""

from __future__ import annotations

import json
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
from tests.redis_server import flush, redis_url  # noqa: F401 - redis_url: a fixture

LIMITS = Limits(rooms=50, students=50, idle_seconds=600.0, message_bytes=4096)
ROOT = Path(__file__).resolve().parents[2]


def strings(lang: str) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(
        (ROOT / "static" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "redis"])
def store_setting(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """APP_ROOM_STORE for each backend: a fresh SQLite file, or Redis under a fresh database."""
    if request.param == "sqlite":
        return str(tmp_path / "rooms.sqlite3")
    url: str = request.getfixturevalue("redis_url")
    flush(url)
    return url


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
