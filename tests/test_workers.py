"""WorkerPool: jobs come back, limits end a job with the right error, and the pool refills."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import cast
from unittest.mock import patch

import pytest
import torch

from app.errors import Busy, Disallowed, ProgramError, Timeout, TooLarge
from app.sandbox.worker_handle import Worker
from app.sandbox.workers import WorkerPool

# `tests` has no __init__.py, so this is a namespace package: it imports from the repo root, which
# is the forkserver's working directory and on the workers' sys.path.
JOBS = "tests.pool_jobs"
ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _started(size: int, **options: object) -> Iterator[WorkerPool]:
    pool = WorkerPool(size, memory_mb=512, preload=("torch", JOBS), **options)  # type: ignore[arg-type]
    pool.start()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with _started(2) as started:
        yield started


@pytest.fixture(scope="module")
def solo() -> Iterator[WorkerPool]:
    """One worker, so consecutive runs land on the same process unless it is replaced.

    It is never reniced: on a busy machine a niced job may get too little CPU to reach the CPU
    or memory limit a test is after before the wall limit ends it.
    """
    with _started(1, nice_after_seconds=3600) as started:
        yield started


def run(pool: WorkerPool, job: str, *, wall: float = 5.0, cpu: float = 5.0,
        **kwargs: object) -> object:
    return pool.run(f"{JOBS}:{job}", wall_seconds=wall, cpu_seconds=cpu, **kwargs)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie no one reaped yet
    except FileNotFoundError:
        return True


def test_a_job_returns_its_value(pool: WorkerPool) -> None:
    assert run(pool, "echo", x=1, ys=[1.5, "a"]) == {"x": 1, "ys": [1.5, "a"]}


def test_a_reply_bigger_than_one_read_arrives_whole_under_uvloop(pool: WorkerPool) -> None:
    # uvicorn serves with uvloop, whose add_reader leaves the pipe non-blocking.
    uvloop = pytest.importorskip("uvloop")
    data = list(range(300_000))

    async def submit() -> object:
        return await pool.submit(f"{JOBS}:echo", wall_seconds=30, cpu_seconds=30, data=data)

    assert uvloop.run(submit()) == {"data": data}


def test_back_to_back_jobs_run_on_the_worker_that_finished_last() -> None:
    with _started(3) as pool:
        first = run(pool, "pid")
        assert {run(pool, "pid") for _ in range(5)} == {first}


def test_workers_run_torch_on_one_thread(pool: WorkerPool) -> None:
    assert run(pool, "torch_threads") == (1, 1)


def test_an_app_error_reaches_the_caller_with_its_type_line_and_hint(pool: WorkerPool) -> None:
    with pytest.raises(Disallowed) as caught:
        run(pool, "refuse")
    assert (caught.value.message, caught.value.line, caught.value.hint_key) == (
        "import os is not allowed", 3, "hint.disallowed")


def test_any_other_exception_is_a_runtime_error_and_the_worker_is_kept(solo: WorkerPool) -> None:
    before, restarts = run(solo, "pid"), solo.restarts
    with pytest.raises(RuntimeError, match="KeyError: 'boom'"):
        run(solo, "fail")
    assert run(solo, "pid") == before
    assert solo.restarts == restarts


def test_a_job_past_the_wall_limit_times_out_and_its_worker_is_replaced(solo: WorkerPool) -> None:
    before = run(solo, "pid")
    started = time.monotonic()
    with pytest.raises(Timeout, match="longer than 0.5 s") as caught:
        run(solo, "sleep", wall=0.5, seconds=1000)
    assert time.monotonic() - started < 1.5
    assert caught.value.hint_key == "hint.timeout"
    assert solo.size == 1
    assert run(solo, "pid") != before


def test_a_job_past_the_cpu_limit_times_out_before_the_wall_limit(solo: WorkerPool) -> None:
    with pytest.raises(Timeout, match="more than 1 s of CPU time"):
        run(solo, "spin", wall=10, cpu=1)
    assert solo.size == 1


def test_allocating_past_the_memory_limit_is_too_large_and_keeps_the_worker(
        solo: WorkerPool) -> None:
    before = run(solo, "pid")
    with pytest.raises(TooLarge, match="limit 512 MiB per worker") as caught:
        run(solo, "allocate", megabytes=3072)
    assert caught.value.hint_key == "hint.too_large"
    assert run(solo, "pid") == before


def test_a_jobs_garbage_is_gone_before_the_next_job_starts(solo: WorkerPool) -> None:
    # 300 MB held by a cycle each time, in a worker capped at 512 MB: without a collection
    # between jobs the second run had the first one's memory still, and failed.
    pids = {run(solo, "hold_in_a_cycle", megabytes=300) for _ in range(3)}
    assert len(pids) == 1


def test_without_an_address_space_limit_the_parent_kills_a_worker_over_its_memory() -> None:
    # CUDA workers get no RLIMIT_AS, so the parent's RSS watch is what stops them.
    with _started(1, device="cuda", nice_after_seconds=3600) as cuda:
        before = run(cuda, "pid")
        with pytest.raises(TooLarge, match="ran out of memory"):
            run(cuda, "fill", wall=20, megabytes=2048, hold_seconds=30)
        assert cuda.size == 1
        assert run(cuda, "pid") != before


@pytest.mark.parametrize(("job", "kwargs", "how"), [
    ("abort", {}, "signal SIGABRT"),
    ("exit_now", {"code": 3}, "exit code 3"),
])
def test_a_worker_that_dies_is_a_program_error_and_is_replaced(
        solo: WorkerPool, job: str, kwargs: dict[str, object], how: str) -> None:
    before = run(solo, "pid")
    with pytest.raises(ProgramError, match=f"stopped unexpectedly \\({how}\\)") as caught:
        run(solo, job, **kwargs)
    assert caught.value.hint_key == "hint.worker_crashed"
    assert solo.size == 1
    assert run(solo, "pid") != before


def test_eight_threads_share_two_workers(pool: WorkerPool) -> None:
    with ThreadPoolExecutor(8) as threads:
        pids = list(threads.map(lambda _: run(pool, "sleep", seconds=0.05), range(8)))
    assert len(pids) == 8
    assert len(set(pids)) <= 2
    assert pool.size == 2


def test_waiting_longer_than_queue_seconds_is_busy(solo: WorkerPool) -> None:
    holder = threading.Thread(target=run, args=(solo, "sleep"), kwargs={"seconds": 1.0})
    holder.start()
    time.sleep(0.2)  # the holder has taken the only worker
    started = time.monotonic()
    with pytest.raises(Busy, match="all 1 sandbox workers are busy") as caught:
        solo.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5, queue_seconds=0.3)
    assert 0.25 < time.monotonic() - started < 1.5
    assert caught.value.hint_key == "hint.busy"
    holder.join()


def test_a_job_cannot_write_into_its_working_directory_and_close_removes_it() -> None:
    with _started(1, nice_after_seconds=3600) as pool:
        cwd = str(run(pool, "cwd"))  # it exists: imports and torch's lazy loading need it
        with pytest.raises(RuntimeError, match="File too large"):
            run(pool, "write", path="note.txt")
        note = Path(cwd) / "note.txt"
        assert not note.exists() or note.stat().st_size == 0
    assert not Path(cwd).exists()


def test_a_job_cannot_write_bytes_to_a_file_anywhere(solo: WorkerPool) -> None:
    path = Path("/tmp") / f"gradient-lab-test-{uuid.uuid4().hex}.txt"
    try:
        with pytest.raises(RuntimeError, match="File too large"):
            run(solo, "write", path=str(path))
        # RLIMIT_FSIZE stops every byte, though not the creation of an empty file.
        assert not path.exists() or path.stat().st_size == 0
    finally:
        path.unlink(missing_ok=True)


FULL_SPEED = (0, os.SCHED_OTHER)


def test_a_long_job_is_reniced_and_its_worker_comes_back_at_full_priority() -> None:
    with _started(1, nice_after_seconds=0.1, full_speed_jobs=0) as niced:
        quick, *priority = run(niced, "priority")
        assert tuple(priority) == FULL_SPEED
        assert run(niced, "niceness_after", seconds=1.0) == 19
        assert run(niced, "priority") == (quick, *FULL_SPEED)  # no fork, a fresh thread
        assert niced.restarts == 0 and niced.size == 1


def test_a_job_thread_reniced_after_its_job_hands_the_next_job_to_a_fresh_one(
        solo: WorkerPool) -> None:
    # The pool may renice a job just as it ends, when the reply is already on its way.
    worker = run(solo, "renice_self")
    assert run(solo, "priority") == (worker, *FULL_SPEED)
    assert run(solo, "priority") == (worker, *FULL_SPEED)


def test_a_program_that_ends_itself_at_the_wall_limit_keeps_its_worker(solo: WorkerPool) -> None:
    # The interpreter stops a program at the wall limit itself; the pool kills a worker only
    # a little later, when a job is stuck in one long call.
    before = run(solo, "pid")
    with pytest.raises(Timeout, match="ran longer than it may"):
        run(solo, "time_out_after", wall=0.5, seconds=0.52)
    assert run(solo, "pid") == before


def test_the_collector_leaves_the_preloaded_heap_alone_after_the_warm_up(solo: WorkerPool) -> None:
    # A full collection over torch's ~300,000 objects is ~0.1 s in the middle of some job.
    run(solo, "pid")  # the first job, which a pool's warm-up would be
    frozen, walked = run(solo, "collector")
    assert frozen > 100_000
    assert walked < frozen / 5


def test_a_new_worker_runs_the_warm_up_job_before_its_first_request() -> None:
    with _started(1, warm_up=(f"{JOBS}:remember", {"value": "warm"})) as pool:
        assert run(pool, "recall") == "warm"


def test_a_long_job_alone_keeps_its_priority_and_its_worker() -> None:
    # A lone learner's 0.3 s race: renicing it would help no one and cost a fork.
    with _started(2, nice_after_seconds=0.1, long_jobs=4, full_speed_jobs=1) as pool:
        before = run(pool, "pid")
        assert run(pool, "niceness_after", seconds=0.5) == 0
        assert pool.restarts == 0 and pool.size == 2
        assert before in {run(pool, "pid") for _ in range(4)}


def test_a_long_job_is_reniced_once_more_jobs_run_than_may_run_at_full_speed() -> None:
    with _started(2, nice_after_seconds=0.1, long_jobs=4, full_speed_jobs=1) as pool, \
            ThreadPoolExecutor(2) as executor:
        long = executor.submit(run, pool, "niceness_after", seconds=1.5)
        time.sleep(0.4)  # past 0.1 s of CPU, alone: full priority still
        other = executor.submit(run, pool, "sleep", seconds=0.6)
        assert long.result() == 19
        other.result()
        _until(lambda: pool.size == 3)  # a third worker took the long job's place
        assert pool.restarts == 0


def test_a_job_that_takes_long_but_uses_little_cpu_keeps_its_worker() -> None:
    # On a busy machine a quick program can take long; retiring its worker would add a fork.
    with _started(1, nice_after_seconds=0.1) as pool:
        before = run(pool, "pid")
        run(pool, "sleep", seconds=0.5)
        assert run(pool, "pid") == before
        assert pool.restarts == 0


def _until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_long_job_gives_its_place_to_a_fresh_worker_so_quick_jobs_do_not_wait() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0,
                  spare_seconds=2.5) as pool:
        holder = threading.Thread(target=run, args=(pool, "spin_for"), kwargs={"seconds": 1.5})
        holder.start()
        _until(lambda: pool.size == 2)  # the holder's job was reniced and a worker started
        assert pool.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5, queue_seconds=0.5)
        holder.join()
        assert pool.size == 2  # the long job's worker stays, a spare for the next long job
        _until(lambda: pool.size == 1)  # and the longest idle retires after 2.5 s idle
        assert pool.restarts == 0


def test_a_spare_takes_the_next_long_jobs_place_without_a_fork() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0) as pool:
        run(pool, "spin_for", seconds=0.5)
        # Both idle: the long job's worker rejoins a moment after its reply, and if it did so
        # between the runs below, they would see both workers and leave no spare unseen.
        _until(lambda: len(pool._idle) == 2)
        workers = {run(pool, "pid") for _ in range(3)}
        holder = threading.Thread(target=run, args=(pool, "spin_for"), kwargs={"seconds": 1.0})
        holder.start()
        time.sleep(0.5)  # the holder's job is long now; the spare is the pool's one worker
        assert pool.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5, queue_seconds=0.2) \
            not in workers
        holder.join()
        assert pool.size == 2


def test_a_standby_worker_takes_a_long_jobs_place_at_once_and_is_refilled_by_it() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0,
                  standby=1) as pool:
        standby = pool._standby[0].pid
        assert pool.size == 1 and run(pool, "pid") != standby  # it runs no job of its own
        forks: list[int] = []
        spawn = pool._spawn
        with patch.object(pool, "_spawn", side_effect=lambda: forks.append(1) or spawn()):
            holder = threading.Thread(target=run, args=(pool, "spin_for"),
                                      kwargs={"seconds": 1.0})
            holder.start()
            _until(lambda: not pool._standby)  # the long job's place went to the standby
            assert pool.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5,
                            queue_seconds=0.5) == standby
            holder.join()
            _until(lambda: len(pool._standby) == 1)  # the long job's worker, back, refills it
        assert forks == [] and pool.size == 1 and pool.restarts == 0


def test_the_event_loop_starts_no_thread_to_replace_a_long_job_or_take_its_worker_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Thread.start() waits until the new thread runs: on a busy machine it held the event
    # loop (every request) 1-17 ms at a time. The pool's keeper threads do such chores.
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0) as pool:
        started: list[str] = []
        start = threading.Thread.start

        def recorded(thread: threading.Thread) -> None:
            if threading.current_thread() is threading.main_thread():  # where run()'s loop is
                started.append(thread.name)
            start(thread)

        monkeypatch.setattr(threading.Thread, "start", recorded)
        run(pool, "spin_for", seconds=0.5)  # reniced, replaced, then back as a spare
        _until(lambda: len(pool._idle) == 2)
        assert started == []


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as file:
        return file.read().rsplit(")", 1)[1].split()[0]


def test_past_its_turns_a_long_job_waits_stopped_and_goes_on_when_one_ends() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=2, full_speed_jobs=0,
                  long_turns=1) as pool, ThreadPoolExecutor(2) as callers:
        first = callers.submit(run, pool, "spin_for", seconds=1.5)
        _until(lambda: any(worker.long for worker in pool._workers))
        second = callers.submit(run, pool, "spin_for", seconds=0.5)
        _until(lambda: len(pool._paused) == 1)
        waiting = pool._paused[0].pid
        assert _state(waiting) == "T"  # stopped: not even at the back of the CPU queue
        assert first.result() != second.result() == waiting  # it went on when the first ended
        assert pool.restarts == 0


def test_a_paused_long_job_runs_again_when_its_wall_time_is_up_and_keeps_its_worker() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=2, full_speed_jobs=0,
                  long_turns=1) as pool, ThreadPoolExecutor(2) as callers:
        first = callers.submit(run, pool, "spin_for", seconds=4.0)
        _until(lambda: any(worker.long for worker in pool._workers))
        # Its wall time is up long before the first ends: it goes on then, and ends (as a
        # program's own run would, at its wall limit) before the pool's kill.
        second = callers.submit(run, pool, "spin_for", seconds=0.5, wall=2.0)
        _until(lambda: len(pool._paused) == 1)
        assert isinstance(second.result(timeout=3.5), int)
        assert not first.done()
        first.result()
        assert pool.restarts == 0


def test_past_the_long_job_limit_a_long_job_keeps_its_worker() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0) as pool:
        holders = [threading.Thread(target=run, args=(pool, "spin_for"),
                                    kwargs={"seconds": 3.0}) for _ in range(2)]
        holders[0].start()
        _until(lambda: pool.size == 2)  # the first is a long job now
        holders[1].start()  # the second takes the fresh worker, and may not give it up
        time.sleep(1.0)
        with pytest.raises(Busy):
            pool.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5, queue_seconds=0.3)
        for holder in holders:
            holder.join()


def test_many_callers_on_one_event_loop_share_the_workers_in_turn(pool: WorkerPool) -> None:
    async def many() -> list[object]:
        return await asyncio.gather(*(
            pool.submit(f"{JOBS}:sleep", wall_seconds=5, cpu_seconds=5, seconds=0.02)
            for _ in range(20)))

    assert len(set(asyncio.run(many()))) <= 2


def test_close_kills_every_worker_and_can_be_called_twice() -> None:
    with _started(2) as closing:
        with ThreadPoolExecutor(2) as executor:  # at once, so on both workers
            pids = set(executor.map(lambda _: run(closing, "sleep", seconds=0.3), range(2)))
        closing.close()
        closing.close()
        assert len(pids) == 2
        assert all(_gone(pid) for pid in pids)
        assert closing.size == 0
        with pytest.raises(Busy, match="shutting down"):
            run(closing, "pid")


SERVER = """
from app.sandbox.workers import WorkerPool
pool = WorkerPool(2, memory_mb=512, preload=("torch", "app.no_such_module", "tests.pool_jobs"))
pool.start()
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(2) as both:  # at once, so one on each worker
    print(*both.map(lambda _: pool.run("tests.pool_jobs:sleep", wall_seconds=5, cpu_seconds=5,
                                       seconds=0.3), range(2)), flush=True)
