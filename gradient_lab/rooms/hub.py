"""One per server process: it watches the store for the rooms this process's screens follow,
and hands each change to them.

One poll of the store per tick for every watched room together, however many screens watch:
a change made by any process (or replica) reaches every screen within a tick, plus one read
of the room. Each screen keeps only the latest snapshot, so a slow one skips to the newest
state instead of queueing stale ones.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from gradient_lab.errors import AppError
from gradient_lab.rooms.errors import RoomEnded, room_not_found
from gradient_lab.rooms.model import Stamp
from gradient_lab.rooms.store import RoomStore
from gradient_lab.rooms.views import crowd_view, room_view

logger = logging.getLogger(__name__)

TICK = 0.1  # seconds between polls: the delay a change made by another process may add


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A room as its screens are sent it, rendered once per change for all of them."""

    stamp: Stamp
    room: bytes
    crowd: bytes
    crowd_teacher: bytes


class Watcher:
    """One screen's view of a room: the latest snapshot, and whether the room has ended."""

    def __init__(self, hub: Hub, code: str, snapshot: Snapshot) -> None:
        self.hub = hub
        self.code = code
        self.latest = snapshot
        self.ended = False
        self.on_close: Callable[[], None] | None = None  # the stream caps' (guard.py)
        self._changed = asyncio.Event()
        self._changed.set()  # the first wait returns the room as it is now

    async def next(self, timeout: float) -> Snapshot | None:
        """The latest snapshot once it changes (or the room ends); None after `timeout` s."""
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return None
        self._changed.clear()
        return self.latest

    def close(self) -> None:
        self.hub._drop(self)
        if self.on_close is not None:
            self.on_close()
            self.on_close = None

    def _push(self, snapshot: Snapshot | None) -> None:
        if snapshot is None:
            self.ended = True
        else:
            self.latest = snapshot
        self._changed.set()


class Hub:
    def __init__(self, store: RoomStore, tick: float = TICK,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.tick = tick
        self.clock = clock
        self._watchers: dict[str, set[Watcher]] = {}
        self._latest: dict[str, Snapshot] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    async def watch(self, code: str) -> Watcher:
        """A new screen on room `code`. Raises RoomNotFound, RoomEnded."""
        snapshot = self._latest.get(code) or await self._load(code)
        if snapshot is None:
            raise room_not_found(code)
        watcher = Watcher(self, code, self._latest.setdefault(code, snapshot))
        self._watchers.setdefault(code, set()).add(watcher)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._poll(), name="rooms-hub")
        return watcher

    def counts(self) -> dict[str, int]:
        """The rooms this process's screens follow, those screens, and the rooms' students
        (/metrics): a replica counts what it serves."""
        students = sum(json.loads(snapshot.crowd)["students"] for snapshot in
                       list(self._latest.values()))
        return {"rooms": len(self._watchers),
                "screens": sum(len(watchers) for watchers in list(self._watchers.values())),
                "students": students}

    def nudge(self) -> None:
        """Poll now: this process has just changed a room."""
        self._wake.set()

    async def aclose(self) -> None:
        for watchers in list(self._watchers.values()):
            for watcher in watchers:
                watcher._push(None)
        self._watchers.clear()
        self._latest.clear()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _drop(self, watcher: Watcher) -> None:
        watchers = self._watchers.get(watcher.code, set())
        watchers.discard(watcher)
        if not watchers:
            self._watchers.pop(watcher.code, None)
            self._latest.pop(watcher.code, None)

    async def _poll(self) -> None:
        while self._watchers:
            try:
                await asyncio.wait_for(self._wake.wait(), self.tick)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._refresh()
            except AppError as error:  # the store is down: screens keep what they have
                logger.warning("rooms: %s", error.message)
                await asyncio.sleep(1.0)
            except Exception:  # a bug must not stop every screen of this process for good
                logger.exception("rooms: polling the store failed")
                await asyncio.sleep(1.0)

    async def _refresh(self) -> None:
        codes = list(self._watchers)
        stamps = await self.store.stamps(codes, self.clock())
        for code in codes:
            latest = self._latest.get(code)
            stamp = stamps.get(code)
            if latest is None or stamp == latest.stamp:
                continue
            try:
                snapshot = None if stamp is None else await self._load(code)
            except RoomEnded:  # between the two reads
                snapshot = None
            except AppError:
                raise  # the store is down: for every room alike
            except Exception:  # this room's bug: the rooms after it are still refreshed
                logger.exception("rooms: reading room %s failed", code)
                continue
            for watcher in list(self._watchers.get(code, ())):
                watcher._push(snapshot)
            if snapshot is None:  # ended or expired: its screens are told, and let go
                self._watchers.pop(code, None)
                self._latest.pop(code, None)
            elif code in self._watchers:
                self._latest[code] = snapshot

    async def _load(self, code: str) -> Snapshot | None:
        room = await self.store.get(code, self.clock())
        if room is None:
            return None
        try:
            crowds = crowd_view(room, teacher=False), crowd_view(room, teacher=True)
        except Exception:  # a tally this code cannot draw: the room goes on without it
            logger.exception("rooms: the tally of room %s failed", code)
            untallied = replace(room, question=None)
            crowds = crowd_view(untallied, teacher=False), crowd_view(untallied, teacher=True)
        return Snapshot((room.version, room.crowd), _json(room_view(room)),
                        _json(crowds[0]), _json(crowds[1]))


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
