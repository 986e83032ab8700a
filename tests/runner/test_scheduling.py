"""Who runs: a crowd waits in line instead of sharing the CPU, and quick programs never wait
behind long ones (issue 25 item 4, issue 26 item 1)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from gradient_lab import jobs
from gradient_lab.errors import AppError
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

S2 = EXAMPLES["S2"].program
LIMITS = Limits(wall_seconds=1.5, cpu_seconds=3.0)
SPIN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < {}:\n" \
       "    pass\nprint('done', {})\n"


def _pool(places: int) -> Pool:
    pool = Pool(PoolConfig(ready=2, jobs=places, long_jobs=16, memory_mb=LIMITS.memory_mb,
                           max_cpu_seconds=LIMITS.cpu_seconds))
    pool.start()
    return pool


@pytest.fixture(scope="module")
def one_place() -> Iterator[Pool]:
    pool = _pool(1)
    yield pool
    pool.close()


async def _run(pool: Pool, code: str, wall: float = LIMITS.wall_seconds) -> dict[str, object]:
    body = await pool.run(jobs.graph, wall_seconds=wall, cpu_seconds=LIMITS.cpu_seconds,
                          queue_seconds=30, strangers_code=True, code=code, device="cpu",
                          limits=LIMITS)
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_crowd_of_long_programs_each_meets_its_wall_limit() -> None:
    # Eight programs of 0.5 s of CPU at once on two places: 2 s of work for two cores. Shared
    # all at once, each would take about 2 s, past its 1.5 s limit; in line, each runs 0.5 s.
    pool = _pool(2)
    try:
        async def crowd() -> list[object]:
            return await asyncio.gather(*(_run(pool, SPIN.format(0.5, n)) for n in range(8)),
                                        return_exceptions=True)
        results = asyncio.run(crowd())
    finally:
        pool.close()
    failed = [r for r in results if isinstance(r, AppError)]
    assert failed == [], [f"{e.status} {e.message}" for e in failed]
    assert [r["stdout"] for r in results] == [f"done {n}\n" for n in range(8)]  # type: ignore[index]


@pytest.mark.parametrize("long", [
    "import time\ntime.sleep(2)\nprint('slept')\n",
    SPIN.format(1.2, "'spun'"),
], ids=["a-sleeper", "a-spinner"])
def test_a_quick_program_does_not_wait_behind_a_long_one(one_place: Pool, long: str) -> None:
    async def both() -> tuple[dict[str, object], float, dict[str, object]]:
        first = asyncio.create_task(_run(one_place, long, wall=5.0))
        await asyncio.sleep(0.3)  # the long one holds the only place
        start = time.monotonic()
        quick = await _run(one_place, S2)
        return quick, time.monotonic() - start, await first

    quick, seconds, slow = asyncio.run(both())
    assert quick["stdout"] == "tensor([42.])\ntensor([28.])\n"
    assert seconds < 1.0, seconds
    assert str(slow["stdout"]).strip() in ("slept", "done spun")


def test_a_waiting_program_gives_up_its_place_at_once() -> None:
    """A place is a core: one that sleeps leaves it idle, so it goes aside when found asleep,
    long before its wall-time slice (here made longer than the whole test) would move it."""
    pool = Pool(PoolConfig(ready=2, jobs=1, long_jobs=16, memory_mb=LIMITS.memory_mb,
                           max_cpu_seconds=LIMITS.cpu_seconds, slice_wall_seconds=60.0))
    pool.start()
    try:
        async def both() -> tuple[list[dict[str, object]], dict[str, object]]:
            sleeper = asyncio.create_task(_run(pool, "import time\ntime.sleep(3)\nprint('slept')\n",
                                               wall=5.0))
            await asyncio.sleep(0.3)  # the sleeper holds the only place
            quick = [await _run(pool, S2) for _ in range(3)]
            assert not sleeper.done()  # each quick one ran while the sleeper slept
            return quick, await sleeper

        quick, slept = asyncio.run(both())
    finally:
        pool.close()
    assert [q["stdout"] for q in quick] == ["tensor([42.])\ntensor([28.])\n"] * 3
    assert slept["stdout"] == "slept\n"


def test_a_spinner_starved_of_cpu_is_not_taken_for_asleep() -> None:
    import subprocess
    import sys

    from gradient_lab.runner.pool.pool import _usage

    sleeping = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    spinning = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)  # both started; the spinner runnable whether or not it has a core now
        assert _usage(sleeping.pid)[2] and not _usage(spinning.pid)[2]
    finally:
        for process in (sleeping, spinning):
            process.kill()
            process.wait()
