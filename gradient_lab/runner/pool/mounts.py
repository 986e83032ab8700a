"""When the children's user cannot reach Python: a view of the file system where it can.

A server started as root runs its children as `nobody`. If Python or the app lives under a
folder that user may not enter (/root, with pyenv; a home folder of mode 750), a child could
import nothing that the zygote had not imported already, and read no source. Then the zygote
moves into a mount namespace of its own, which its children inherit: each closed folder on
the way to an import root is covered by an empty one that anyone may enter, and the way
through is bound back, so every path stays what it was. The covered folders' other contents
disappear from the view (what was in /root is gone for the children, as it should be).
Needs CAP_SYS_ADMIN, which the root it is meant for has; elsewhere it is not needed. A root
without it (a container's) cannot make the view: then the runner refuses to start (NoWay),
with a sentence saying what to change, rather than run programs that cannot import what
`python program.py` imports (torch imports much of itself lazily: torch.save, torch.func).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE, _MS_MOVE = 4096, 16384, 1 << 18, 8192
_libc = ctypes.CDLL(None, use_errno=True)


class NoWay(Exception):
    """The children's user cannot reach an import root, and this process cannot open a way."""


def open_the_way(roots: Iterable[str], uid: int, gid: int) -> list[str]:
    """Make every root reachable by uid/gid in this process's view; the folders covered.
    Raises NoWay, saying why and what to change, where the view cannot be made."""
    roots = list(roots)
    # From the top down: a folder bound back into a cover keeps its own mode, so a closed
    # folder inside a closed folder (pytest's 0700 temporary folders) is covered in its turn.
    closed = sorted({folder for root in roots for folder in _closed_on_the_way(root, uid, gid)},
                    key=lambda folder: folder.count("/"))
    if not closed:
        return []
    try:
        _call(_libc.unshare, _CLONE_NEWNS)
    except OSError as error:
        raise NoWay(_no_way(closed, roots, uid, error)) from error
    _call(_libc.mount, b"none", b"/", None, _MS_REC | _MS_PRIVATE, None)
    for folder in closed:
        keep = sorted({_child_toward(folder, root) for root in roots
                       if root.startswith(folder.rstrip("/") + "/")})
        _cover(folder, keep)
    return closed


def _no_way(closed: list[str], roots: list[str], uid: int, error: OSError) -> str:
    user = pwd.getpwuid(uid).pw_name
    below = sorted({root for root in roots for folder in closed
                    if root.startswith(folder.rstrip("/") + "/")})
    below = [root for root in below  # the highest of them name the rest
             if not any(root.startswith(other.rstrip("/") + "/") for other in below)]
    return (f"the runner's children run as {user}, who may not enter {' or '.join(closed)}, "
            f"on the way to where Python and the app are installed ({', '.join(below)}), and "
            f"without CAP_SYS_ADMIN ({error.strerror}) this server cannot open them a way: "
            f"their programs could import only what the runner preloaded. Install Python and "
            f"the app where {user} can read them (the Docker image has Python in /usr/local "
            f"and the app in /opt/venv), start the server with CAP_SYS_ADMIN, or start it as "
            f"a user other than root")


def _closed_on_the_way(root: str, uid: int, gid: int) -> list[str]:
    path = PurePosixPath(root)
    return [str(folder) for folder in reversed(path.parents) if not _enterable(folder, uid, gid)]


def _enterable(folder: PurePosixPath, uid: int, gid: int) -> bool:
    info = os.stat(folder)
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def _child_toward(folder: str, root: str) -> str:
    return PurePosixPath(root).relative_to(folder).parts[0]


def _cover(folder: str, keep: list[str]) -> None:
    """An empty folder that anyone may enter over `folder`, with `keep` bound back into it."""
    staging = tempfile.mkdtemp(prefix="gradient-lab-view-")
    for name in keep:
        os.mkdir(os.path.join(staging, name))
        _call(_libc.mount, os.path.join(folder, name).encode(),
              os.path.join(staging, name).encode(), None, _MS_BIND | _MS_REC, None)
    _call(_libc.mount, b"tmpfs", folder.encode(), b"tmpfs", 0, b"mode=0755,size=64k")
    for name in keep:
        os.mkdir(os.path.join(folder, name))
        _call(_libc.mount, os.path.join(staging, name).encode(),
              os.path.join(folder, name).encode(), None, _MS_MOVE, None)
        os.rmdir(os.path.join(staging, name))
    os.rmdir(staging)


def _call(function: Callable[..., int], *args: object) -> None:
    if function(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{function.__name__}: {os.strerror(error)}")
