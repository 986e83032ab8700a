"""report(): a child's own view of its walls, read from inside them (the `walls` job).

/proc is out of its reach, so it asks the kernel directly: capget for its capability sets,
prctl for the bounding set, seccomp mode and no_new_privs, and tries to open what it must not.
The server checks this at start-up, and the tests assert it.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

_PR_CAPBSET_READ, _PR_GET_SECCOMP, _PR_GET_NO_NEW_PRIVS = 23, 21, 39
_CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def report() -> dict[str, Any]:
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _libc.capget(ctypes.byref(header), data)
    bounding = sum(1 << cap for cap in range(64) if _libc.prctl(_PR_CAPBSET_READ, cap, 0, 0,
                                                                0) == 1)
    return {
        "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "egid": os.getegid(),
        "groups": os.getgroups(),
        "cap_effective": data[0].effective | data[1].effective << 32,
        "cap_permitted": data[0].permitted | data[1].permitted << 32,
        "cap_inheritable": data[0].inheritable | data[1].inheritable << 32,
        "cap_bounding": bounding,
        "seccomp": _libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0),
        "no_new_privs": _libc.prctl(_PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
        "environment": dict(os.environ),
        "reads_root": _can(lambda: os.listdir("/")),
        "reads_proc": _can(lambda: open("/proc/self/status").read()),
        "cwd_readable": _can(lambda: os.listdir(".")),
        # The installation, from any folder (a venv in /root): what a lazy import reads.
        "reads_imports": all(_can(lambda path=path: open(path, "rb").read(1))
                             for path in _imported()),
    }


def _imported() -> list[str]:
    """The files of the standard library's os and of torch, where the children import from."""
    return [module.__file__ for module in (os, sys.modules.get("torch"))
            if module is not None and module.__file__ is not None]


def _can(attempt: Any) -> bool:
    try:
        attempt()
    except OSError:
        return False
    return True
