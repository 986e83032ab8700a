"""A count on the threads a program runs at once: past it, Python's own error for a thread
that cannot start, which the program can catch and read.

Thousands of threads in under a second would spend the host's tasks, where a container or
RLIMIT_NPROC bounds them, and every other program's fork would fail. This counts the threads
Python starts (threading, concurrent.futures, _thread); one a C library starts for itself
through ctypes is bounded by the kernel's limits and the program's wall time instead (README,
security model).
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

THREADS_MAX = 64  # a program's own threads running at once, beside its main one


@contextmanager
def at_most(limit: int = THREADS_MAX) -> Iterator[None]:
    """Within this, a thread past `limit` raises RuntimeError: can't start new thread."""
    start = threading._start_new_thread  # type: ignore[attr-defined]  # what Thread.start calls
    running = 0
    lock = threading.Lock()

    def counted(function: Callable[..., object], args: tuple[object, ...],
                kwargs: dict[str, object] | None = None) -> int:
        nonlocal running
        with lock:
            if running >= limit:
                raise RuntimeError(f"can't start new thread: a program in the lab runs at "
                                   f"most {limit} threads at once")
            running += 1

        def run(*args: object, **kwargs: object) -> object:
            nonlocal running
            try:
                return function(*args, **kwargs)
            finally:
                with lock:
                    running -= 1
        try:
            return start(run, args, kwargs or {})
        except BaseException:
            with lock:
                running -= 1
            raise

    threading._start_new_thread = counted  # type: ignore[attr-defined]
    _thread.start_new_thread = counted
    try:
        yield
    finally:
        threading._start_new_thread = start  # type: ignore[attr-defined]
        _thread.start_new_thread = start
