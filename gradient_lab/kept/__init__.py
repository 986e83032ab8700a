"""Kept replies: one run per distinct request, however many screens ask for it.

A lab's reply is a function of its request (the program, the seed, the limits, the device,
the versions: keys.py hashes them all), so the Keeper keeps it under that key. Identical
requests that arrive while the first runs wait for it and get its bodies as they come (Go's
singleflight, per process; the store's claim, across processes and replicas); later ones get
the kept bodies. Only what the same request would give again is kept: a reply, or an error
the program itself raised, never a time limit, a full queue or a failed child.

    reading = keeper.open(key, run, lifetime=None, claim_seconds=20, stream=False)
    async for body in reading: ...      # raises the reply's AppError, if it ended in one
    reading.outcome                      # "ran", "shared" (joined a run) or "hit" (kept)
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import orjson

from gradient_lab.errors import ERRORS, AppError
from gradient_lab.kept.store import Entry, KeptStore, StoreFailed

_log = logging.getLogger(__name__)
# How often a process waiting on another's run looks again: soon at first (most lessons run
# in tens of ms), then less often, at most this often, for a long one.
_FIRST_POLL_SECONDS = 0.005
_POLL_SECONDS = 0.05
# A finished reply stays in this process's memory this long for the rest of a class arriving
# together (fifty reads of the store, one after another, cost more than the run of a quick one).
_LINGER_SECONDS = 2.0
T = TypeVar("T")
Run = Callable[[], AsyncIterator[bytes]]


@dataclass(eq=False, slots=True)
class _Flight:
    """One key's run (or read) in this process, which every local asker of the key reads."""

    stream: bool
    bodies: list[bytes] = field(default_factory=list)
    done: bool = False
    error: BaseException | None = None
    outcome: str = ""  # "ran" or "hit", once known
    readers: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def tell(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class Reading:
    """One request's view of its key's flight: its bodies in order, then its error."""

    def __init__(self, flight: _Flight, joined: bool, abandon: Callable[[], None],
                 counts: Counter[str]) -> None:
        self._flight = flight
        self._joined = joined
        self._finished = flight.done  # joined once it was whole: read from what is kept
        self._abandon = abandon
        self._counts = counts

    @property
    def outcome(self) -> str:
        if not self._joined:
            return self._flight.outcome
        return "hit" if self._flight.outcome == "hit" or self._finished else "shared"

    async def __aiter__(self) -> AsyncGenerator[bytes, None]:
        flight = self._flight
        flight.readers += 1
        try:
            sent = 0
            while True:
                while sent < len(flight.bodies):
                    sent += 1
                    yield flight.bodies[sent - 1]
                if flight.done:
                    if flight.error is not None:
                        raise flight.error
                    return
                await flight.changed.wait()
        finally:
            flight.readers -= 1
            self._counts[self.outcome or "failed"] += 1  # each request once, as it came
            # A stream nobody reads any more ends (its child is killed); a single reply runs
            # on, to be kept for whoever asks next.
            if flight.stream and flight.readers == 0 and not flight.done and flight.task:
                self._abandon()
                flight.task.cancel()


class Keeper:
    def __init__(self, store: KeptStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.counts: Counter[str] = Counter()  # requests by outcome, for /healthz, /metrics
        self._clock = clock
        self._owner = uuid.uuid4().hex  # this process, as the store's claims name it
        self._flights: dict[str, _Flight] = {}
        self._store_ok = True

    def flying(self, key: str) -> bool:
        """Whether a request for `key` now would join one already run or read here."""
        return key in self._flights

    def open(self, key: str, run: Run, *, lifetime: float | None, claim_seconds: float,
             stream: bool, landed: Callable[[], None] | None = None) -> Reading:
        """The reply under `key`: kept, in flight, or run now (run() yields its bodies).
        `lifetime`: how long it stays kept (None: until evicted); `claim_seconds`: the
        longest the run can take, past which another process may take it over; `landed`:
        called once a flight this call starts has its whole reply (or its error)."""
        flight = self._flights.get(key)
        joined = flight is not None
        if flight is None:
            flight = self._flights[key] = _Flight(stream)
            flight.task = asyncio.create_task(self._fly(key, flight, run, lifetime,
                                                        claim_seconds, landed))
        def abandon() -> None:  # a stream left by all: the next asker starts afresh
            if self._flights.get(key) is flight:
                del self._flights[key]

        return Reading(flight, joined, abandon, self.counts)

    async def aclose(self) -> None:
        for flight in list(self._flights.values()):
            if flight.task is not None:
                flight.task.cancel()
        await self.store.aclose()

    # --- one key's flight ----------------------------------------------------------------

    async def _fly(self, key: str, flight: _Flight, run: Run, lifetime: float | None,
                   claim_seconds: float, landed: Callable[[], None] | None) -> None:
        try:
            if await self._wait_or_claim(key, flight, claim_seconds):
                flight.outcome = "ran"
                await self._run(key, flight, run, lifetime)
            else:
                flight.outcome = "hit"
        except BaseException as error:  # noqa: BLE001 - every reader gets it, as one would
            flight.error = error
        finally:
            flight.done = True
            flight.tell()
            if landed is not None:
                landed()
            kept = flight.error is None or getattr(flight.error, "repeatable", False)
            if kept and not isinstance(flight.error, asyncio.CancelledError):
                await asyncio.sleep(min(_LINGER_SECONDS, lifetime or _LINGER_SECONDS))
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def _wait_or_claim(self, key: str, flight: _Flight, claim_seconds: float) -> bool:
        """True once this process holds the run; False when the kept reply is read whole."""
        poll = _FIRST_POLL_SECONDS
        while True:
            entry = await self._quietly(self.store.read(key, len(flight.bodies), self._clock()))
            if entry is not None:
                self._take(flight, entry)
                if entry.done:
                    return False
                if entry.claimed:  # another process runs it: look again soon
                    if entry.bodies:  # a stream that has moved on may move again as soon
                        poll = _FIRST_POLL_SECONDS
                    await asyncio.sleep(poll)
                    poll = min(2 * poll, _POLL_SECONDS)
                    continue
            claimed = await self._quietly(self.store.claim(key, self._owner, self._clock(),
                                                           claim_seconds))
            if claimed is not False:  # True, or None: the store is down, run it anyway
                return True

    def _take(self, flight: _Flight, entry: Entry) -> None:
        flight.bodies.extend(entry.bodies)
        if entry.done and entry.error is not None:
            flight.error = _error_of(entry.error)
        if entry.bodies or entry.done:
            flight.tell()

    async def _run(self, key: str, flight: _Flight, run: Run, lifetime: float | None) -> None:
        # Bodies already read from another process's unfinished run come again, the same
        # (a reply is a function of its request): they are kept, not sent twice.
        seen = len(flight.bodies)
        index = 0
        try:
            async for body in run():
                if index >= seen:
                    flight.bodies.append(body)
                    flight.tell()
                index += 1
                await self._quietly(self.store.add(key, self._owner, body, self._clock()))
        except AppError as error:
            if not error.repeatable:
                await self._quietly(self.store.drop(key, self._owner))
                raise
            await self._quietly(self.store.finish(key, self._owner, _plain(error),
                                                  self._clock(), lifetime))
            raise
        except BaseException:
            await self._quietly(self.store.drop(key, self._owner))
            raise
        await self._quietly(self.store.finish(key, self._owner, None, self._clock(), lifetime))

    async def _quietly(self, call: Awaitable[T]) -> T | None:
        """A store call, or None when the store fails: the request is answered anyway."""
        try:
            result = await call
        except StoreFailed as error:
            if self._store_ok:
                _log.warning("kept replies unavailable, running every request: %s", error)
            self._store_ok = False
            return None
        self._store_ok = True
        return result


@asynccontextmanager
async def open_keeper(setting: str, max_bytes: int) -> AsyncIterator[Keeper]:
    """The keeper of APP_KEPT_STORE: `memory`, a redis:// URL, or else a SQLite file's path."""
    store: KeptStore
    if setting == "memory":
        from gradient_lab.kept.memory import MemoryStore

        store = MemoryStore(max_bytes)
    elif setting.startswith(("redis://", "rediss://", "unix://")):
        from gradient_lab.kept.redis import RedisStore

        store = RedisStore(setting, max_bytes)
    else:
        from gradient_lab.kept.sqlite import SqliteStore

        store = SqliteStore(setting, max_bytes)
    keeper = Keeper(store)
    try:
        yield keeper
    finally:
        await keeper.aclose()


def _plain(error: AppError) -> bytes:
    return orjson.dumps({**error.to_plain(), "partial": error.partial})


def _error_of(text: bytes) -> AppError:
    """An error kept by this server (or a replica): of a kind that travels in frames."""
    plain = json.loads(text)
    error = ERRORS[plain["type"]](plain["message"], line=plain["line"],
                                  hint_key=plain["hint_key"])
    error.partial = plain["partial"]
    return error
