"""Which system calls do learners' programs make inside the walls? Derive the seccomp allow-list.

Runs the tutorial's examples, the real-world corpus (tests/corpus/programs) and every built-in
descent and training job through a pool, with strace attached to the zygote and following each
child it forks. A child's calls count from the moment it loaded its filter (the prctl that sets
SECCOMP_MODE_FILTER); the lock-in before that needs no place on the list. Prints the calls made,
those the list lacks (each was refused with EPERM: a program needed it) and those on the list
no program made.

    sudo .venv/bin/python scripts/learn-syscalls.py          # needs strace, and root to trace
    sudo .venv/bin/python scripts/learn-syscalls.py --suite  # the tests' programs (slower)

Run it again when torch changes, and on a GPU machine for the CUDA path's start-up (its children
initialise CUDA before they load the filter, and its ioctls are allowed unchecked).
"""

from __future__ import annotations

import asyncio
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gradient_lab import jobs  # noqa: E402
from gradient_lab.descent.presets import PRESETS  # noqa: E402
from gradient_lab.graph.examples import EXAMPLES  # noqa: E402
from gradient_lab.runner.child.syscalls import ALLOWED  # noqa: E402
from gradient_lab.runner.limits import Limits  # noqa: E402
from gradient_lab.runner.pool.pool import Pool, PoolConfig  # noqa: E402
from gradient_lab.training import TrainConfig  # noqa: E402
from gradient_lab.web import schemas  # noqa: E402

# The calls seccomp.py allows with argument checks, beside the list.
CHECKED = {"clone", "clone3", "kill", "tgkill", "prlimit64", "sched_getaffinity",
           "sched_setaffinity", "getpriority", "prctl", "ioctl"}
_CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]")
_RESULT = re.compile(r"= (\d+)$")
_FILTER = "PR_SET_SECCOMP"


# Test modules whose programs are a learner's (not the hostile ones, whose refused calls must
# stay refused): run with --suite, under strace, which follows pytest into every child.
SUITE = ["tests/runner/test_pool.py", "tests/web/test_graph_api.py",
         "tests/graph/test_tracing.py", "tests/web/test_descent_api.py",
         "tests/web/test_training_api.py", "tests/test_tutorial.py"]


def main() -> int:
    with tempfile.NamedTemporaryFile(suffix=".strace") as log:
        if "--suite" in sys.argv:
            subprocess.run(["strace", "-f", "-qq", "-o", log.name, sys.executable, "-m",
                            "pytest", "-q", "-p", "no:cacheprovider", *SUITE], cwd=ROOT)
        else:
            _trace_the_corpus(log.name)
        used = _calls_after_the_filter(Path(log.name).read_text(errors="replace"))
    listed = {name for names in ALLOWED.values() for name in names} | CHECKED
    print(f"{len(used)} system calls made inside the walls:")
    print("  " + " ".join(sorted(used)))
    missing, unused = sorted(set(used) - listed), sorted(listed - set(used))
    print(f"not on the list ({len(missing)}): {' '.join(missing) or 'none'}")
    print(f"on the list, made by no program ({len(unused)}): {' '.join(unused) or 'none'}")
    return 1 if missing else 0


def _trace_the_corpus(log: str) -> None:
    pool = Pool(PoolConfig(ready=2, jobs=2))
    pool.start()
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", log, "-p", str(pool._zygote.pid)])
    time.sleep(1.0)  # attached
    try:
        asyncio.run(_drive(pool))
    finally:
        time.sleep(0.5)
        tracer.terminate()
        tracer.wait()
        pool.close()


async def _drive(pool: Pool) -> None:
    limits = Limits(wall_seconds=30, cpu_seconds=30)
    programs = [lesson.program for lesson in EXAMPLES.values()]
    programs += [path.read_text() for path in sorted((ROOT / "tests/corpus/programs").glob("*.py"))]
    for program in programs:
        await _quietly(pool.run(jobs.graph, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                                strangers_code=True, code=program, device="cpu", limits=limits))
    for preset in PRESETS:
        race = schemas.DescentRequest.model_validate(
            {k: v for k, v in preset.items() if k not in ("id", "section")})
        await _quietly(pool.run(jobs.descent, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                                strangers_code=False, **race.spec(), start=race.start,
                                steps=race.steps, runs=[run.to_run() for run in race.runs],
                                noise=race.noise, seed=race.seed, sweep=race.sweep,
                                limits=limits))
    for lesson in schemas.LESSONS.values():
        if lesson.streamed:  # the training loop: below
            continue
        await _quietly(pool.run(jobs.lesson, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                                strangers_code=False, function=lesson.function, device="cpu",
                                options=lesson.request().options()))
    async for _ in pool.stream(jobs.training_run, wall_seconds=30, cpu_seconds=30,
                               queue_seconds=60, strangers_code=False,
                               config=TrainConfig(steps=50), device="cpu", limits=limits):
        pass


async def _quietly(run: object) -> None:
    try:
        await run  # type: ignore[misc]
    except Exception as error:  # noqa: BLE001 - a program's own error still made its calls
        print(f"  ({type(error).__name__}: {str(error)[:80]})", file=sys.stderr)


def _calls_after_the_filter(trace: str) -> collections.Counter[str]:
    filtered: set[str] = set()
    used: collections.Counter[str] = collections.Counter()
    for line in trace.splitlines():
        match = _CALL.match(line)
        if match is None:
            continue
        pid, name = match.groups()
        if pid in filtered:
            if "resumed>" not in line[:40]:
                used[name] += 1
            new = _RESULT.search(line)
            if name in ("clone", "clone3") and new:
                filtered.add(new.group(1))  # a thread: it inherits the filter
        if name == "prctl" and _FILTER in line:
            filtered.add(pid)
    return used


if __name__ == "__main__":
    sys.exit(main())
