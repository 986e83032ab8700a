"""lock_in: the walls a child puts up around itself, in order, before it reads its job.

Every step is irreversible. After it the child holds two pipes and /dev/null, has an
environment that holds only the numeric libraries' kernel choices (environment.py), an empty
working directory it cannot read, runs as an unprivileged user with no
capabilities, cannot gain privileges, reads only what imports need (Landlock), makes only the
system calls on the list (seccomp), and dies with the zygote. `Walls` says which walls to put
up: all of them, but for the tests that show each one matters by taking it away.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from dataclasses import dataclass

from gradient_lab.runner.child import landlock, seccomp

_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


@dataclass(frozen=True, slots=True)
class Walls:
    """Which walls a child puts up. The server always asks for all; tests take one away."""

    landlock: bool = True
    seccomp: bool = True
    user: bool = True  # an unprivileged user (when started as root) and no capabilities
    rlimits: bool = True
    log_syscalls: bool = False  # seccomp logs instead of refusing (scripts/learn-syscalls.py)


@dataclass(frozen=True, slots=True)
class Confinement:
    """What a child needs to lock itself in, made once by the zygote."""

    walls: Walls
    ruleset: int | None  # the Landlock ruleset's descriptor, inherited from the zygote
    uid: int  # the unprivileged user and group, used when the zygote runs as root
    gid: int
    workdir: str  # empty, and unreadable to that user
    address_space: int | None  # bytes of virtual memory; None on CUDA, which maps huge ranges
    cpu_seconds: int  # the CPU limit: SIGXCPU past it, SIGKILL a second later
    seccomp: bytes | None  # the filter, compiled once (seccomp.compile_filter)
    environment: dict[str, str]  # all a program finds in os.environ (child_environment)
    gpu_memory: int | None = None  # on a GPU: CUDA starts before the lock-in, capped at this


_libc = ctypes.CDLL(None, use_errno=True)


def lock_in(confinement: Confinement, keep: tuple[int, ...]) -> None:
    """Lock this process in; only the descriptors in `keep` stay open (with 0-2 on /dev/null)."""
    walls = confinement.walls
    if confinement.gpu_memory is not None:
        _start_cuda(confinement.gpu_memory)  # it opens the driver's devices, which come along
    _only_descriptors(keep, confinement.ruleset)
    os.chdir(confinement.workdir)
    os.environ.clear()  # unsetenv each: the C library's environment is emptied too
    os.environ.update(confinement.environment)  # libraries that read them at first use
    if walls.rlimits:
        _limit(confinement)
    if walls.user:
        _drop_privileges(confinement.uid, confinement.gid)
    # After the user changes, which clears it: die with the zygote, which dies with the server.
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(1)  # the zygote is already gone
    _prctl(_PR_SET_DUMPABLE, 0)  # no core, and no ptrace by another process of the same user
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    if walls.landlock and confinement.ruleset is not None:
        landlock.restrict_self(confinement.ruleset)
    if confinement.ruleset is not None:
        os.close(confinement.ruleset)
    if walls.seccomp and confinement.seccomp is not None:
        seccomp.load(confinement.seccomp, os.getpid())


def _start_cuda(memory: int) -> None:
    """CUDA's context, made now (a ready child takes it off the request's path), and this
    process's share of the GPU capped: past it a program gets torch's out-of-memory error."""
    import torch

    torch.cuda.init()
    torch.empty(1, device="cuda")
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, memory / total))


def _only_descriptors(keep: tuple[int, ...], ruleset: int | None) -> None:
    """0-2 on /dev/null, `keep` and the ruleset open, every other descriptor closed."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    kept = sorted({*keep, *([] if ruleset is None else [ruleset]), 0, 1, 2})
    start = 3
    for fd in kept[3:]:
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _limit(confinement: Confinement) -> None:
    # (soft, hard): past the soft CPU limit SIGXCPU ends the child, past the hard one SIGKILL.
    cpu = confinement.cpu_seconds
    limits = [(resource.RLIMIT_FSIZE, (0, 0)), (resource.RLIMIT_CORE, (0, 0)),
              (resource.RLIMIT_NOFILE, (64, 64)), (resource.RLIMIT_MEMLOCK, (0, 0)),
              (resource.RLIMIT_MSGQUEUE, (0, 0)), (resource.RLIMIT_CPU, (cpu, cpu + 1))]
    if confinement.address_space is not None:
        space = confinement.address_space
        limits.append((resource.RLIMIT_AS, (space, space)))
    for kind, (soft, hard) in limits:
        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))
    # A write past RLIMIT_FSIZE raises OSError instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _drop_privileges(uid: int, gid: int) -> None:
    """As root: become uid/gid with no groups; either way, keep no capability at all."""
    if os.geteuid() == 0:
        for cap in range(_last_capability() + 1):
            _prctl(_PR_CAPBSET_DROP, cap)  # the bounding set, while CAP_SETPCAP is still held
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # clears the permitted and effective sets
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    _capset_none()


def _last_capability() -> int:
    """The highest capability number this kernel knows (40 on Linux 5.9 and later)."""
    cap = 40
    while _libc.prctl(23, cap + 1, 0, 0, 0) >= 0:  # PR_CAPBSET_READ of an unknown one fails
        cap += 1
    return cap


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _capset_none() -> None:
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()  # all zero
    if _libc.capset(ctypes.byref(header), data) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"capset: {os.strerror(error)}")


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl({option}): {os.strerror(error)}")
