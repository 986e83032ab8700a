"""One sandbox worker process as the server sees it: start it, warm it up, stop it.

The pool (workers.py) decides which worker runs what; worker_process.py is what runs inside one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from app.errors import AppError, ProgramError, Timeout
from app.sandbox.worker_process import START_SECONDS, _out_of_memory, _serve, receive


@dataclass(eq=False, slots=True)
class Worker:
    process: BaseProcess
    conn: Connection
    idle_rss: int = 0  # resident bytes when ready; a job may add memory_mb on top
    cpu_idle: float = 0.0  # CPU seconds it had used when its last job ended
    idle_since: float = 0.0  # time.monotonic() when it last went idle
    reniced: bool = False  # its job's thread runs at low priority
    long: bool = False  # another worker has taken its place in the pool while its job runs
    paused: bool = False  # its long job is stopped (SIGSTOP) until a long job's turn is free
    gpu_free: int | None = None  # the GPU's free bytes when it was ready; None on the CPU

    @property
    def pid(self) -> int:
        assert self.process.pid is not None  # set by start(), before the worker is used
        return self.process.pid

    def alive(self) -> bool:
        # The sentinel turns readable when the process ends. Unlike is_alive(), this reads
        # nothing from it, so it cannot race the join() of the thread waiting on this worker.
        # A bare poll(): multiprocessing's wait() builds a selector each time (3 us, per job).
        poller = select.poll()
        poller.register(self.process.sentinel, select.POLLIN)
        return not poller.poll(0)


def start_worker(context: ForkServerContext, memory_mb: int, limit_address_space: bool,
                 cwd: str, warm_up: tuple[str, dict[str, object]] | None) -> Worker:
    """A new worker, confined and ready (warm, if `warm_up` names a job); raises if it is not.

    A fresh worker's first job runs several times slower (page faults, lazy inits), so the
    worker pays for that with `warm_up` before it says it is ready.
    """
    conn, child_conn = context.Pipe()
    process = context.Process(target=_serve, name="sandbox-worker", daemon=True,
                              args=(child_conn, memory_mb, limit_address_space, cwd, warm_up))
    worker = Worker(process, conn)
    try:
        try:
            process.start()
        finally:
            child_conn.close()
        if not conn.poll(START_SECONDS):
            raise RuntimeError(f"a sandbox worker was not ready after {START_SECONDS:g} s")
        # EOFError: it died starting up
        worker.idle_rss, worker.cpu_idle, worker.gpu_free = receive(conn)
        return worker
    except BaseException:
        stop_worker(worker)
        raise


def death(worker: Worker, cpu_seconds: float, memory_mb: int) -> AppError:
    """The error for a job whose worker died under it, from how the process ended."""
    worker.process.join(1.0)
    code = worker.process.exitcode
    if code == -signal.SIGXCPU:
        return Timeout(f"the program used more than {cpu_seconds:g} s of CPU time",
                       hint_key="hint.timeout")
    if code == -signal.SIGKILL:  # the pool kills only once it stops waiting: the OOM killer
        return _out_of_memory(memory_mb)
    how = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
    return ProgramError(f"the worker running the program stopped unexpectedly ({how})",
                        hint_key="hint.worker_crashed")


def renice_job(worker: Worker) -> None:
    """Move the worker's running job to the back of the CPU queue; its worker stays as it is.

    Linux nice and scheduling policy are per thread, and a worker runs its jobs on a job thread
    (the main thread only starts them; see worker_process._serve), so every thread but the main
    one is reniced. The job's torch ops run on that thread (workers use one torch thread).
    """
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{worker.pid}/task")]
    except FileNotFoundError:
        return  # it has just exited: the pipe's EOF will report it
    for tid in threads:
        if tid == worker.pid:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.setpriority(os.PRIO_PROCESS, tid, 19)
        # And SCHED_IDLE, where Linux lets us: CFS weighs a nice-19 thread 15 against a
        # nice-0 one's 1024, and a class under attack runs a score of long jobs at once, which
        # add up; an idle-class thread weighs 3. It still runs, at the back, until its limit.
        with contextlib.suppress(ProcessLookupError, PermissionError, AttributeError, OSError):
            os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))


def stop_worker(worker: Worker) -> None:
    """Kill the process (if it started) and wait for it; close the server's end of the pipe."""
    if worker.process.pid is not None:
        worker.process.kill()
        worker.process.join(5.0)
    worker.conn.close()


def uses_cuda(device: str) -> bool:
    """Whether workers on this device setting will use CUDA ("auto": if this machine has it)."""
    if device != "auto":
        return device.startswith("cuda")
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()
