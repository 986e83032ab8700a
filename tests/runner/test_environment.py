"""The numeric libraries compute in the lab as in `python program.py` on the same machine.

Some machines set OPENBLAS_CORETYPE (or MKL's equivalents) because older builds misdetect their
processor; NumPy's BLAS then runs another kernel, whose sums differ in their last digits. The
zygote and its children must see those choices as plain Python does, and nothing else of the
server's environment, with the lab's one thread whatever the server says.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradient_lab import jobs
from gradient_lab.runner.child.environment import child_environment
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "tests" / "corpus" / "plain.py"
# NumPy's own tutorial of a two-layer net: 100 steps of float64 matmuls through OpenBLAS.
PROGRAM = ROOT / "tests" / "corpus" / "programs" / "pt__tut_two_layer_net_numpy.py"
# OpenBLAS kernels that x86 machines can all run; the first whose sums differ from the one
# this machine picks by itself is the test's choice.
CORE_TYPES = ("Haswell", "SandyBridge", "Nehalem", "Prescott")
LIMITS = Limits(wall_seconds=30.0, cpu_seconds=30.0)
CANARY = "APP_TEST_SECRET_CANARY"


def _plain(environment: dict[str, str]) -> str:
    """What `python program.py` prints in this environment (tests/corpus/plain.py)."""
    result = subprocess.run([sys.executable, str(PLAIN), "--json", str(PROGRAM)],
                            capture_output=True, text=True, check=True, timeout=300,
                            env=environment)
    return json.loads(result.stdout)[str(PROGRAM)]["stdout"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def chosen() -> tuple[str, str]:
    """A core type that changes NumPy's results on this machine, and what Python prints then."""
    if os.uname().machine != "x86_64":
        pytest.skip("OpenBLAS's core types named here are x86's")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "MKL_"))}
    default = _plain(base)
    for core in CORE_TYPES:
        printed = _plain({**base, "OPENBLAS_CORETYPE": core})
        if printed != default:
            return core, printed
    pytest.skip(f"none of {CORE_TYPES} changes NumPy's sums on this processor")


@pytest.fixture(scope="module")
def pool(chosen: tuple[str, str]) -> Iterator[Pool]:
    """A runner started by a server whose environment chooses that kernel, asks for eight
    threads, and holds a secret."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENBLAS_CORETYPE", chosen[0])
        patch.setenv("OPENBLAS_NUM_THREADS", "8")
        patch.setenv(CANARY, "must not reach a program")
        pool = Pool(PoolConfig(ready=1, jobs=2, max_cpu_seconds=LIMITS.cpu_seconds,
                               weak_walls=True))
        pool.start()
    yield pool
    pool.close()


def _run(pool: Pool, code: str) -> dict[str, object]:
    body = asyncio.run(pool.run(jobs.graph, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                                strangers_code=True, code=code, device="cpu", limits=LIMITS))
    return json.loads(body)  # type: ignore[no-any-return]


def test_numpy_in_the_lab_prints_what_plain_python_prints_under_a_chosen_openblas_kernel(
        pool: Pool, chosen: tuple[str, str]) -> None:
    reply = _run(pool, PROGRAM.read_text(encoding="utf-8"))
    assert reply["stdout"] == chosen[1]


def _lab_environment(pool: Pool, core: str) -> dict[str, str]:
    """The server's kernel choices (this machine's own, OPENBLAS_L2_SIZE say, and the core
    type), one thread, and the lab's own: the empty working directory as inductor's cache."""
    return child_environment({**os.environ, "OPENBLAS_CORETYPE": core}, pool._workdir)


def test_a_program_sees_the_kernel_choice_and_one_thread_and_nothing_else(
        pool: Pool, chosen: tuple[str, str]) -> None:
    reply = _run(pool, "import os\nprint(dict(os.environ))")
    assert reply["stdout"] == f"{_lab_environment(pool, chosen[0])}\n"


def test_the_walls_report_the_same_environment(pool: Pool, chosen: tuple[str, str]) -> None:
    body = asyncio.run(pool.run(jobs.walls, wall_seconds=10, cpu_seconds=10, queue_seconds=30,
                                strangers_code=False))
    assert json.loads(body)["environment"] == _lab_environment(pool, chosen[0])
