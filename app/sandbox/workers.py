"""Warm worker processes that run one sandbox job at a time under CPU, wall-clock and memory limits.

A job is "package.module:function" plus keyword arguments. Workers fork from a forkserver that has
already imported torch, so replacing a killed one takes milliseconds. Linux only: the limits come
from setrlimit, /proc and prctl. This module is the pool, in the server process; starting and
stopping one worker is worker_handle.py, and what runs inside each worker is worker_process.py.

The server awaits a job on its event loop: the loop watches the worker's end of the pipe, so a
request waiting on a worker, or for one, holds no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import cast

from app.errors import AppError, Busy, Timeout
from app.sandbox.worker_handle import (
    START_SECONDS,
    Worker,
    death,
    renice_job,
    start_worker,
    stop_worker,
    uses_cuda,
)
from app.sandbox.worker_process import REJOIN, RETIRE, _out_of_memory, _usage, receive, send

_log = logging.getLogger(__name__)

_POLL_SECONDS = 0.025  # how often a waiting caller checks the clock and the worker's memory
# The same in a job's first 0.1 s, so that a CPU burner is caught soon after nice_after_seconds.
# Each burner's first milliseconds at full priority add up when a class under attack starts a
# dozen a second; a quick program (S2 takes 1.3 ms) is done before the first check.
_YOUNG_POLL_SECONDS = 0.005
_YOUNG_SECONDS = 0.1
_NICED_POLL_SECONDS = 0.1  # the same, for a reniced job: a class under attack runs dozens
_KILL_GRACE_SECONDS = 1.0  # past the wall limit, at most this (or a fifth of it) before a kill
# What one more CUDA worker takes of the GPU before its job, until start() has measured it:
# CUDA's context, torch's kernels and the warm-up's few blocks.
_GPU_WORKER_BYTES = 512 << 20
_KEEPERS = 8  # threads that start, stop and take back workers: at most this many at once


@dataclass(eq=False, slots=True)
class _Waiter:
    """A caller waiting for an idle worker; each may be on its own event loop and thread."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None] = field(init=False)
    worker: Worker | None = None  # set, under the pool's lock, by whoever hands one over

    def __post_init__(self) -> None:
        self.future = self.loop.create_future()

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(_resolve, self.future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class WorkerPool:
    """`size` warm sandbox workers; `submit` may be awaited from any event loop, `run` from threads.

    Each new worker first runs `warm_up` (a job and its arguments), if given.

    A job that has used `nice_after_seconds` of CPU while the pool is crowded (callers waiting,
    or more than `full_speed_jobs` jobs at full priority: by default one per CPU but one, which
    the server's event loop needs) is reniced, and another worker takes its place while it runs
    on, so that a few long (maybe hostile) programs cannot hold every worker or CPU while quick
    ones queue. At most `long_jobs` such jobs run at once; past that, a long job keeps its
    worker busy like any other. Of the long jobs, `long_turns` (one per CPU) run; the others
    wait their turn stopped (SIGSTOP), oldest first, and one whose wall time is up runs again
    to end itself. A long job with the machine to itself keeps its priority and its worker:
    a lone learner's race runs at full speed.

    On CUDA, each worker holds a CUDA context, and each job may hold up to `memory_mb` of GPU
    memory besides (the worker caps its allocator there). So a long job gets a replacement
    only while the GPU, as the last worker to start saw it, has room for one more worker and
    for every busy job to grow to its cap; otherwise it keeps its worker.

    A replacement takes a fork and a warm-up: 15 ms of CPU, while the first second of an attack
    on a class moves two dozen long jobs aside, and those starts were a sixth of the machine
    just when quick programs queued most. So the pool keeps `standby` warm workers outside its
    `size` (CPU only: on a GPU each would hold a CUDA context), which run no job until one
    takes a long job's place, at once. Under 10% hostile requests (bench/runner.py), 16 of
    them took the benign p99 from 82-92 ms to 65-70 ms (3 runs each).

    Only the long job's thread is reniced, and its worker comes back at full priority when the
    job ends (see worker_process._serve). So the pool may hold more workers than `size` after
    a burst of long jobs: these refill the standby first, no fork needed; the rest are spares
    that take the place of the next long jobs, and retire once idle for `spare_seconds`.

    Starting, stopping and taking back workers block, so keeper threads do it, started with
    the pool: the event loop only queues the chore. (Thread.start() waits until the new thread
    runs: on a busy 2-core machine under attack, that held the event loop, and every request
    on it, 1-17 ms at a time, 0.23 s in all over a 2 s attack.)

    .. note:: There is one forkserver per process, so the first pool to start chooses what it
       preloads. Preload modules must not run torch ops at import: an OpenMP thread pool that
       exists before fork can hang the forked workers.
    """

    def __init__(self, size: int, *, memory_mb: int, device: str = "cpu",
                 preload: tuple[str, ...] = ("torch", "app.jobs"),
                 nice_after_seconds: float = 0.005, long_jobs: int = 0,
                 full_speed_jobs: int | None = None, spare_seconds: float = 10.0,
                 warm_up: tuple[str, dict[str, object]] | None = None,
                 long_turns: int | None = None, standby: int = 0) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got size={size}")
        self._target_size = size
        # On a GPU each worker holds a CUDA context (hundreds of MB of its memory): no standby.
        self._standby_size = 0 if uses_cuda(device) else standby
        self._standby: list[Worker] = []  # warm and idle, outside `size`: for long jobs' places
        self._long_jobs = long_jobs
        self._warm_up = warm_up
        self._memory_mb = memory_mb
        # CUDA reserves huge virtual ranges, so CUDA workers rely on the parent's RSS watch alone.
        self._limit_address_space = not uses_cuda(device)
        self._nice_after = nice_after_seconds
        cpus = len(os.sched_getaffinity(0))
        self._full_speed_jobs = max(1, cpus - 1) if full_speed_jobs is None else full_speed_jobs
        self._busy: set[Worker] = set()  # running a job now
        # Long jobs that may run at once, one per CPU; the others wait stopped, oldest first.
        self._long_turns = max(1, cpus) if long_turns is None else long_turns
        self._paused: deque[Worker] = deque()
        # The workers' working directory: empty, and removed with the pool.
        self._cwd = tempfile.mkdtemp(prefix="gradient-lab-sandbox-")
        self._context = multiprocessing.get_context("forkserver")
        # A missing module is skipped. worker_process holds every worker's target: imported in
        # each new worker instead (with ctypes), it took a new worker's CPU up to its warm-up
        # from 5.4 ms to 9.2 ms, and a class under attack starts a dozen workers a second.
        self._context.set_forkserver_preload([*preload, "app.sandbox.worker_process"])
        self._idle: deque[Worker] = deque()  # a stack: the last one in is the first one out
        self._spare_seconds = spare_seconds
        self._trimmer: threading.Timer | None = None
        self._waiters: deque[_Waiter] = deque()  # first come, first served
        self._workers: set[Worker] = set()
        self._starting = 0
        self._closed = False
        self._lock = threading.Lock()
        self._gpu_free: int | None = None  # free GPU bytes, as the last worker ready saw them
        self._gpu_worker_bytes = _GPU_WORKER_BYTES
        self._chores: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._keepers: list[threading.Thread] = []
        self.restarts = 0

    @property
    def size(self) -> int:
        """The number of workers alive now, the standby aside (they run no job; /healthz
        reports this, and asks each worker it counts whether it is alive)."""
        with self._lock:
            workers = self._workers.difference(self._standby)
        return sum(worker.alive() for worker in workers)

    def start(self) -> None:
        """Start the workers; raises if one fails, so a broken sandbox shows at boot."""
        for number in range(_KEEPERS - len(self._keepers)):
            keeper = threading.Thread(target=self._keep, name=f"sandbox-keeper-{number}",
                                      daemon=True)
            keeper.start()
            self._keepers.append(keeper)
        readings: list[int] = []
        try:
            for _ in range(self._target_size - len(self._workers)):
                worker = self._spawn()
                if worker.gpu_free is not None:
                    readings.append(worker.gpu_free)
                self._give(worker)
            while len(self._standby) < self._standby_size:
                worker = self._spawn()
                with self._lock:
                    self._standby.append(worker)
        except BaseException:
            self.close()
            raise
        if len(readings) > 1:  # what each worker took of the GPU, from the fall in free memory
            step = (readings[0] - readings[-1]) // (len(readings) - 1)
            self._gpu_worker_bytes = max(self._gpu_worker_bytes, step)
        if readings:
            _log.info("sandbox workers use CUDA: %d MiB of the GPU each, %d MiB free",
                      self._gpu_worker_bytes >> 20, readings[-1] >> 20)

    async def submit(self, target: str, /, *, wall_seconds: float, cpu_seconds: float,
                     queue_seconds: float = 10.0, **kwargs: object) -> object:
        """Return `target(**kwargs)` as run in a worker; an AppError it raises is raised here.

        Any other exception in the job is a server bug and comes back as RuntimeError.
        """
        worker = await self._take(queue_seconds)
        replied = False
        with self._lock:
            self._busy.add(worker)
        try:
            send(worker.conn, (target, kwargs, cpu_seconds))
            cpu, after, status, value, *remote_traceback = \
                await self._wait(worker, wall_seconds, cpu_seconds)
            worker.cpu_idle = cast(float, cpu)
            replied = True
        finally:
            with self._lock:
                self._busy.discard(worker)
            self._end_turn(worker)
            if not replied:  # it timed out, died or ran out of memory: gone before we answer
                # Killing and starting processes blocks, so not on the event loop.
                await asyncio.to_thread(self._replace, worker)
            elif after == RETIRE:
                # Its CUDA context failed with the job (the reply says how): it cannot run
                # another, and ends. The caller has its reply and need not wait.
                self._later(partial(self._replace, worker))
            elif after == REJOIN:
                # A reniced job's thread has ended with its job; the worker rejoins once a
                # fresh thread says ready. The caller has its reply and need not wait.
                self._later(partial(self._rejoin, worker))
            elif worker.reniced:
                # Reniced as its job ended, too late for the thread to see: it would run the
                # next job at the back of the queue. Rare; the worker retires.
                with self._lock:
                    self.restarts += 1
                self._later(partial(self._replace, worker, False))
            else:
                self._give(worker)
        if status == "ok":
            return value
        if isinstance(value, AppError):
            raise value
        _log.error("sandbox job %s failed in its worker:\n%s", target, *remote_traceback)
        raise RuntimeError(f"sandbox job {target} failed: {value}")

    def run(self, target: str, /, *, wall_seconds: float, cpu_seconds: float,
            queue_seconds: float = 10.0, **kwargs: object) -> object:
        """`submit` for a caller with no event loop running, such as a thread or a test."""
        return asyncio.run(self.submit(target, wall_seconds=wall_seconds,
                                       cpu_seconds=cpu_seconds, queue_seconds=queue_seconds,
                                       **kwargs))

    def close(self) -> None:
        """Kill every worker; callers waiting for one get Busy. Calling it again does nothing."""
        with self._lock:
            self._closed = True
            workers = list(self._workers)
            waiters = list(self._waiters)
            self._waiters.clear()
            self._idle.clear()
            self._standby.clear()
            trimmer, self._trimmer = self._trimmer, None
        if trimmer is not None:
            trimmer.cancel()
        for _ in self._keepers:
            self._chores.put(None)
        for waiter in waiters:
            waiter.wake()
        for worker in workers:
            self._retire(worker)
        shutil.rmtree(self._cwd, ignore_errors=True)

    async def _take(self, queue_seconds: float) -> Worker:
        deadline = time.monotonic() + queue_seconds
        while True:
            # A start failed earlier: try again, on a thread. Not here: while a long job's
            # replacement started, every request waited for it (~0.1 s on a busy machine).
            self._top_up_soon()
            with self._lock:
                if self._closed:
                    raise Busy("the sandbox is shutting down; try again", hint_key="hint.busy")
                if self._idle:
                    # The worker that finished last: its caches are warm. Taking them in
                    # turn, each of four workers ran S2 cold, in 3.9 ms instead of 1.9.
                    worker: Worker | None = self._idle.pop()
                else:
                    waiter = _Waiter(asyncio.get_running_loop())
                    self._waiters.append(waiter)
                    worker = None
            if worker is None:
                worker = await self._wait_for_worker(waiter, deadline)
            if worker.alive():
                return worker
            # It died while idle, e.g. at the hands of the OOM killer.
            await asyncio.to_thread(self._replace, worker)

    async def _wait_for_worker(self, waiter: _Waiter, deadline: float) -> Worker:
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.future, max(0.0, deadline - time.monotonic()))
        finally:
            with self._lock:
                worker = waiter.worker
                if worker is None and not self._closed:
                    self._waiters.remove(waiter)
        if worker is not None:
            return worker
        if self._closed:
            raise Busy("the sandbox is shutting down; try again", hint_key="hint.busy")
        raise Busy(f"all {self._target_size} sandbox workers are busy; try again",
                   hint_key="hint.busy")

    def _give(self, worker: Worker) -> None:
        """Hand an idle worker to the longest-waiting caller, or keep it for the next; one
        beyond the pool's size (a long job's, back) refills the standby first."""
        with self._lock:
            if len(self._standby) < self._standby_size and \
                    self._placed() > self._target_size and not self._closed:
                self._standby.append(worker)
                return
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.worker = worker
            else:
                worker.idle_since = time.monotonic()
                self._idle.append(worker)
                if self._placed() > self._target_size:
                    self._trim_later()
                return
        waiter.wake()

    def _trim_later(self) -> None:
        """Have _trim run once the longest-idle worker has been idle `spare_seconds`."""
        # Under the pool's lock.
        if self._trimmer is not None or self._closed or not self._idle:
            return
        wait = self._idle[0].idle_since + self._spare_seconds - time.monotonic()
        self._trimmer = threading.Timer(max(0.0, wait), self._trim)
        self._trimmer.name, self._trimmer.daemon = "sandbox-trim", True
        self._later(self._trimmer.start)  # _give may run on the event loop

    def _trim(self) -> None:
        """Retire spare workers, beyond the pool's size, idle for `spare_seconds`."""
        spent = time.monotonic() - self._spare_seconds
        with self._lock:
            self._trimmer = None
            retired: list[Worker] = []
            spares = self._placed() - self._target_size
            # The idle stack's bottom is the worker idle longest.
            while len(retired) < spares and self._idle and self._idle[0].idle_since <= spent:
                retired.append(self._idle.popleft())
            if len(retired) < spares:
                self._trim_later()
        for worker in retired:
            self._retire(worker)

    async def _wait(self, worker: Worker, wall_seconds: float,
                    cpu_seconds: float) -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        fd = worker.conn.fileno()
        replied: asyncio.Future[None] = loop.create_future()
        # A program's own run ends itself at wall_seconds (the interpreter watches the clock),
        # and its reply keeps the worker; the kill is for a job stuck in one long call.
        start = time.monotonic()
        young_until = start + _YOUNG_SECONDS
        deadline = start + wall_seconds + min(_KILL_GRACE_SECONDS, wall_seconds / 5)
        timer: asyncio.TimerHandle

        # The job is watched from a chain of timer callbacks, and the caller awaits the reply
        # alone: woken straight from the pipe's reader, it resumes one loop pass sooner than
        # from asyncio.wait(reply, timeout) (6 us of each job's hand-over back).
        def watch() -> None:
            nonlocal timer
            if replied.done():
                return
            now = time.monotonic()
            try:
                self._watch(worker, now >= deadline, wall_seconds, now >= start + wall_seconds)
            except Exception as error:  # noqa: BLE001 - the caller raises it, and the worker goes
                replied.set_exception(error)
                return
            # A reniced job no longer needs its CPU watched, only its clock and memory.
            poll = _NICED_POLL_SECONDS if worker.reniced else _YOUNG_POLL_SECONDS \
                if now < young_until else _POLL_SECONDS
            timer = loop.call_later(min(poll, max(0.0, deadline - now)), watch)

        timer = loop.call_later(min(_YOUNG_POLL_SECONDS, deadline - start), watch)
        loop.add_reader(fd, _resolve, replied)
        try:
            await replied
        finally:
            timer.cancel()
            loop.remove_reader(fd)
        # uvloop's add_reader leaves the pipe non-blocking: a reply bigger than one read (a
        # 1,000-step race is a megabyte) would end recv() with BlockingIOError mid-message.
        os.set_blocking(fd, True)
        try:
            reply = receive(worker.conn)
        except (EOFError, OSError):
            raise await asyncio.to_thread(death, worker, cpu_seconds, self._memory_mb) from None
        return reply

    def _watch(self, worker: Worker, past_deadline: bool, wall_seconds: float,
               past_wall: bool) -> None:
        """One check of a running job: raise if it must stop; renice it if it runs long."""
        if past_wall and worker.paused:
            # Its time is up: it runs again, and the interpreter ends it with a 408 at its
            # next step, keeping the worker (a kill would cost a start).
            with self._lock:
                if worker.paused:
                    self._paused.remove(worker)
                    self._go_on(worker)
        if past_deadline:
            raise Timeout(f"the program ran longer than {wall_seconds:g} s",
                          hint_key="hint.timeout")
        cpu, resident = _usage(worker.pid)
        if resident - worker.idle_rss > self._memory_mb << 20:
            raise _out_of_memory(self._memory_mb)
        # Long means CPU used, not time taken: on a busy machine a quick program can take a
        # while, and its place need not go to another worker.
        if not worker.reniced and cpu - worker.cpu_idle >= self._nice_after and self._crowded():
            self._renice(worker)

    def _rejoin(self, worker: Worker) -> None:
        """Give a reniced job's worker back to the pool once its fresh job thread is ready."""
        try:
            if not worker.conn.poll(START_SECONDS):
                raise TimeoutError
            _, worker.cpu_idle, gpu_free = receive(worker.conn)
        except (EOFError, OSError, TimeoutError):
            self._replace(worker)
            return
        with self._lock:
            worker.reniced = worker.long = False
            if gpu_free is not None:
                self._gpu_free = gpu_free
        self._give(worker)

    def _crowded(self) -> bool:
        """Callers wait for a worker, or more jobs run at full priority than may."""
        with self._lock:
            return bool(self._waiters) or \
                sum(not w.reniced for w in self._busy) > self._full_speed_jobs

    def _renice(self, worker: Worker) -> None:
        # Short jobs on the other workers keep the CPU from a long, maybe hostile one.
        worker.reniced = True
        renice_job(worker)
        with self._lock:
            if sum(w.long for w in self._workers) >= self._long_jobs:
                return  # as many long jobs as allowed run already: this one keeps its place
            if self._gpu_free is not None and self._gpu_free < self._gpu_worker_bytes + \
                    (len(self._busy) + 1) * (self._memory_mb << 20):
                return  # the GPU has no room for another worker: this one keeps its place
            worker.long = True
            # Past one long job per CPU, it waits its turn stopped: every runnable thread, even
            # at the back of the queue, costs the others (96 idle-class spinners cut a 4-worker
            # pool's throughput by a third here), and a class under attack runs dozens.
            # (Signals under the lock: with callers on several event loops, a stop and its
            # go-on must not cross.)
            if sum(w.long and not w.paused for w in self._workers) > self._long_turns:
                worker.paused = True
                self._paused.append(worker)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGSTOP)
            # A standby worker takes its place at once, without a fork.
            reserve = self._standby.pop() if self._standby else None
        if reserve is not None:
            self._give(reserve)
        else:
            self._top_up_soon()

    def _end_turn(self, worker: Worker) -> None:
        """A job has ended (or its worker is gone): if it was a long one, the next paused long
        job goes on; if it was paused itself, it is let go."""
        if not worker.long:  # nearly every job: no lock to take (only its own _wait sets it)
            return
        with self._lock:
            if worker.paused:
                self._paused.remove(worker)
                self._go_on(worker)
            elif self._paused:
                self._go_on(self._paused.popleft())

    @staticmethod
    def _go_on(worker: Worker) -> None:
        """Let a paused long job run again (under the pool's lock)."""
        worker.paused = False
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGCONT)

    def _spawn(self) -> Worker:
        worker = start_worker(self._context, self._memory_mb, self._limit_address_space,
                              self._cwd, self._warm_up)
        with self._lock:
            closed = self._closed
            if not closed:
                self._workers.add(worker)
                if worker.gpu_free is not None:
                    self._gpu_free = worker.gpu_free
        if closed:
            stop_worker(worker)
            raise RuntimeError("the worker pool closed while a worker was starting")
        return worker

    def _replace(self, worker: Worker, count: bool = True) -> None:
        self._retire(worker)
        if count:
            with self._lock:
                if not self._closed:
                    self.restarts += 1
        self._top_up()

    def _placed(self) -> int:
        """Workers in the pool's count: all but the standby and those whose long job another
        has replaced."""
        # Under the pool's lock.
        return sum(not w.long for w in self._workers) - len(self._standby)

    def _full(self) -> bool:
        """The pool's workers and the starts under way make up its size (or it is closed)."""
        # Under the pool's lock.
        return self._closed or self._placed() + self._starting >= self._target_size

    def _top_up_soon(self) -> None:
        """If the pool is short of workers, start one on a thread, which goes on to fill it."""
        with self._lock:
            if self._full():
                return
            self._starting += 1  # now, so that callers meanwhile do not start threads too
        self._later(partial(self._top_up, True))

    def _top_up(self, started: bool = False) -> None:
        """Start workers until the pool is full; a failure is logged, and the next run retries.

        `started`: the caller has counted one start in `_starting` already.
        """
        while True:
            if not started:
                with self._lock:
                    if self._full():
                        return
                    self._starting += 1
            started = False
            try:
                worker = self._spawn()
            except Exception:
                _log.exception("a sandbox worker failed to start")
                return
            finally:
                with self._lock:
                    self._starting -= 1
            self._give(worker)

    def _later(self, chore: Callable[[], object]) -> None:
        """Have a keeper thread run chore: starting, stopping or waiting for a worker blocks."""
        self._chores.put(chore)

    def _keep(self) -> None:
        while (chore := self._chores.get()) is not None:
            try:
                chore()
            except Exception:
                _log.exception("a sandbox pool chore failed")

    def _retire(self, worker: Worker) -> None:
        """Drop a worker from the pool and stop it. Only the first call for a worker does so:
        close() can retire one that a rejoin or replace thread is retiring at the same time,
        and two closes of its pipe raced to EBADF."""
        with self._lock:
            if worker not in self._workers:
                return
            self._workers.discard(worker)
        stop_worker(worker)

