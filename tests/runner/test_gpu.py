"""The walls on a GPU: a child starts CUDA before it locks itself in, and its programs still
meet every wall. Skipped without CUDA (scripts/gpu-check.sh runs them on a GPU machine)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator

import pytest
import torch

from gradient_lab import jobs
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig
from tests.runner.test_walls import ALWAYS_OPEN, ATTACKS

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA here")]
LIMITS = Limits(wall_seconds=30, cpu_seconds=30, memory_mb=1024)


@pytest.fixture(scope="module")
def gpu_pool() -> Iterator[Pool]:
    pool = Pool(PoolConfig(device="cuda", ready=1, jobs=2, memory_mb=LIMITS.memory_mb,
                           max_cpu_seconds=LIMITS.cpu_seconds))
    pool.start()
    yield pool
    pool.close()


def _graph(pool: Pool, code: str) -> dict[str, object]:
    body = asyncio.run(pool.run(jobs.graph, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                                strangers_code=True, code=code, device="cuda", limits=LIMITS))
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_program_runs_on_the_gpu_inside_the_walls(gpu_pool: Pool) -> None:
    body = _graph(gpu_pool, EXAMPLES["S2"].program)
    assert str(body["device"]).startswith("cuda")
    assert body["variables"]["a"]["grad"] == [42.0]  # type: ignore[index]
    assert gpu_pool.missing_walls() == []


def test_on_the_gpu_every_move_is_still_blocked(gpu_pool: Pool) -> None:
    target = {"server_pid": os.getpid(), "port": 1, "readable": torch.__file__,
              "memory": 4 << 30}
    program = ATTACKS.replace("TARGET = {", f"TARGET = {target!r}\n_ = {{", 1)
    results = json.loads(str(_graph(gpu_pool, program)["stdout"]))
    through = {name for name, result in results.items()
               if name not in ALWAYS_OPEN and str(result).startswith("succeeded")}
    assert through == set(), results


def test_a_program_past_its_gpu_memory_is_a_413(gpu_pool: Pool) -> None:
    with pytest.raises(Exception) as caught:
        _graph(gpu_pool, "import torch\nx = torch.empty(2**30, device='cuda')\n")  # 4 GiB
    assert getattr(caught.value, "status", None) == 413
