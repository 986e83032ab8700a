"""Brakes on what one client does too often: guessing codes, starting rooms.

Counted per process and per client (gradient_lab/web/client.py says who that is: behind a
trusted proxy, the student's own address), in memory: a client spread over several processes
or replicas gets a few times the budget, which 40-bit codes and the room limit can afford.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict, deque
from collections.abc import Callable

from gradient_lab.rooms.errors import TooManyAttempts, TooManyRooms, TooManyStreams


class Window:
    """Events per client within the last `window` seconds; at most `clients` remembered."""

    def __init__(self, window: float, clients: int = 10_000) -> None:
        self.window = window
        self.clients = clients
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, client: str, limit: int, now: float) -> float | None:
        """Seconds until `client` is under `limit` again; None if it is now."""
        events = self._events.get(client)
        if events is None:
            return None
        while events and events[0] <= now - self.window:
            events.popleft()
        if len(events) < limit:
            return None
        return events[-limit] + self.window - now

    def add(self, client: str, limit: int, now: float) -> None:
        events = self._events.setdefault(client, deque())
        events.append(now)
        while len(events) > limit:
            events.popleft()
        self._events.move_to_end(client)
        if len(self._events) > self.clients:  # the least recent client goes first
            self._events.popitem(last=False)


class Attempts:
    """Codes that named no room: a client with `limit` misses in `window` s must wait.

    Only misses count, and only an anonymous lookup is refused: the room's teacher (its token)
    and its students (their ids) go on while the brake holds (gradient_lab/rooms/service.py).
    """

    def __init__(self, limit: int = 30, window: float = 60.0, addresses: int = 10_000) -> None:
        self.limit = limit
        self.misses = Window(window, addresses)

    def braked(self, client: str, now: float) -> TooManyAttempts | None:
        """The refusal while `client` has used up its misses for the window, else None."""
        wait = self.misses.wait(client, self.limit, now)
        if wait is None:
            return None
        return TooManyAttempts(
            f"{self.limit} room codes from this address named no room within "
            f"{self.misses.window:.0f} s; try again in {wait:.0f} s",
            hint_key="hint.room_too_many_attempts")

    def check(self, client: str, now: float) -> None:
        braked = self.braked(client, now)
        if braked is not None:
            raise braked

    def missed(self, client: str, now: float) -> None:
        self.misses.add(client, self.limit, now)


class Starts:
    """Rooms started by one client: `limit` an hour, so that no one takes every room."""

    def __init__(self, window: float = 3600.0, clients: int = 10_000) -> None:
        self.started = Window(window, clients)

    def check(self, client: str, limit: int, now: float) -> None:
        wait = self.started.wait(client, limit, now)
        if wait is not None:
            raise TooManyRooms(
                f"this address has started {limit} rooms within "
                f"{self.started.window / 60:.0f} minutes; try again in {math.ceil(wait / 60)} min",
                hint_key="hint.room_too_many_starts")

    def add(self, client: str, limit: int, now: float) -> None:
        self.started.add(client, limit, now)


class Streams:
    """Event streams open in this process: at most so many per client, and per room."""

    def __init__(self) -> None:
        self._clients: Counter[str] = Counter()
        self._rooms: Counter[str] = Counter()

    def open(self, client: str, room: str, per_client: int,
             per_room: int) -> Callable[[], None]:
        """Count one more stream, or raise TooManyStreams; the call that lets it go."""
        if self._clients[client] >= per_client:
            raise TooManyStreams(f"this address already follows {per_client} class streams",
                                 hint_key="hint.room_too_many_streams")
        if self._rooms[room] >= per_room:
            raise TooManyStreams(f"room {room} already has {per_room} screens following it",
                                 hint_key="hint.room_too_many_streams")
        self._clients[client] += 1
        self._rooms[room] += 1
        done = False

        def close() -> None:
            nonlocal done
            if not done:
                done = True
                for counts, key in ((self._clients, client), (self._rooms, room)):
                    counts[key] -= 1
                    if not counts[key]:
                        del counts[key]
        return close
