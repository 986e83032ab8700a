"""Waiting, on any event loop, for what another thread hands over: a child, a place.

The pool is awaited from whichever loop a request runs on (uvicorn's, a TestClient's), and
hands things over from its zygote's reader thread or from another loop: a `Waiter` is woken
on its own loop. `wait` bounds the wait and makes sure nothing handed over is lost when the
waiter gives up at the same moment.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Waiter(Generic[T]):
    """A caller waiting, on its own event loop, for what another thread hands over."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[T] = self.loop.create_future()

    def give(self, value: T) -> None:
        self.loop.call_soon_threadsafe(_settle, self.future, value)

    def fail(self, error: BaseException) -> None:
        self.loop.call_soon_threadsafe(_fail, self.future, error)


async def wait(waiter: Waiter[T], queue: deque[Waiter[T]], lock: threading.Lock,
               deadline: float, give_back: Callable[[T], None],
               too_late: Callable[[], BaseException]) -> T:
    """What is handed to `waiter` (queued in `queue` under `lock`) by `deadline` (monotonic),
    else too_late() is raised. Handed over as the wait ended (or was cancelled: the client
    left), it is still taken, or given back."""
    try:
        await asyncio.wait([waiter.future], timeout=max(0.0, deadline - time.monotonic()))
    except asyncio.CancelledError:
        with lock:
            handed = waiter not in queue
            if not handed:
                queue.remove(waiter)
        if handed:
            waiter.future.add_done_callback(partial(_give_back, give_back))
        raise
    if not waiter.future.done():
        with lock:
            if waiter in queue:
                queue.remove(waiter)
                raise too_late()
    return await waiter.future  # handed over: settled at once on this loop


def _settle(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


def _give_back(give_back: Callable[[T], None], handed: asyncio.Future[T]) -> None:
    """What reached a caller that had stopped waiting goes back where it came from."""
    if handed.exception() is None:
        give_back(handed.result())
