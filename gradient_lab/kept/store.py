"""The one interface to where kept replies live; memory.py (one process), sqlite.py (one
machine) and redis.py (replicas on several) implement it, and tests/kept/test_kept_store.py
holds all three to the same contract.

A key's life: one process claims it and runs the job, adding each body of the reply as it
comes (a stream has many), then finishes it (kept for a lifetime, or until evicted) or drops it
(a reply that would not come again: a time limit, a full queue). Other processes read what
has come so far, and claim the key themselves if its claim lapses unfinished. Every store is
bounded in bytes and evicts the finished entry used longest ago.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class StoreFailed(Exception):
    """The store could not be reached or written (a full disk, Redis gone): the keeper runs
    the job as if nothing were kept, rather than fail the request."""


@dataclass(frozen=True, slots=True)
class Entry:
    """What is kept under a key: the bodies from the one asked for, and how it ended."""

    bodies: tuple[bytes, ...]
    done: bool  # the reply is whole: `error` says whether it ended in one
    error: bytes | None = None  # the error's JSON (kept.py writes and reads it)
    claimed: bool = False  # unfinished and a live claim holds it: someone is running it


class KeptStore(Protocol):
    async def read(self, key: str, start: int, now: float) -> Entry | None:
        """The entry under `key` with its bodies from index `start`; None if there is none
        (never kept, evicted, expired, or dropped)."""

    async def claim(self, key: str, owner: str, now: float, seconds: float) -> bool:
        """Take the run of `key` until now + seconds; False while another's claim holds, or
        once the entry is finished."""

    async def add(self, key: str, owner: str, body: bytes, now: float) -> None:
        """One more body of the reply `owner` is running (ignored if it holds no claim)."""

    async def finish(self, key: str, owner: str, error: bytes | None, now: float,
                     lifetime: float | None) -> None:
        """The reply is whole: keep it until now + lifetime (None: until evicted)."""

    async def drop(self, key: str, owner: str) -> None:
        """Forget `owner`'s run of `key`: its claim and whatever it added."""

    async def aclose(self) -> None:
        """Let go of the connection."""
