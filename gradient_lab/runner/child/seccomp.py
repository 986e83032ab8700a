"""The child's seccomp-bpf filter: the allow-list (syscalls.py), the argument checks below, and
EPERM for every other system call.

libseccomp (through pyseccomp) compiles the rules to BPF and knows each architecture's
numbers, rather than BPF assembled by hand. It compiles them once, in the zygote
(`compile_filter`);
each child loads the program (`load`), and adds the one rule that needs its own pid: signals
only to itself.
"""

from __future__ import annotations

import ctypes
import errno
import os
import tempfile

import pyseccomp as seccomp

from gradient_lab.runner.child.syscalls import ALLOWED

_CLONE_THREAD = 0x00010000
_SELF = 0  # pid 0: the calling process, for the calls that take a pid
# prctl options a torch program uses: thread names, VMA names (glibc's malloc), reading flags.
_PRCTL = {"PR_GET_DUMPABLE": 3, "PR_SET_NAME": 15, "PR_GET_NAME": 16, "PR_GET_SECCOMP": 21,
          "PR_CAPBSET_READ": 23, "PR_GET_NO_NEW_PRIVS": 39, "PR_SET_VMA": 0x53564D41}
# ioctls of the CPU path: isatty() asks TCGETS, io asks FIONREAD; both only read.
_IOCTL = {"TCGETS": 0x5401, "FIONREAD": 0x541B, "FIOCLEX": 0x5451, "FIONCLEX": 0x5450}
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_OPTIMIZE_AS_A_TREE = 2  # SCMP_FLTATR_CTL_OPTIMIZE: a binary search, not a list, per call


def compile_filter(*, cuda: bool, log: bool = False) -> bytes:
    """The filter as BPF: the list and the checked calls allowed, the rest refused.

    `cuda`: the NVIDIA driver talks through ioctls on its own devices, with numbers of its own,
    so on a GPU ioctl goes unchecked (Landlock keeps which devices are open to what CUDA
    opened before the lock-in). `log`: allow everything, but have the kernel log what the
    list lacks (scripts/learn-syscalls.py reads the log).
    """
    rules = seccomp.SyscallFilter(seccomp.LOG if log else seccomp.ERRNO(errno.EPERM))
    rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, _OPTIMIZE_AS_A_TREE)
    for names in ALLOWED.values():
        for name in names:
            _allow(rules, name)
    # Threads, never processes: a clone without CLONE_THREAD would be a new process. glibc
    # tries clone3 first, whose flags sit behind a pointer no filter can read: ENOSYS sends it
    # back to clone.
    _allow(rules, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, _CLONE_THREAD))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # Signals: raise(), abort() and Python's timers use these; `load` narrows them to itself.
    _allow(rules, "kill")
    _allow(rules, "tgkill")
    # Calls that name a process: only this one (pid 0), so no child reads or moves another.
    for name in ("prlimit64", "sched_getaffinity", "sched_setaffinity"):
        _allow(rules, name, seccomp.Arg(0, seccomp.EQ, _SELF))
    _allow(rules, "getpriority", seccomp.Arg(1, seccomp.EQ, _SELF))
    for option in _PRCTL.values():
        _allow(rules, "prctl", seccomp.Arg(0, seccomp.EQ, option))
    if cuda:
        _allow(rules, "ioctl")
    else:
        for request in _IOCTL.values():
            _allow(rules, "ioctl", seccomp.Arg(1, seccomp.EQ, request))
    with tempfile.TemporaryFile() as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()


def load(program: bytes, pid: int) -> None:
    """Put the compiled filter on this process for good, with signals only to `pid`, itself.

    The kernel runs every filter a process has and keeps the strictest answer. The small one
    goes first, while the big one does not yet refuse the call that loads a filter.
    """
    own = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in ("kill", "tgkill"):
        own.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(0, seccomp.NE, pid))
    own.load()
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"seccomp: {os.strerror(error)}")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)


def _allow(rules: seccomp.SyscallFilter, name: str, *checks: seccomp.Arg) -> None:
    try:
        rules.add_rule(seccomp.ALLOW, name, *checks)
    except OSError as error:
        # A call this architecture lacks (open and stat are x86-64's alone) has nothing to allow.
        if error.errno not in (errno.EINVAL, errno.EFAULT, errno.EDOM):
            raise
