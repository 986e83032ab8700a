"""A child's whole life after the fork: lock in, read one job, run it, answer, exit.

The job arrives on a pipe as JSON: {"job": name, "args": {...}, "wall_seconds", "cpu_seconds"}.
`jobs` (the zygote passes gradient_lab.jobs.JOBS) maps each name to a function of the JSON
arguments. A job returns its reply's JSON body, or an iterator of bodies (a stream); each goes back
as a frame (gradient_lab/runner/frames.py).
"""

from __future__ import annotations

import json
import os
import signal
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

from gradient_lab.errors import AppError, RunnerFailed, Timeout
from gradient_lab.runner import frames
from gradient_lab.runner.child.lockin import Confinement, lock_in
from gradient_lab.runner.child.program import Stop

Job = Callable[[dict[str, Any]], bytes | Iterator[bytes]]  # the JSON arguments in, the reply out
_JOB_BYTES = 16 << 20  # a job is the request's fields: the server bounds the request far below


def serve(job_fd: int, reply_fd: int, confinement: Confinement,
          jobs: Mapping[str, Job]) -> NoReturn:
    """Run one job in this freshly forked process, then end it."""
    try:
        lock_in(confinement, keep=(job_fd, reply_fd))
    except BaseException as error:  # noqa: BLE001 - nothing may run outside the walls
        frames.write(reply_fd, error=RunnerFailed(f"the runner's walls failed: {error!r}"))
        os._exit(1)
    try:
        request = json.loads(_read_all(job_fd))
        job = jobs[request["job"]]
        with _time_limits(request["wall_seconds"], request["cpu_seconds"]):
            reply = job(request["args"])
            if isinstance(reply, bytes):
                frames.write(reply_fd, reply)
            else:
                for body in reply:
                    frames.write(reply_fd, body)
    except Stop as stop:
        frames.write(reply_fd, error=stop.error)
    except AppError as error:
        partial = b"" if error.partial is None else json.dumps(error.partial).encode()
        frames.write(reply_fd, partial, error)
    except BaseException as error:  # noqa: BLE001 - a bug of the lab's: the server logs it
        frames.write(reply_fd, error=RunnerFailed(
            "".join(traceback.format_exception(error))[-3_000:]))
    else:
        frames.end(reply_fd)
    os._exit(0)


def _read_all(fd: int) -> bytes:
    chunks, size = [], 0
    while chunk := os.read(fd, 1 << 16):
        size += len(chunk)
        if size > _JOB_BYTES:
            raise RunnerFailed("the job is too large")
        chunks.append(chunk)
    return b"".join(chunks)


@contextmanager
def _time_limits(wall_seconds: float, cpu_seconds: float) -> Iterator[None]:
    """Stop the job with a 408 at its wall-clock or CPU limit, at the line it had reached.

    The CPU timer is the child's own. The wall clock is the pool's, which counts only the time
    the job ran (not the time it was stopped while others ran) and sends SIGALRM when it is up.
    Past either, a child that keeps going is killed (by the pool, or the kernel's RLIMIT_CPU):
    these handlers only end a job first, with a kinder message.
    """
    def out_of_time(signum: int, frame: object) -> None:
        if signum == signal.SIGALRM:
            raise Stop(Timeout(f"the program ran longer than {wall_seconds:g} s",
                               hint_key="hint.timeout"))
        raise Stop(Timeout(f"the program used more than {cpu_seconds:g} s of CPU time",
                           hint_key="hint.timeout"))

    signal.signal(signal.SIGALRM, out_of_time)
    signal.signal(signal.SIGPROF, out_of_time)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # one sent as it ended changes nothing
