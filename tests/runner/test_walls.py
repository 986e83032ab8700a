"""The assume-breach suite: a program inside a walled child tries the classic ways out.

tests/runner/attacks.py is a learner's program as an attacker writes it: plain Python, ctypes,
raw system calls. Run in a child with every wall up, every move is blocked. Run with one wall
taken away, some move gets through: so the suite cannot pass with a wall missing. And the
child's own view of its privileges (the `walls` job) is what issue 22 asks: no root, no
capabilities, seccomp in filter mode, no_new_privs, an environment that holds only the
numeric libraries' kernel choices and the lab's one thread (test_environment.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gradient_lab import jobs
from gradient_lab.runner.child.environment import child_environment
from gradient_lab.runner.child.lockin import Walls
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

ATTACKS = (Path(__file__).parent / "attacks.py").read_text()
LIMITS = Limits(wall_seconds=20.0, cpu_seconds=20.0, memory_mb=512)
ALWAYS_OPEN = {"descriptors", "allocate past the memory limit"}
# Every move, with every wall up: none may get through.
ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def listener() -> Iterator[int]:
    """A TCP port listening on this machine, as the server's own would be."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def _pool(walls: Walls) -> Pool:
    pool = Pool(PoolConfig(walls=walls, ready=1, jobs=2, memory_mb=LIMITS.memory_mb,
                           max_cpu_seconds=LIMITS.cpu_seconds, weak_walls=True))
    pool.start()
    return pool


@pytest.fixture(scope="module")
def walled() -> Iterator[Pool]:
    pool = _pool(Walls())
    yield pool
    pool.close()


def _attack(pool: Pool, port: int, **target: object) -> dict[str, object]:
    readable = torch.__file__  # a file the child may read
    settings = {"server_pid": os.getpid(), "port": port, "readable": readable,
                "memory": (LIMITS.memory_mb + 256) << 20, **target}
    program = ATTACKS.replace("TARGET = {", f"TARGET = {settings!r}\n_ = {{", 1)
    body = asyncio.run(pool.run(jobs.graph, wall_seconds=20, cpu_seconds=20, queue_seconds=30,
                                strangers_code=True, code=program, device="cpu",
                                limits=LIMITS))
    stdout = json.loads(body)["stdout"]
    return json.loads(stdout)  # type: ignore[no-any-return]


def _through(results: dict[str, object]) -> set[str]:
    return {name for name, result in results.items()
            if name not in ALWAYS_OPEN and str(result).startswith("succeeded")}


def test_with_every_wall_up_every_move_is_blocked(walled: Pool, listener: int) -> None:
    results = _attack(walled, listener)
    assert _through(results) == set(), results
    assert len(results) > 45, results  # every move ran (a crash would have ended the list)


def test_with_every_wall_up_the_child_holds_only_its_two_pipes(walled: Pool,
                                                               listener: int) -> None:
    held = _attack(walled, listener)["descriptors"]
    assert [kind for _, kind in held] == ["pipe", "pipe"], held  # type: ignore[union-attr]


def test_with_every_wall_up_memory_past_the_limit_is_refused(walled: Pool,
                                                             listener: int) -> None:
    results = _attack(walled, listener)
    assert results["allocate past the memory limit"] == "blocked: MemoryError", results


def _report(pool: Pool) -> dict[str, object]:
    body = asyncio.run(pool.run(jobs.walls, wall_seconds=10, cpu_seconds=10, queue_seconds=30,
                                strangers_code=False))
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_child_runs_unprivileged_with_no_capabilities_and_only_the_labs_variables(
        walled: Pool) -> None:
    report = _report(walled)
    if ROOT:  # the server runs as root (as CI does): the child is nobody
        assert (report["uid"], report["euid"]) == (65534, 65534), report
        assert (report["gid"], report["egid"]) == (65534, 65534), report
        assert report["groups"] == [], report
    else:
        assert report["uid"] == os.getuid(), report
    assert report["cap_effective"] == report["cap_permitted"] == 0, report
    assert report["cap_inheritable"] == 0, report
    if ROOT:
        assert report["cap_bounding"] == 0, report
    assert report["seccomp"] == 2, report  # SECCOMP_MODE_FILTER
    assert report["no_new_privs"] == 1, report
    # the kernel choices and one thread, and the empty working directory as inductor's cache
    assert report["environment"] == child_environment(os.environ, walled._workdir), report
    assert not report["reads_root"] and not report["reads_proc"], report
    assert not report["cwd_readable"], report
    assert report["reads_imports"], report  # the stdlib and torch, wherever they are installed


def test_the_server_reports_every_wall_up(walled: Pool) -> None:
    assert walled.missing_walls() == []
    assert walled.walls["landlock"] >= 1 and walled.walls["seccomp"], walled.walls  # type: ignore[operator]


@pytest.mark.parametrize(("taken_away", "gets_through"), [
    pytest.param(Walls(landlock=False), {"read /etc/passwd", "list /"}, id="landlock"),
    pytest.param(Walls(seccomp=False), {"open a socket", "os.fork"}, id="seccomp"),
])
def test_taking_a_wall_away_lets_a_move_through(taken_away: Walls, gets_through: set[str],
                                                listener: int) -> None:
    pool = _pool(taken_away)
    try:
        results = _attack(pool, listener, traceme=taken_away.seccomp)
    finally:
        pool.close()
    assert gets_through <= _through(results), results


def test_without_the_rlimits_memory_past_the_limit_is_taken(listener: int) -> None:
    pool = _pool(Walls(rlimits=False))
    try:
        results = _attack(pool, listener)
    finally:
        pool.close()
    assert str(results["allocate past the memory limit"]).startswith("succeeded"), results


@pytest.mark.skipif(not ROOT, reason="a server not run as root has no root to give up")
def test_without_the_user_wall_a_root_child_keeps_its_capabilities() -> None:
    pool = _pool(Walls(user=False))
    try:
        report = _report(pool)
    finally:
        pool.close()
    assert report["uid"] == 0 and report["cap_effective"] != 0, report
