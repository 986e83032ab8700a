"""What runs inside a sandbox worker process: confine it, then run one job at a time.

WorkerPool (workers.py) starts each worker with `_serve` as its target. multiprocessing passes
the target by reference, so `_serve` stays a module-level function the forkserver's child can
import. At the end: the /proc readings (a worker's of its own memory, and the pool's watch on a
worker's CPU and memory) and the out-of-memory error that both sides report.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import math
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from types import ModuleType
from typing import Any

from app.errors import AppError, TooLarge

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1
START_SECONDS = 30.0  # a worker not ready by then has failed to start; its warm-up's CPU limit

# What a reply asks of the pool once its job is done: give the worker the next job; wait for
# its fresh job thread to say ready (the old one was reniced); or replace it (its CUDA
# context has failed, and every later CUDA call in this process would fail too).
GO_ON, REJOIN, RETIRE = "go on", "rejoin", "retire"


def _serve(conn: Connection, memory_mb: int, limit_address_space: bool, cwd: str,
           warm_up: tuple[str, dict[str, object]] | None) -> None:
    """Confine this process, warm it up, then run jobs until the server goes away.

    Jobs run on a job thread, never on this main one, which only starts job threads and so
    keeps the priority it was born with. The pool renices a long job's thread (Linux nice and
    scheduling policy are per thread). That thread then ends with its job, and a fresh one at
    full priority says "ready": the worker rejoins the pool with no fork and no warm-up.

    Only one job thread lives at a time. Two would share the GIL, and a reniced thread that
    the kernel keeps waiting while it holds the GIL would hold up the other too.
    """
    _confine(memory_mb, limit_address_space, cwd)
    _freeze_heap()
    while _on_a_thread(_run_jobs, conn, memory_mb, warm_up):
        warm_up = None  # the first thread only


def _on_a_thread(target: Callable[..., bool], *args: object) -> bool:
    """target(*args) on a new thread; its result, once the thread has ended."""
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(target(*args)), name="sandbox-job")
    thread.start()
    thread.join()
    return bool(result and result[0])


def _run_jobs(conn: Connection, memory_mb: int,
              warm_up: tuple[str, dict[str, object]] | None) -> bool:
    """Say ready, then run jobs until the server goes (False) or this thread is reniced (True).

    Each reply carries the worker's CPU seconds so far (the pool's baseline for the next job)
    and whether this thread was reniced, and so ends with it.
    """
    if warm_up is not None:
        # A fresh worker's first job runs several times slower (lazy imports and inits, page
        # faults): pay for that before saying ready. At full priority: the pool starts workers
        # when a long job has taken one's place, and needs this one soon. (At nice 19, on a
        # class under attack, a start took 1-2 s instead of 40 ms, and quick programs queued.)
        _run_job(*warm_up, START_SECONDS, memory_mb)
        _tidy_gpu(memory_mb)
        _freeze_heap()  # the warm-up's lazy imports and caches are long-lived too
    priority = os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)
    send(conn, (_statm("self")[1], time.process_time(), _gpu_free_bytes()))
    while True:
        try:
            target, kwargs, cpu_seconds = receive(conn)
        except EOFError:
            return False
        status, value, *remote_traceback = _run_job(target, kwargs, cpu_seconds, memory_mb)
        reniced = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)) != priority
        after = RETIRE if _cuda_broken() else REJOIN if reniced else GO_ON
        try:
            send(conn, (time.process_time(), after, status, value, *remote_traceback))
        except Exception as error:  # the value does not pickle, or is too large to
            send(conn, (time.process_time(), after, *_failure(error, memory_mb)))
        if after == RETIRE:
            return False
        # After the reply, so the learner does not wait for either.
        _collect_garbage()
        _tidy_gpu(memory_mb)
        if after == REJOIN:
            return True


def send(conn: Connection, message: tuple[object, ...]) -> None:
    """Send a message down a worker's pipe (either end); `receive` reads it.

    Pickled plainly, not by Connection.send's ForkingPickler, which copies its table of
    reducers (torch adds some 70, for sharing tensors between processes) into every pickler
    it makes: that cost 20 us of a job's 120 us round trip. Jobs take and return plain data:
    JSON bytes, numbers, strings and AppErrors, never a tensor to share.
    """
    conn.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))


def receive(conn: Connection) -> Any:  # as Connection.recv: each side knows the shape
    """The next message from a worker's pipe; EOFError once the other end has closed."""
    return pickle.loads(conn.recv_bytes())


def _cuda_torch() -> ModuleType | None:
    """torch, where this worker has started CUDA; else None (a CPU worker)."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.cuda.is_initialized() else None


def _cuda_broken() -> bool:
    """Whether this worker's CUDA context has failed for good (see app.tensors.cuda_broken)."""
    if _cuda_torch() is None:
        return False
    from app.tensors import cuda_broken

    return cuda_broken()


def _gpu_free_bytes() -> int | None:
    """The GPU's free memory, for the pool's count of what more workers would fit; None on a
    CPU worker."""
    torch = _cuda_torch()
    return None if torch is None else int(torch.cuda.mem_get_info()[0])


def _tidy_gpu(memory_mb: int) -> None:
    """On a CUDA worker: cap what its allocator may hold, and give back what the job freed.

    The cap is the worker's memory limit, so one program cannot take the GPU from the others:
    past it, torch raises its own out-of-memory error, which the learner sees as too large.
    Without the give-back, torch's caching allocator would keep a job's freed blocks for the
    next job: every idle worker would hold on to the most its programs ever used.
    """
    torch = _cuda_torch()
    if torch is None:
        return
    global _gpu_capped
    if not _gpu_capped:
        total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, (memory_mb << 20) / total))
        _gpu_capped = True
    if torch.cuda.memory_reserved():
        torch.cuda.empty_cache()


_gpu_capped = False


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


def _collect_garbage() -> None:
    """Free what the last job left in reference cycles, so the next starts as a fresh session.

    A program's run leaves cycles (the interpreter's builtins and size guard hold their
    machine, which holds the program's variables), so its tensors outlived the job until the
    collector next ran, and that waits on allocations, not bytes: a program using 800 MB, well
    within its limits, ran out of the worker's 2 GiB on its third run in a row. With the heap
    frozen (_freeze_heap), a full collection walks only what jobs made: 34 us after S2, about
    what the collections that jobs set off now and then cost (35 us a job, averaged), and now
    never inside a learner's request.
    """
    gc.collect()


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
    # Only in a worker, which has torch: hints imports it, and the server need not.
    from app.sandbox import hints

    # .. note:: torch's CPU allocator reports an exhausted RLIMIT_AS as RuntimeError
    #    ("DefaultCPUAllocator: can't allocate memory"), not MemoryError.
    text = hints.text_of(error)  # not str(error): see there
    if hints.out_of_memory(error, text):
        return ("error", _out_of_memory(memory_mb))
    if "CUDA error" in text:
        # Not a bug of ours: CUDA reports a program's failed kernel (a device-side assert: an
        # index out of range) at a later call, here one the job made after the program ran.
        return ("error", hints.from_exception(error, None))
    message = f"{type(error).__name__}: {text}"
    return ("bug", message, "".join(traceback.format_tb(error.__traceback__)) + message)


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
