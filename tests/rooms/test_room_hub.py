"""The hub: one poller per process hands each change, wherever it was made, to every screen."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable

import pytest

from gradient_lab.rooms.codes import token_hash
from gradient_lab.rooms.errors import RoomEnded
from gradient_lab.rooms.hub import Hub
from gradient_lab.rooms.model import Lead, Stamp
from gradient_lab.rooms.service import open_rooms
from gradient_lab.rooms.store import RoomStore
from tests.rooms.conftest import LIMITS

pytestmark = pytest.mark.anyio

CODE = "K7MXQ2PD"
TOKEN = token_hash("token")


class CountingStore:
    """A store whose stamps() calls are counted: the hub's polls."""

    def __init__(self, store: RoomStore) -> None:
        self.store = store
        self.polls = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def stamps(self, codes: Iterable[str], now: float) -> dict[str, Stamp]:
        self.polls += 1
        return await self.store.stamps(codes, now)


async def _next_address(watcher: object, timeout: float = 2.0) -> str:
    snapshot = await watcher.next(timeout)  # type: ignore[attr-defined]
    assert snapshot is not None, "no change arrived"
    return str(json.loads(snapshot.room)["address"])


async def test_a_change_made_by_another_process_reaches_a_watcher_within_a_tick(
        store_setting: str) -> None:
    async with open_rooms(store_setting) as here, open_rooms(store_setting) as there:
        assert await here.store.create(CODE, TOKEN, time.time(), LIMITS)
        watcher = await there.hub.watch(CODE)
        assert await _next_address(watcher) == ""  # the room as it is, at once
        start = time.monotonic()
        await here.store.lead(CODE, TOKEN, Lead(address="/descent"), time.time(), LIMITS)
        assert await _next_address(watcher) == "/descent"
        assert time.monotonic() - start < 0.5
        watcher.close()


async def test_one_poll_serves_every_screen(store_setting: str) -> None:
    async with open_rooms(store_setting) as rooms:
        counting = CountingStore(rooms.store)
        hub = Hub(counting, tick=0.1)  # type: ignore[arg-type]
        assert await rooms.store.create(CODE, TOKEN, time.time(), LIMITS)
        watchers = [await hub.watch(CODE) for _ in range(200)]
        await asyncio.sleep(1.0)
        assert 5 <= counting.polls <= 15  # about one a tick, not one per screen
        for watcher in watchers:
            watcher.close()
        await asyncio.sleep(0.3)
        idle = counting.polls
        await asyncio.sleep(0.5)
        assert counting.polls == idle  # no one watches: no polling
        await hub.aclose()


async def test_an_ended_room_ends_its_screens(store_setting: str) -> None:
    async with open_rooms(store_setting) as rooms:
        assert await rooms.store.create(CODE, TOKEN, time.time(), LIMITS)
        watcher = await rooms.hub.watch(CODE)
        await watcher.next(1.0)
        await rooms.store.lead(CODE, TOKEN, Lead(end=True), time.time(), LIMITS)
        rooms.hub.nudge()
        await watcher.next(2.0)
        assert watcher.ended
        with pytest.raises(RoomEnded):  # a screen that comes later is told so too
            await rooms.hub.watch(CODE)


async def test_a_screen_that_falls_behind_gets_the_latest_state_not_a_backlog(
        store_setting: str) -> None:
    async with open_rooms(store_setting) as rooms:
        assert await rooms.store.create(CODE, TOKEN, time.time(), LIMITS)
        watcher = await rooms.hub.watch(CODE)
        await watcher.next(1.0)
        for step in range(5):
            await rooms.store.lead(CODE, TOKEN, Lead(address=f"/#step={step}"), time.time(),
                                   LIMITS)
            await asyncio.sleep(0.15)
        # The screen reads only now: it skips to the newest state (one older one at most, if
        # the store's tick has not yet seen the last lead on a busy machine), never a backlog.
        skipped = []
        while (address := await _next_address(watcher)) != "/#step=4":
            skipped.append(address)
        assert len(skipped) <= 1, skipped
        assert await watcher.next(0.3) is None  # nothing queued behind it
