"""One sandbox worker process as the server sees it: start it, warm it up, stop it.

The pool (workers.py) decides which worker runs what; worker_process.py is what runs inside one.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from app.errors import AppError, ProgramError, Timeout
from app.sandbox.worker_process import _out_of_memory, _serve, _usage

START_SECONDS = 30.0  # a worker not ready by then has failed to start


@dataclass(eq=False, slots=True)
class Worker:
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


def start_worker(context: ForkServerContext, memory_mb: int, limit_address_space: bool,
                 cwd: str, warm_up: tuple[str, dict[str, object]] | None) -> Worker:
    """A new worker, confined and ready (warm, if `warm_up` names a job); raises if it is not."""
    conn, child_conn = context.Pipe()
    process = context.Process(target=_serve, name="sandbox-worker", daemon=True,
                              args=(child_conn, memory_mb, limit_address_space, cwd))
    worker = Worker(process, conn)
    try:
        try:
            process.start()
        finally:
            child_conn.close()
        if not conn.poll(START_SECONDS):
            raise RuntimeError(f"a sandbox worker was not ready after {START_SECONDS:g} s")
        worker.idle_rss = conn.recv()  # EOFError: it died starting up; its stderr says why
        if warm_up is not None:
            # A fresh worker's first job runs several times slower (page faults, lazy inits):
            # pay for that here, not in a request.
            target, kwargs = warm_up
            conn.send((target, kwargs, START_SECONDS))
            if not conn.poll(START_SECONDS):
                raise RuntimeError(f"a sandbox worker's warm-up took over {START_SECONDS:g} s")
            conn.recv()  # whatever it returned, the worker is warm now
            worker.idle_rss = _usage(worker.pid)[1]
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
