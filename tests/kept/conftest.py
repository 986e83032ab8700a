"""Each kept-replies store in turn: memory, a fresh SQLite file, Redis under a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gradient_lab.kept import Keeper, open_keeper
from tests.redis_server import flush, redis_url  # noqa: F401 - redis_url: a fixture

MAX_BYTES = 10_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite", "redis"])
def kept_setting(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """APP_KEPT_STORE for each backend."""
    if request.param == "memory":
        return "memory"
    if request.param == "sqlite":
        return str(tmp_path / "kept.sqlite3")
    url: str = request.getfixturevalue("redis_url")
    flush(url)
    return url


@pytest.fixture
async def keeper(kept_setting: str) -> AsyncIterator[Keeper]:
    async with open_keeper(kept_setting, MAX_BYTES) as keeper:
        yield keeper
