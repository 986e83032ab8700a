"""Inside the zygote: a fork server (as multiprocessing calls one), whose process has imported
torch and the labs, and forks every child.

The pool starts it through `Zygote` (zygote.py) as `python -m gradient_lab.jobs`, which calls
`main`. It imports what learners' programs use, warms up, makes the Landlock ruleset once, then
forks a child for each "fork" the pool sends: the child locks itself in and waits for its job
(child/serve.py), and the pool gets the child's pid, its two pipes and a pidfd to kill it by.
The zygote reaps every child and tells the pool how each one ended. It never runs a
learner's program itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import glob
import importlib
import json
import os
import pwd
import select
import signal
import socket
import sys
import sysconfig
from collections.abc import Callable, Mapping
from math import ceil

import gradient_lab
from gradient_lab.runner.child import landlock, seccomp
from gradient_lab.runner.child.environment import child_environment
from gradient_lab.runner.child.lockin import Confinement
from gradient_lab.runner.child.serve import Job, serve
from gradient_lab.runner.pool import mounts
from gradient_lab.runner.pool.zygote import ZygoteConfig

# What learners' programs import, loaded before any fork: a child then finds each in memory,
# and need not read it from a disk that its user may not be allowed to read.
PRELOAD = (
    "abc", "argparse", "array", "bisect", "cmath", "collections", "contextlib", "copy", "csv",
    "dataclasses", "datetime", "decimal", "enum", "fractions", "functools", "heapq",
    "importlib.metadata", "importlib.readers", "importlib.resources",
    "itertools", "json", "math", "numbers", "operator", "pprint", "random", "re",
    "statistics", "string", "textwrap", "time", "timeit", "traceback", "types", "typing",
    "unittest", "warnings", "weakref",
    "numpy", "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.optim",
    "torch.optim.lr_scheduler", "torch.utils.data", "torch.autograd",
    "torch.autograd.functional", "torch.autograd.gradcheck", "torch.autograd.graph",
    "torch.autograd.profiler", "torch.distributions", "torch.func", "torch.linalg",
    "torch.nn.utils", "torch.testing", "torch.utils.checkpoint",
)
_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25



def main(jobs: Mapping[str, Job], warm_up: Callable[[], None]) -> None:
    """The zygote's life: prepare, say hello, then fork and reap until the pool goes."""
    config = ZygoteConfig.from_json(sys.argv[1])
    # Ctrl+C in the server's terminal reaches its whole process group: the server stops itself
    # and closes the socket, which ends the zygote. Here it only printed a KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # It ends when the pool's end of the socket closes, as it does when the server dies.
    channel = socket.socket(fileno=config.socket_fd)
    prepare(warm_up)
    try:
        confinement, walls_up = confinement_of(config)
    except mounts.NoWay as refusal:  # the pool refuses to start, with this sentence
        channel.send(json.dumps({"refused": str(refusal)}).encode())
        return
    channel.send(json.dumps({"hello": walls_up}).encode())
    _fork_and_reap(channel, confinement, jobs)


def prepare(warm_up: Callable[[], None]) -> None:
    import torch

    torch.set_num_threads(1)  # before any op: one thread per child, as the lab promises
    torch.set_num_interop_threads(1)
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    warm_up()  # a child then starts with torch's lazy imports and first-call costs paid
    # What is alive now lives as long as the zygote: the collector need not walk it in every
    # child, and walking it would copy each page it touches.
    gc.collect()
    gc.freeze()
    _fold_into_huge_pages()


def _fold_into_huge_pages() -> None:
    """Back the zygote's writable memory with 2 MiB pages where the kernel allows it.

    A fork copies one page-table entry per 2 MiB instead of 512, and an exit frees one: with
    torch's 200 MB of heap that halved a child's fork and exit here. Best effort: a kernel
    without MADV_COLLAPSE (before 6.1), or with transparent huge pages off, leaves it as it is.
    """
    huge = 1 << 21
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        anonymous = len(fields) == 5 or fields[5] == "[heap]"
        if not anonymous or "w" not in fields[1]:
            continue
        start, end = (int(address, 16) for address in fields[0].split("-"))
        start, end = (start + huge - 1) & -huge, end & -huge
        if end > start:
            libc.madvise(start, end - start, _MADV_HUGEPAGE)
            libc.madvise(start, end - start, _MADV_COLLAPSE)


