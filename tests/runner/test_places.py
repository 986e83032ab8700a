"""Places, on their own: who runs, who waits, and in what order places pass on."""

from __future__ import annotations

import asyncio
import time

import pytest

from gradient_lab.errors import Busy
from gradient_lab.runner.pool.places import Places, Ticket

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _busy() -> Busy:
    return Busy("all places stayed taken")


async def _enter(places: Places, ticket: Ticket, seconds: float = 5.0) -> None:
    await places.enter(ticket, time.monotonic() + seconds, _busy)


async def test_a_job_past_the_places_waits_in_line_and_gets_the_first_freed() -> None:
    places = Places(places=2, aside=4, memory_mb=1, budget_mb=100)
    first, second, third = Ticket(), Ticket(), Ticket()
    await _enter(places, first)
    await _enter(places, second)
    waiting = asyncio.create_task(_enter(places, third))
    await asyncio.sleep(0.01)
    assert not waiting.done() and places.crowded()
    places.leave(first)
    await asyncio.wait_for(waiting, 1)
    assert third.placed and places.counts()["running"] == 2


async def test_a_job_that_waits_too_long_is_told_the_server_is_busy() -> None:
    places = Places(places=1, aside=4, memory_mb=1, budget_mb=100)
    await _enter(places, Ticket())
    with pytest.raises(Busy):
        await _enter(places, Ticket(), seconds=0.05)
    assert places.counts() == {"running": 1, "aside": 0, "waiting": 0, "memory_mb": 1}


async def test_a_freed_place_goes_to_the_line_before_a_job_moved_aside() -> None:
    places = Places(places=1, aside=4, memory_mb=1, budget_mb=100)
    long, new = Ticket(), Ticket()
    resumed: list[str] = []
    await _enter(places, long)
    waiting = asyncio.create_task(_enter(places, new))
    await asyncio.sleep(0.01)
    assert places.step_aside(long, lambda: resumed.append("long"))
    await asyncio.wait_for(waiting, 1)  # the new job has the place; the long one waits
    assert (new.placed, long.aside, resumed) == (True, True, [])
    places.leave(new)  # no one in line: the long job continues
    assert (long.placed, long.aside, resumed) == (True, False, ["long"])


async def test_no_more_jobs_are_moved_aside_than_allowed() -> None:
    places = Places(places=2, aside=1, memory_mb=1, budget_mb=100)
    one, two = Ticket(), Ticket()
    await _enter(places, one)
    await _enter(places, two)
    waiting = [asyncio.create_task(_enter(places, Ticket())) for _ in range(2)]
    await asyncio.sleep(0.01)
    assert places.step_aside(one, lambda: None)
    assert not places.step_aside(two, lambda: None)  # it keeps its place
    assert places.counts() == {"running": 2, "aside": 1, "waiting": 1, "memory_mb": 3}
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)


async def test_a_job_waits_for_memory_even_where_a_place_is_free() -> None:
    places = Places(places=4, aside=4, memory_mb=40, budget_mb=100)
    one, two, three = Ticket(), Ticket(), Ticket()
    await _enter(places, one)
    await _enter(places, two)
    waiting = asyncio.create_task(_enter(places, three))
    await asyncio.sleep(0.01)
    assert not waiting.done() and places.counts()["memory_mb"] == 80
    places.leave(one)
    await asyncio.wait_for(waiting, 1)
    assert places.counts()["memory_mb"] == 80


async def test_a_place_handed_to_a_request_that_left_passes_on() -> None:
    places = Places(places=1, aside=4, memory_mb=1, budget_mb=100)
    holder, gone, next_ = Ticket(), Ticket(), Ticket()
    await _enter(places, holder)
    leaving = asyncio.create_task(_enter(places, gone))
    await asyncio.sleep(0.01)
    places.leave(holder)  # handed to `gone` ...
    leaving.cancel()  # ... as its client leaves
    await asyncio.gather(leaving, return_exceptions=True)
    await asyncio.wait_for(_enter(places, next_), 1)
    assert places.counts() == {"running": 1, "aside": 0, "waiting": 0, "memory_mb": 1}


async def test_a_freed_place_goes_to_the_client_holding_fewest_before_the_first_in_line() -> None:
    """One client keeping programs in flight does not take every place a student waits for."""
    places = Places(places=2, aside=4, memory_mb=1, budget_mb=100)
    held = [Ticket(client="busy"), Ticket(client="busy")]
    for ticket in held:
        await _enter(places, ticket)
    third, student = Ticket(client="busy"), Ticket(client="student")
    waiting = [asyncio.create_task(_enter(places, third))]
    await asyncio.sleep(0.01)  # the busy client's third is first in line
    waiting.append(asyncio.create_task(_enter(places, student)))
    await asyncio.sleep(0.01)
    places.leave(held[0])
    await asyncio.wait_for(waiting[1], 1)  # the student, who holds none, goes first
    assert (student.placed, third.placed) == (True, False)
    places.leave(held[1])
    await asyncio.wait_for(waiting[0], 1)  # then the busy client's, in its turn
    assert third.placed and places.counts()["running"] == 2
    places.leave(student)
    places.leave(third)
    assert places.counts() == {"running": 0, "aside": 0, "waiting": 0, "memory_mb": 0}
    assert not places._placed and not places._waiting  # nothing is left counted
