"""Where a program run's CPU goes: `python bench/child_cost.py [--children N]`.

bench/runner.py reports the CPU of one S2 run, fork and all. This breaks that figure down. The
process makes itself a zygote as the server's is (torch imported and warmed up, what lives
frozen, the same walls), then forks rows of children, each row doing a little more than the
one before:

1. fork and exit, nothing else;
2. + the lock-in: every wall the server's children put up;
3. + the S2 job, as a child runs it (the job read from a pipe, the reply written to one);
4. the S2 job run a second time in the same child: what it costs once the child's memory is
   its own (no copy-on-write faults left), the floor that no change to forking can go under.

Each row reports a child's CPU (user and system, from wait4), its page faults, the parent's
CPU for the fork, and its ratio to row 1 of the same run. Means, not medians: the kernel splits
a child's CPU between user and system by sampling, so one child's split is coarse.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
from gradient_lab.runner.child.environment import numeric_environment  # noqa: E402

# What the pool gives the zygote, before numpy or torch load.
os.environ.update(numeric_environment(os.environ))

from gradient_lab import jobs  # noqa: E402
from gradient_lab.graph.examples import EXAMPLES  # noqa: E402
from gradient_lab.runner.child.lockin import Walls, lock_in  # noqa: E402
from gradient_lab.runner.child.serve import serve  # noqa: E402
from gradient_lab.runner.limits import Limits  # noqa: E402
from gradient_lab.runner.pool import forkserver  # noqa: E402
from gradient_lab.runner.pool.zygote import ZygoteConfig  # noqa: E402

S2_JOB = json.dumps({"job": "graph", "wall_seconds": 5, "cpu_seconds": 5, "args": {
    "code": EXAMPLES["S2"].program, "device": "cpu", "limits": asdict(Limits())}}).encode()


def _measure(child: Callable[[int, int], None], children: int) -> list[float]:
    """Mean (child user ms, child system ms, child page faults, parent ms) over `children`.

    `child(job_read, reply_write)` runs in each fork; the parent writes S2's job and reads the
    reply to its end, as the pool does.
    """
    rows = []
    for _ in range(children):
        job_read, job_write = os.pipe()
        reply_read, reply_write = os.pipe()
        before = time.process_time()
        pid = os.fork()
        if pid == 0:
            os.close(job_write)
            os.close(reply_read)
            child(job_read, reply_write)
            os._exit(0)
        forked = time.process_time() - before
        os.close(job_read)
        os.close(reply_write)
        with contextlib.suppress(BrokenPipeError):  # rows 1 and 2 end without reading it
            os.write(job_write, S2_JOB)
        os.close(job_write)
        while os.read(reply_read, 1 << 16):
            pass
        os.close(reply_read)
        _, _, usage = os.wait4(pid, 0)
        rows.append((usage.ru_utime * 1e3, usage.ru_stime * 1e3, usage.ru_minflt, forked * 1e3))
    return [statistics.fmean(column) for column in zip(*rows, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=100, help="children per row")
    args = parser.parse_args()

    forkserver.prepare(jobs.warm_up)
    workdir = tempfile.mkdtemp(prefix="gradient-lab-bench-")
    confinement, walls = forkserver.confinement_of(ZygoteConfig(
        socket_fd=-1, walls=Walls(), workdir=workdir, user="nobody", memory_mb=2048,
        cpu_seconds=5.0, cuda=False))
    print(f"walls: {walls}")

    def second_run(job_read: int, reply_write: int) -> None:
        lock_in(confinement, keep=(job_read, reply_write))
        job = json.loads(os.read(job_read, 1 << 20))
        jobs.JOBS["graph"](job["args"])
        start = time.process_time()
        jobs.JOBS["graph"](job["args"])
        os.write(reply_write, f"{(time.process_time() - start) * 1e3:.3f}".encode())

    rows = {
        "1. fork and exit": lambda job, reply: None,
        "2. + lock-in": lambda job, reply: lock_in(confinement, keep=(job, reply)),
        "3. + S2 job (serve)": lambda job, reply: serve(job, reply, confinement, jobs.JOBS),
    }
    print(f"{'':24}{'child user':>11}{'system':>9}{'faults':>8}{'fork':>8}{'child / 1.':>12}")
    first = None
    for name, child in rows.items():
        user, system, faults, fork = _measure(child, args.children)
        first = first or user + system
        print(f"{name:24}{user:9.2f}ms{system:7.2f}ms{faults:8.0f}{fork:6.2f}ms"
              f"{(user + system) / first:11.1f}x", flush=True)

    warm = []
    for _ in range(max(5, args.children // 10)):
        read, write = os.pipe()
        job_read, job_write = os.pipe()
        if (pid := os.fork()) == 0:
            os.close(read)
            os.close(job_write)
            second_run(job_read, write)
            os._exit(0)
        os.close(write)
        os.close(job_read)
        os.write(job_write, S2_JOB)
        os.close(job_write)
        warm.append(float(os.read(read, 64) or "nan"))
        os.close(read)
        os.waitpid(pid, 0)
    print(f"4. S2 job again, warm: {statistics.median(warm):.2f} ms of CPU in the same child")


if __name__ == "__main__":
    main()