def confinement_of(config: ZygoteConfig) -> tuple[Confinement, dict[str, object]]:
    """The children's walls, and what the pool reports of them (/healthz, the start-up log)."""
    abi = landlock.abi_version()
    user = pwd.getpwnam(config.user)
    root = os.geteuid() == 0
    readable = _readable()
    covered: list[str] = []
    if root and config.walls.user:
        covered = mounts.open_the_way(readable, user.pw_uid, user.pw_gid)
    devices = sorted(glob.glob("/dev/nvidia*")) if config.cuda else []
    ruleset = landlock.make_ruleset(readable, abi, devices) \
        if abi and config.walls.landlock else None
    program = seccomp.compile_filter(cuda=config.cuda, log=config.walls.log_syscalls) \
        if config.walls.seccomp and _has_seccomp() else None
    address_space = None
    if not config.cuda:
        address_space = _virtual_bytes() + (config.memory_mb << 20)
    confinement = Confinement(
        walls=config.walls, ruleset=ruleset, uid=user.pw_uid, gid=user.pw_gid,
        workdir=config.workdir, address_space=address_space,
        cpu_seconds=ceil(config.cpu_seconds) + 1, seccomp=program,
        environment=child_environment(os.environ, config.workdir),
        gpu_memory=(config.memory_mb << 20) if config.cuda else None)
    walls_up = {"landlock": abi if ruleset is not None else 0, "seccomp": program is not None,
                "user": config.user if root and config.walls.user else
                pwd.getpwuid(os.geteuid()).pw_name,
                "rlimits": config.walls.rlimits, "covered": covered}
    return confinement, walls_up


def _readable() -> list[str]:
    """What a child may read: where imports come from, and the folders of the shared libraries
    already loaded (a module imported later may need one of their neighbours)."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(os.path.dirname(os.path.abspath(gradient_lab.__file__)))  # the lab's own package
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split(maxsplit=5)[-1].strip()
            if ".so" in path and path.startswith("/"):
                roots.add(os.path.dirname(path))
    return sorted(root for root in roots if os.path.exists(root))


def _has_seccomp() -> bool:
    with open("/proc/self/status") as status:
        return any(line.startswith("Seccomp:") for line in status)


def _virtual_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _fork_and_reap(channel: socket.socket, confinement: Confinement,
                   jobs: Mapping[str, Job]) -> None:
    # A child's end wakes select() through this pipe (Python's own signal wake-up).
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    while True:
        readable, _, _ = select.select([channel.fileno(), wake_read], [], [])
        if wake_read in readable:
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_read, 512):
                    pass
            _reap(channel)
        if channel.fileno() in readable:
            command = channel.recv(64)
            if command != b"fork":  # b"" when the pool has gone
                return
            _fork(channel, confinement, jobs, (wake_read, wake_write))


def _fork(channel: socket.socket, confinement: Confinement, jobs: Mapping[str, Job],
          wake: tuple[int, int]) -> None:
    pipes: list[int] = []
    try:
        job_read, job_write = os.pipe2(os.O_CLOEXEC)
        pipes += [job_read, job_write]
        reply_read, reply_write = os.pipe2(os.O_CLOEXEC)
        pipes += [reply_read, reply_write]
        pid = os.fork()
    except OSError as error:  # a task or memory limit: that job is refused, the zygote lives
        for fd in pipes:
            os.close(fd)
        channel.send(json.dumps({"fork_failed": os.strerror(error.errno or 0)}).encode())
        return
    if pid == 0:
        channel.detach()  # lock_in closes it; the object must not close a reused number later
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in `python program.py`
        serve(job_read, reply_write, confinement, jobs)  # never returns
    os.close(job_read)
    os.close(reply_write)
    pidfd = os.pidfd_open(pid)
    try:
        socket.send_fds(channel, [json.dumps({"forked": pid}).encode()],
                        [job_write, reply_read, pidfd])
    except OSError:  # the pool has gone: its end's EOF ends the loop
        os.kill(pid, signal.SIGKILL)
    finally:
        for fd in (job_write, reply_read, pidfd):
            os.close(fd)


def _reap(channel: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        # The pool may have gone (the server stopping): reap on; its end's EOF ends the loop.
        with contextlib.suppress(OSError):
            channel.send(json.dumps({"exited": pid, "status": status}).encode())