pool.run("tests.pool_jobs:sleep", wall_seconds=60, cpu_seconds=60, seconds=60)
"""


def test_workers_die_with_the_server_and_a_missing_preload_module_is_skipped() -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        pids = [int(pid) for pid in server.stdout.readline().split()]
        assert len(set(pids)) == 2, "the server did not start its workers"
        time.sleep(0.3)  # one worker is now busy with the sleep, the other idle
        server.send_signal(signal.SIGKILL)
        server.wait()
        deadline = time.monotonic() + 5
        while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_gone(pid) for pid in pids)
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


def test_a_cuda_error_outside_the_program_is_a_program_error_not_a_bug(solo: WorkerPool) -> None:
    # CUDA reports a failed kernel at a later call, which may be one the job makes after the
    # learner's program has run (writing the graph): still the program's error, with a hint.
    with pytest.raises(ProgramError, match="device-side assert triggered") as caught:
        run(solo, "cuda_error", text="device-side assert triggered")
    assert caught.value.hint_key == "hint.cuda_error"
    with pytest.raises(TooLarge) as full:
        run(solo, "cuda_error", text="out of memory")
    assert full.value.hint_key == "hint.too_large"


def test_a_worker_whose_cuda_failed_answers_then_is_replaced() -> None:
    with _started(1, nice_after_seconds=3600) as pool:
        broken = run(pool, "break_cuda_probe")  # its reply still arrives
        _until(lambda: _gone(cast(int, broken)))
        assert run(pool, "pid") != broken
        assert pool.restarts == 1 and pool.size == 1


def test_a_long_job_keeps_its_worker_when_the_gpu_has_no_room_for_another() -> None:
    with _started(1, nice_after_seconds=0.1, long_jobs=1, full_speed_jobs=0) as pool:
        # What a CUDA worker's ready message would say of a nearly full GPU.
        pool._gpu_free = 256 << 20
        holder = threading.Thread(target=run, args=(pool, "spin_for"), kwargs={"seconds": 1.5})
        holder.start()
        time.sleep(0.8)  # long past 0.1 s of CPU: reniced, but no worker took its place
        assert pool.size == 1
        with pytest.raises(Busy):
            pool.run(f"{JOBS}:pid", wall_seconds=5, cpu_seconds=5, queue_seconds=0.2)
        holder.join()
        pool._gpu_free = 64 << 30  # room again: the next long job gets a replacement
        holder = threading.Thread(target=run, args=(pool, "spin_for"), kwargs={"seconds": 1.0})
        holder.start()
        _until(lambda: pool.size == 2)
        holder.join()


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_cuda_worker_caps_its_gpu_memory_and_gives_back_a_jobs_blocks() -> None:
    # The warm-up starts CUDA, so that the memory watch counts from a worker with its context.
    with _started(1, device="cuda", nice_after_seconds=3600,
                  warm_up=(f"{JOBS}:cuda_allocate", {"megabytes": 1})) as pool:
        before = run(pool, "pid")
        assert cast(int, run(pool, "cuda_allocate", megabytes=128)) >= 128 << 20
        assert run(pool, "cuda_reserved") == 0  # given back after the job
        with pytest.raises(TooLarge) as caught:  # past the worker's 512 MiB
            run(pool, "cuda_allocate", megabytes=1024)
        assert caught.value.hint_key == "hint.too_large"
        assert run(pool, "pid") == before
        assert pool._gpu_free is not None and pool._gpu_free > 0


def test_a_worker_is_stopped_once_however_many_threads_retire_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # close() and a rejoin thread can both retire the worker whose long job just ended.
    from app.sandbox import workers

    stops: list[int] = []
    real_stop = workers.stop_worker

    def counting_stop(worker: Worker) -> None:
        stops.append(worker.pid)
        real_stop(worker)

    monkeypatch.setattr(workers, "stop_worker", counting_stop)
    with _started(1) as pool:
        worker = next(iter(pool._workers))
        retirers = [threading.Thread(target=pool._retire, args=(worker,)) for _ in range(4)]
        for thread in retirers:
            thread.start()
        for thread in retirers:
            thread.join()
    assert stops.count(worker.pid) == 1
