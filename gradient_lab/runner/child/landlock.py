"""Landlock (landlock(7)): after restrict_self, this process may read only beneath the folders a
ruleset names, write nowhere, bind or connect no TCP port, and signal or reach no process
outside its own Landlock domain.

Three system calls, numbered alike on every architecture. The ruleset is made once, in the
zygote, and every child restricts itself with it: the rules name folders by open descriptors,
which the zygote can open before a child gives up the rights to.

(PyPI's `landlock` 1.0.0.dev5 handles only the file-system rights, not ABI 4's network rights
or ABI 6's scopes, so the lab keeps its own few lines of ctypes.)
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

# File-system rights, by the ABI that introduced them: everything the kernel knows is handled
# (refused), and a rule gives back only reading.
_WRITE_FILE, _READ_FILE, _READ_DIR, _IOCTL_DEV = 1 << 1, 1 << 2, 1 << 3, 1 << 15
_FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(*args: object) -> int:
    ctypes.set_errno(0)
    result = int(_libc.syscall(*args))
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"landlock: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI (7 on Linux 6.15); 0 where Landlock is missing or disabled."""
    try:
        return _syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except OSError:
        return 0


def make_ruleset(readable: Iterable[str], abi: int, devices: Iterable[str] = ()) -> int:
    """A ruleset's descriptor: read-only beneath each of `readable`, and nothing else but the
    `devices` (a GPU's, which CUDA opens read-write and talks to through ioctls)."""
    fs = _FS_RIGHTS[max(v for v in _FS_RIGHTS if v <= abi)]
    attr = _RulesetAttr(fs, 0, 0)
    size = ctypes.sizeof(_RulesetAttr) - 16  # ABI 1-3 know only the first field
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size += 8
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size += 8
    ruleset = _syscall(_CREATE_RULESET, ctypes.byref(attr), size, 0)
    try:
        for path in readable:
            # A folder takes both rights; the kernel refuses READ_DIR on a file.
            rights = _READ_FILE | (_READ_DIR if os.path.isdir(path) else 0)
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, fd)
                _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        for device in devices:
            rights = _READ_FILE | _WRITE_FILE | (_IOCTL_DEV if abi >= 5 else 0)
            fd = os.open(device, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, fd)
                _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def restrict_self(ruleset: int) -> None:
    """Enforce the ruleset on this process and all it starts, for good (needs no_new_privs)."""
    _syscall(_RESTRICT_SELF, ruleset, 0)
