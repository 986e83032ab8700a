"""Warm worker processes that run one sandbox job at a time under CPU, wall-clock and memory limits.

A job is "package.module:function" plus keyword arguments. Workers fork from a forkserver that has
already imported torch, so replacing a killed one takes milliseconds. Linux only: the limits come
from setrlimit, /proc and prctl.

The server awaits a job on its event loop: the loop watches the worker's end of the pipe, so a
request waiting on a worker, or for one, holds no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import importlib
import logging
import math
import multiprocessing
import os
import resource
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

from app.errors import AppError, Busy, ProgramError, Timeout, TooLarge

_log = logging.getLogger(__name__)

_POLL_SECONDS = 0.025  # how often a waiting caller checks the clock and the worker's memory
_START_SECONDS = 30.0  # a worker not ready by then has failed to start
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1


@dataclass(eq=False, slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection
    idle_rss: int = 0  # resident bytes when ready; a job may add memory_mb on top
    reniced: bool = False  # its job runs at low priority; it retires when the job ends
    long: bool = False  # a fresh worker has taken its place in the pool

    @property
    def pid(self) -> int:
        assert self.process.pid is not None  # set by start(), before the worker is used
        return self.process.pid

    def alive(self) -> bool:
        # The sentinel turns readable when the process ends. Unlike is_alive(), this reads
        # nothing from it, so it cannot race the join() of the thread waiting on this worker.
        return not wait([self.process.sentinel], timeout=0)


@dataclass(eq=False, slots=True)
class _Waiter:
    """A caller waiting for an idle worker; each may be on its own event loop and thread."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None] = field(init=False)
    worker: _Worker | None = None  # set, under the pool's lock, by whoever hands one over

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

    A job that has used `nice_after_seconds` of CPU is reniced, and a fresh worker takes its
    place while it runs on, so that a few long (maybe hostile) programs cannot hold every
    worker while quick ones queue. At most `long_jobs` such jobs run at once; past that, a long
    job keeps its worker busy like any other. A reniced worker retires when its job ends.

    .. note:: There is one forkserver per process, so the first pool to start chooses what it
       preloads. Preload modules must not run torch ops at import: an OpenMP thread pool that
       exists before fork can hang the forked workers.
    """

    def __init__(self, size: int, *, memory_mb: int, device: str = "cpu",
                 preload: tuple[str, ...] = ("torch", "app.jobs"),
                 nice_after_seconds: float = 0.1, long_jobs: int = 0,
                 warm_up: tuple[str, dict[str, object]] | None = None) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got size={size}")
        self._target_size = size
        self._long_jobs = long_jobs
        self._warm_up = warm_up
        self._memory_mb = memory_mb
        # CUDA reserves huge virtual ranges, so CUDA workers rely on the parent's RSS watch alone.
        self._limit_address_space = not _uses_cuda(device)
        self._nice_after = nice_after_seconds
        # The workers' working directory: empty, and removed with the pool.
        self._cwd = tempfile.mkdtemp(prefix="gradient-lab-sandbox-")
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(preload))  # a missing module is skipped
        self._idle: deque[_Worker] = deque()
        self._waiters: deque[_Waiter] = deque()  # first come, first served
        self._workers: set[_Worker] = set()
        self._starting = 0
        self._closed = False
        self._lock = threading.Lock()
        self.restarts = 0

    @property
    def size(self) -> int:
        """The number of workers alive now."""
        with self._lock:
            workers = list(self._workers)
        return sum(worker.alive() for worker in workers)

    def start(self) -> None:
        """Start the workers; raises if one fails, so a broken sandbox shows at boot."""
        try:
            for _ in range(self._target_size - len(self._workers)):
                self._give(self._spawn())
        except BaseException:
            self.close()
            raise

    async def submit(self, target: str, /, *, wall_seconds: float, cpu_seconds: float,
                     queue_seconds: float = 10.0, **kwargs: object) -> object:
        """Return `target(**kwargs)` as run in a worker; an AppError it raises is raised here.

        Any other exception in the job is a server bug and comes back as RuntimeError.
        """
        worker = await self._take(queue_seconds)
        keep = False
        try:
            worker.conn.send((target, kwargs, cpu_seconds))
            status, value, *remote_traceback = await self._wait(worker, wall_seconds,
                                                                cpu_seconds)
            # An unprivileged process cannot lower its niceness again, so a reniced worker retires.
            keep = not worker.reniced
        finally:
            if keep:
                self._give(worker)
            else:  # killing and starting processes blocks, so not on the event loop
                await asyncio.to_thread(self._replace, worker)
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
        for waiter in waiters:
            waiter.wake()
        for worker in workers:
            self._retire(worker)
        shutil.rmtree(self._cwd, ignore_errors=True)

    async def _take(self, queue_seconds: float) -> _Worker:
        deadline = time.monotonic() + queue_seconds
        while True:
            if self._short_of_workers():  # a start failed earlier: try again
                await asyncio.to_thread(self._top_up)
            with self._lock:
                if self._closed:
                    raise Busy("the sandbox is shutting down; try again", hint_key="hint.busy")
                if self._idle:
                    worker: _Worker | None = self._idle.popleft()
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

    async def _wait_for_worker(self, waiter: _Waiter, deadline: float) -> _Worker:
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

    def _give(self, worker: _Worker) -> None:
        """Hand an idle worker to the longest-waiting caller, or keep it for the next."""
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.worker = worker
            else:
                self._idle.append(worker)
                return
        waiter.wake()

    async def _wait(self, worker: _Worker, wall_seconds: float,
                    cpu_seconds: float) -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        replied: asyncio.Future[None] = loop.create_future()
        loop.add_reader(worker.conn.fileno(), _resolve, replied)
        deadline = time.monotonic() + wall_seconds
        cpu_at_first_poll: float | None = None  # most jobs are done before it
        try:
            while True:
                await asyncio.wait((replied,), timeout=min(
                    _POLL_SECONDS, max(0.0, deadline - time.monotonic())))
                if replied.done():
                    break
                if time.monotonic() >= deadline:
                    raise Timeout(f"the program ran longer than {wall_seconds:g} s",
                                  hint_key="hint.timeout")
                cpu, resident = _usage(worker.pid)
                if resident - worker.idle_rss > self._memory_mb << 20:
                    raise _out_of_memory(self._memory_mb)
                # Long means CPU used, not time taken: on a busy machine a quick program can
                # take a while, and retiring its worker would only add a fork to the load.
                if cpu_at_first_poll is None:
                    cpu_at_first_poll = cpu
                elif not worker.reniced and cpu - cpu_at_first_poll >= self._nice_after:
                    self._renice(worker)
        finally:
            loop.remove_reader(worker.conn.fileno())
        # uvloop's add_reader leaves the pipe non-blocking: a reply bigger than one read (a
        # 1,000-step race is a megabyte) would end recv() with BlockingIOError mid-message.
        os.set_blocking(worker.conn.fileno(), True)
        try:
            reply: tuple[object, ...] = worker.conn.recv()
        except (EOFError, OSError):
            raise await asyncio.to_thread(self._death, worker, cpu_seconds) from None
        return reply

    def _renice(self, worker: _Worker) -> None:
        # Short jobs on the other workers keep the CPU from a long, maybe hostile one.
        # Linux nice is per thread; the job's torch ops run on this one thread.
        worker.reniced = True
        with contextlib.suppress(ProcessLookupError):
            os.setpriority(os.PRIO_PROCESS, worker.pid, 19)
        with self._lock:
            if sum(w.long for w in self._workers) >= self._long_jobs:
                return  # as many long jobs as allowed run already: this one keeps its place
            worker.long = True
        threading.Thread(target=self._top_up, name="sandbox-top-up", daemon=True).start()

    def _death(self, worker: _Worker, cpu_seconds: float) -> AppError:
        worker.process.join(1.0)
        code = worker.process.exitcode
        if code == -signal.SIGXCPU:
            return Timeout(f"the program used more than {cpu_seconds:g} s of CPU time",
                           hint_key="hint.timeout")
        if code == -signal.SIGKILL:  # we kill only once we stop waiting: this is the OOM killer
            return _out_of_memory(self._memory_mb)
        how = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        return ProgramError(f"the worker running the program stopped unexpectedly ({how})",
                            hint_key="hint.worker_crashed")

    def _spawn(self) -> _Worker:
        conn, child_conn = self._context.Pipe()
        process = self._context.Process(target=_serve, name="sandbox-worker", daemon=True,
                                        args=(child_conn, self._memory_mb,
                                              self._limit_address_space, self._cwd))
        worker = _Worker(process, conn)
        try:
            try:
                process.start()
            finally:
                child_conn.close()
            if not conn.poll(_START_SECONDS):
                raise RuntimeError(f"a sandbox worker was not ready after {_START_SECONDS:g} s")
            worker.idle_rss = conn.recv()  # EOFError: it died starting up; its stderr says why
            if self._warm_up is not None:
                # A fresh worker's first job runs several times slower (page faults, lazy
                # inits): pay for that here, not in a request.
                target, kwargs = self._warm_up
                conn.send((target, kwargs, _START_SECONDS))
                if not conn.poll(_START_SECONDS):
                    raise RuntimeError(f"a sandbox worker's warm-up took over {_START_SECONDS:g} s")
                conn.recv()  # whatever it returned, the worker is warm now
                worker.idle_rss = _usage(worker.pid)[1]
            with self._lock:
                if self._closed:
                    raise RuntimeError("the worker pool closed while a worker was starting")
                self._workers.add(worker)
            return worker
        except BaseException:
            self._retire(worker)
            raise

    def _replace(self, worker: _Worker) -> None:
        self._retire(worker)
        with self._lock:
            if not self._closed:
                self.restarts += 1
        self._top_up()

    def _short_of_workers(self) -> bool:
        """Fewer workers (not counting long jobs') alive or starting than the pool's size."""
        with self._lock:
            placed = sum(not w.long for w in self._workers)
            return not self._closed and placed + self._starting < self._target_size

    def _top_up(self) -> None:
        """Start workers until the pool is full; a failure is logged, and the next run retries."""
        while True:
            with self._lock:
                placed = sum(not w.long for w in self._workers)
                if self._closed or placed + self._starting >= self._target_size:
                    return
                self._starting += 1
            try:
                worker = self._spawn()
            except Exception:
                _log.exception("a sandbox worker failed to start")
                return
            finally:
                with self._lock:
                    self._starting -= 1
            self._give(worker)

    def _retire(self, worker: _Worker) -> None:
        with self._lock:
            self._workers.discard(worker)
        if worker.process.pid is not None:
            worker.process.kill()
            worker.process.join(5.0)
        worker.conn.close()


def _uses_cuda(device: str) -> bool:
    if device != "auto":
        return device.startswith("cuda")
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _statm(pid: int | str) -> tuple[int, int]:
    """(virtual, resident) bytes of a process, from /proc; (0, 0) once it has exited."""
    try:
        with open(f"/proc/{pid}/statm") as file:
            virtual, resident = file.read().split()[:2]
    except (FileNotFoundError, ProcessLookupError):
        return 0, 0  # the pipe's EOF will report the exit
    return int(virtual) * _PAGE_BYTES, int(resident) * _PAGE_BYTES


def _usage(pid: int) -> tuple[float, int]:
    """(CPU seconds, resident bytes) of a process, from one read of /proc; zeros once it exited."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0, 0  # the pipe's EOF will report the exit
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, int(fields[21]) * _PAGE_BYTES


def _out_of_memory(memory_mb: int) -> TooLarge:
    return TooLarge(f"the program ran out of memory (limit {memory_mb} MiB per worker)",
                    hint_key="hint.too_large")


# Everything below runs inside a worker process.


def _serve(conn: Connection, memory_mb: int, limit_address_space: bool, cwd: str) -> None:
    """Confine this process, report its idle memory, then run jobs until the server goes away."""
    _confine(memory_mb, limit_address_space, cwd)
    _freeze_heap()
    conn.send(_statm("self")[1])
    first = True
    while True:
        try:
            target, kwargs, cpu_seconds = conn.recv()
        except EOFError:
            return
        reply = _run_job(target, kwargs, cpu_seconds, memory_mb)
        try:
            conn.send(reply)
        except Exception as error:  # the value does not pickle, or is too large to
            conn.send(_failure(error, memory_mb))
        if first:  # the warm-up job's lazy imports and caches are long-lived too
            first = False
            _freeze_heap()


def _freeze_heap() -> None:
    """Keep the garbage collector off what is alive now: torch's and the app's modules.

    A full collection walks every tracked object, some 300,000 once torch is imported: about
    0.1 s, and a job that builds many lists (a race's trajectories) sets one off at random.
    Frozen objects are never walked again; only what jobs make is. (gc.freeze, as in Python's
    docs for pre-fork servers.)

    .. note:: No gc.collect() first, though the docs suggest one: it is that same 0.1 s, paid
       by every new worker, and a class under attack replaces a worker for every program that
       hits a limit. What it would free (the imports' and the warm-up's few cycles) stays.
    """
    gc.freeze()


def _confine(memory_mb: int, limit_address_space: bool, cwd: str) -> None:
    with contextlib.suppress(OSError, AttributeError):  # without it, EOF still ends idle workers
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _close_helper_pipes()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C reaches the process group; the pool ends us
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so a write past RLIMIT_FSIZE raises OSError
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.chdir(cwd)  # the pool's empty directory; RLIMIT_FSIZE below keeps every file empty
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        import torch
    except ImportError:
        pass
    else:  # many workers on few cores must not oversubscribe them
        torch.set_num_threads(1)
        with contextlib.suppress(RuntimeError):  # inter-op work already ran in the forkserver
            torch.set_num_interop_threads(1)
    if limit_address_space:
        limit = _statm("self")[0] + (memory_mb << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _close_helper_pipes() -> None:
    # The forkserver hands each child its "alive" pipe (so the child could start processes too)
    # and the resource tracker's pipe. Holding the first, a busy worker would keep the forkserver
    # alive after the server dies, and so escape PR_SET_PDEATHSIG.
    from multiprocessing import forkserver, resource_tracker

    for owner, name in ((getattr(forkserver, "_forkserver", None), "_forkserver_alive_fd"),
                        (getattr(resource_tracker, "_resource_tracker", None), "_fd")):
        fd = getattr(owner, name, None)
        if isinstance(fd, int):
            setattr(owner, name, None)
            os.close(fd)


def _run_job(target: str, kwargs: dict[str, object], cpu_seconds: float,
             memory_mb: int) -> tuple[object, ...]:
    # RLIMIT_CPU counts whole seconds over the process's life, so the budget starts from what
    # this worker has used so far. Only the soft limit moves, so it can be restored afterwards;
    # the parent's wall-clock kill backs up a job that survives SIGXCPU.
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(usage.ru_utime + usage.ru_stime + cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU,
                       (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        module, _, name = target.partition(":")
        return ("ok", getattr(importlib.import_module(module), name)(**kwargs))
    except AppError as error:
        return ("error", error)
    except Exception as error:
        return _failure(error, memory_mb)
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _failure(error: Exception, memory_mb: int) -> tuple[object, ...]:
    # .. note:: torch's CPU allocator reports an exhausted RLIMIT_AS as RuntimeError
    #    ("DefaultCPUAllocator: can't allocate memory"), not MemoryError; CUDA raises
    #    torch.OutOfMemoryError.
    if (isinstance(error, MemoryError) or "can't allocate memory" in str(error)
            or type(error).__name__ == "OutOfMemoryError"):
        return ("error", _out_of_memory(memory_mb))
    return ("bug", f"{type(error).__name__}: {error}", traceback.format_exc())
