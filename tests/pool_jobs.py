"""Jobs that tests/test_workers.py runs inside sandbox workers, as "tests.pool_jobs:<name>"."""

from __future__ import annotations

import os
import time

from app.errors import Disallowed, Timeout


def echo(**kwargs: object) -> dict[str, object]:
    return kwargs


def pid() -> int:
    return os.getpid()


def sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def niceness_after(seconds: float) -> int:
    """Busy for `seconds` of wall time, using what CPU it gets; then its niceness."""
    spin_for(seconds)
    return os.getpriority(os.PRIO_PROCESS, 0)


def priority() -> tuple[int, int, int]:
    """(pid, niceness, scheduling policy) of the thread running this job."""
    return os.getpid(), os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)


def renice_self() -> int:
    """Renice the job's thread as the pool does, but after the job, as a late renice lands."""
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    return os.getpid()


def time_out_after(seconds: float) -> None:
    """End as the interpreter ends a program past its wall limit: with Timeout, by itself."""
    time.sleep(seconds)
    raise Timeout("the program ran longer than it may", hint_key="hint.timeout")


def spin_for(seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass
    return os.getpid()


def refuse() -> None:
    raise Disallowed("import os is not allowed", line=3, hint_key="hint.disallowed")


def fail() -> None:
    raise KeyError("boom")


def spin() -> None:
    while True:
        pass


def allocate(megabytes: int) -> int:
    return len(bytearray(megabytes << 20))


def hold_in_a_cycle(megabytes: int) -> int:
    """Allocate `megabytes` that only a reference cycle holds once the job has returned."""
    holder: dict[str, object] = {"memory": bytearray(megabytes << 20)}
    holder["itself"] = holder
    return os.getpid()


def fill(megabytes: int, hold_seconds: float) -> int:
    """Touch every page, so the memory is resident and not merely reserved."""
    chunks = [b"\x01" * (64 << 20) for _ in range(megabytes // 64)]
    time.sleep(hold_seconds)
    return len(chunks)


def abort() -> None:
    os.abort()


def exit_now(code: int) -> None:
    os._exit(code)


def write(path: str) -> None:
    with open(path, "w") as file:
        file.write("x" * 100)


def cwd() -> str:
    return os.getcwd()


def torch_threads() -> tuple[int, int]:
    import torch

    return torch.get_num_threads(), torch.get_num_interop_threads()


_REMEMBERED: dict[str, object] = {}


def remember(value: object) -> None:
    _REMEMBERED["value"] = value


def recall() -> object:
    return _REMEMBERED.get("value")


def collector() -> tuple[int, int]:
    """(objects the collector no longer walks, objects it still does) in this worker."""
    import gc

    return gc.get_freeze_count(), len(gc.get_objects())


def cuda_error(text: str) -> None:
    """Fail as torch does when CUDA reports an error, outside any program's line."""
    raise RuntimeError(f"CUDA error: {text}")


def break_cuda_probe() -> int:
    """Make this worker report, after this job, that its CUDA context has failed.

    What a device-side assert does to a CUDA worker, on a machine with no GPU: the probe the
    worker asks after each job is the one thing patched.
    """
    from app.sandbox import worker_process

    worker_process._cuda_broken = lambda: True
    return os.getpid()


def cuda_allocate(megabytes: int) -> int:
    """Hold `megabytes` on the GPU for the job; the bytes torch's allocator reserved."""
    import torch

    block = torch.empty(megabytes << 20, dtype=torch.uint8, device="cuda")
    reserved = torch.cuda.memory_reserved()
    del block
    return reserved


def cuda_reserved() -> int:
    """The bytes torch's allocator holds on the GPU as this job starts."""
    import torch

    return torch.cuda.memory_reserved()
