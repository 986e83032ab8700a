"""The keeper: one run per key, however many ask, in one process or across several."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gradient_lab.errors import ProgramError, Timeout
from gradient_lab.kept import Keeper, Reading, open_keeper
from gradient_lab.kept.store import StoreFailed

pytestmark = pytest.mark.anyio


class Job:
    """A run that counts its starts and yields its bodies when told to."""

    def __init__(self, bodies: list[bytes], error: Exception | None = None) -> None:
        self.bodies, self.error = bodies, error
        self.starts = 0
        self.go = asyncio.Event()
        self.cancelled = False

    async def __call__(self) -> AsyncIterator[bytes]:
        self.starts += 1
        try:
            await self.go.wait()
            for body in self.bodies:
                yield body
                await asyncio.sleep(0)
            if self.error is not None:
                raise self.error
        except asyncio.CancelledError:
            self.cancelled = True
            raise


def _open(keeper: Keeper, job: Job, key: str = "k", stream: bool = False) -> Reading:
    return keeper.open(key, job, lifetime=None, claim_seconds=30, stream=stream)


async def _all(reading: Reading) -> list[bytes]:
    return [body async for body in reading]


async def test_identical_requests_at_once_share_one_run(keeper: Keeper) -> None:
    job = Job([b"reply"])
    readings = [_open(keeper, job) for _ in range(50)]
    waiting = [asyncio.create_task(_all(r)) for r in readings]
    await asyncio.sleep(0.05)
    job.go.set()
    assert await asyncio.gather(*waiting) == [[b"reply"]] * 50
    assert job.starts == 1
    assert [r.outcome for r in readings] == ["ran"] + ["shared"] * 49


async def test_a_later_request_gets_the_kept_reply_without_a_run(keeper: Keeper) -> None:
    first = Job([b"reply"])
    first.go.set()
    assert await _all(_open(keeper, first)) == [b"reply"]
    later = Job([b"another"])
    reading = _open(keeper, later)
    assert await _all(reading) == [b"reply"]
    assert (later.starts, reading.outcome) == (0, "hit")


async def test_a_programs_own_error_is_kept_with_its_line_hint_and_partial(
        keeper: Keeper) -> None:
    error = ProgramError("RuntimeError: element 0", line=7, hint_key="hint.no_grad_fn")
    error.partial = {"nodes": [1, 2]}
    job = Job([], error)
    job.go.set()
    with pytest.raises(ProgramError):
        await _all(_open(keeper, job))
    with pytest.raises(ProgramError) as kept:
        await _all(_open(keeper, Job([b"never"])))
    assert (kept.value.message, kept.value.line, kept.value.hint_key, kept.value.partial) == \
        ("RuntimeError: element 0", 7, "hint.no_grad_fn", {"nodes": [1, 2]})


@pytest.mark.parametrize("error", [Timeout("the program ran longer than 5 s"),
                                   ProgramError("MemoryError", repeatable=False)],
                         ids=["timeout", "out-of-memory"])
async def test_an_error_that_would_not_come_again_is_shared_but_not_kept(
        keeper: Keeper, error: Exception) -> None:
    job = Job([], error)
    together = [asyncio.create_task(_all(_open(keeper, job))) for _ in range(3)]
    job.go.set()
    results = await asyncio.gather(*together, return_exceptions=True)
    assert all(result is error for result in results) and job.starts == 1
    again = Job([b"reply"])
    again.go.set()
    assert await _all(_open(keeper, again)) == [b"reply"] and again.starts == 1


async def test_a_stream_reaches_every_reader_as_it_comes(keeper: Keeper) -> None:
    job = Job([b"1", b"2", b"3"])
    reading = _open(keeper, job, stream=True)
    chunks = aiter(reading)
    job.go.set()
    assert await anext(chunks) == b"1"
    late = _open(keeper, job, stream=True)  # joins mid-stream: gets it from the start
    assert await _all(late) == [b"1", b"2", b"3"]
    assert [chunk async for chunk in chunks] == [b"2", b"3"]


async def test_a_stream_no_one_reads_any_more_is_stopped(keeper: Keeper) -> None:
    job = Job([b"1", b"2"])
    chunks = aiter(_open(keeper, job, stream=True))
    reading = asyncio.create_task(anext(chunks))
    await asyncio.sleep(0.05)
    reading.cancel()  # the client left before the first chunk
    await asyncio.gather(reading, return_exceptions=True)
    await chunks.aclose()
    await asyncio.sleep(0.05)
    assert job.cancelled
    fresh = Job([b"again"])
    fresh.go.set()
    assert await _all(_open(keeper, fresh, stream=True)) == [b"again"]


async def test_two_processes_sharing_a_store_run_a_key_once(kept_setting: str) -> None:
    if kept_setting == "memory":
        pytest.skip("memory is one process's own")
    async with open_keeper(kept_setting, 1 << 20) as one, \
            open_keeper(kept_setting, 1 << 20) as other:
        job = Job([b"1", b"2"])
        first = asyncio.create_task(_all(_open(one, job, stream=True)))
        await asyncio.sleep(0.1)  # the first process has claimed it
        follower = Job([b"never"])
        second = asyncio.create_task(_all(_open(other, follower, stream=True)))
        await asyncio.sleep(0.1)
        job.go.set()
        assert await first == await second == [b"1", b"2"]
        assert (job.starts, follower.starts) == (1, 0)


async def test_a_failing_store_still_answers_every_request() -> None:
    class Broken:
        async def read(self, *args: object) -> None:
            raise StoreFailed("disk full")

        claim = add = finish = drop = read

        async def aclose(self) -> None:
            pass

    keeper = Keeper(Broken())  # type: ignore[arg-type]
    job = Job([b"reply"])
    job.go.set()
    assert await _all(_open(keeper, job)) == [b"reply"]


async def test_the_rest_of_a_class_arriving_just_after_reads_the_reply_from_memory(
        keeper: Keeper) -> None:
    # Fifty screens following one move arrive over a second or so: the ones after the run
    # ends get its bytes from this process, not fifty reads of the store in a row.
    first = Job([b"reply"])
    first.go.set()
    assert await _all(_open(keeper, first)) == [b"reply"]
    reads = 0
    read = keeper.store.read

    async def counted(*args: object) -> object:
        nonlocal reads
        reads += 1
        return await read(*args)  # type: ignore[arg-type]

    keeper.store.read = counted  # type: ignore[method-assign]
    late = [_open(keeper, Job([b"another"])) for _ in range(20)]
    assert [await _all(r) for r in late] == [[b"reply"]] * 20
    assert reads == 0
    assert {r.outcome for r in late} == {"hit"}
