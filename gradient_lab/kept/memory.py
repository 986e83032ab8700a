"""Kept replies in this process's memory (APP_KEPT_STORE=memory): no sharing, no files."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from gradient_lab.kept.store import Entry


@dataclass(slots=True)
class _Item:
    owner: str
    claimed_until: float
    bodies: list[bytes] = field(default_factory=list)
    size: int = 0
    done: bool = False
    error: bytes | None = None
    expires: float = float("inf")


class MemoryStore:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, _Item] = OrderedDict()  # least recently used first
        self._bytes = 0

    async def read(self, key: str, start: int, now: float) -> Entry | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item.done and item.expires <= now:
            self._forget(key)
            return None
        if item.done:
            self._items.move_to_end(key)
        return Entry(tuple(item.bodies[start:]), item.done, item.error,
                     claimed=not item.done and item.claimed_until > now)

    async def claim(self, key: str, owner: str, now: float, seconds: float) -> bool:
        item = self._items.get(key)
        if item is not None and item.done and item.expires > now:
            return False
        if item is not None and not item.done and item.claimed_until > now:
            return False
        self._forget(key)
        self._items[key] = _Item(owner, now + seconds)
        return True

    async def add(self, key: str, owner: str, body: bytes, now: float) -> None:
        item = self._items.get(key)
        if item is None or item.owner != owner or item.done:
            return
        item.bodies.append(body)
        item.size += len(body)
        self._bytes += len(body)
        self._evict()

    async def finish(self, key: str, owner: str, error: bytes | None, now: float,
                     lifetime: float | None) -> None:
        item = self._items.get(key)
        if item is None or item.owner != owner or item.done:
            return
        if item.size + len(error or b"") > self.max_bytes:
            self._forget(key)  # larger than the whole store: not kept
            return
        item.done, item.error = True, error
        item.size += len(error or b"")
        self._bytes += len(error or b"")
        item.expires = float("inf") if lifetime is None else now + lifetime
        self._items.move_to_end(key)
        self._evict()

    async def drop(self, key: str, owner: str) -> None:
        item = self._items.get(key)
        if item is not None and item.owner == owner and not item.done:
            self._forget(key)

    async def aclose(self) -> None:
        self._items.clear()
        self._bytes = 0

    def _forget(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self._bytes -= item.size

    def _evict(self) -> None:
        """Finished entries go, least recently used first, until all fit."""
        for key in [key for key, item in self._items.items() if item.done]:
            if self._bytes <= self.max_bytes:
                return
            self._forget(key)
