"""A class follows its teacher: `python bench/class_follows.py [--students 50] [--replicas 3]`.

Starts the real server (or `--replicas` of them sharing a Redis, the client sending each
request to the next replica as a proxy without sticky sessions would) on free ports of
127.0.0.1, with nothing computed ahead and an empty store of kept replies. It stands in for the
shipped proxy (APP_TRUSTED_PROXIES=127.0.0.1): each student's requests carry their own
X-Forwarded-For, so the per-client caps see fifty students, as in a classroom. Then:

1. For each of the teacher's moves (the tutorial's first example with backward, the five-
   optimizer race, the schedulers story, each training lesson, the training loop's stream):
   one request never seen before, alone; then `--students` identical requests of another
   never seen before, at once. Prints p99 of the crowd ÷ the one alone (target ≤ 1.5), that
   all are 200 with identical bodies, and the children started for the crowd (target: 1).
   Beside it, the p99 of the same fifty again, now kept: what serving fifty replies costs
   here without any run (for a lesson that runs in tens of ms, that floor is the ratio).
   "Never seen before" is a seed (or a comment in the program) the run has not sent.
2. `--students` distinct learner programs at once: the tutorial's first example with each
   student's own numbers. Prints p99 (target ≤ 1 s here) and p99 ÷ one alone, and failures.

Only 127.0.0.1 is contacted; every wait has a deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import loadgen  # noqa: E402
from server import free_port, quantile, start_server, stop  # noqa: E402

from gradient_lab.descent.presets import PRESETS  # noqa: E402
from gradient_lab.graph.examples import EXAMPLES  # noqa: E402

TIMEOUT = 120.0
_fresh = itertools.count(1_000_000 + int(time.time()) % 1_000_000)
Move = Callable[[int], tuple[str, dict[str, object]]]  # a fresh number -> (path, body)


def _story(name: str) -> Move:
    preset = next(p for p in PRESETS if p["id"] == name)

    def move(seed: int) -> tuple[str, dict[str, object]]:
        return "/api/descent", {
            "surface": preset["surface"], "params": preset.get("params", {}),
            "start": preset["start"], "steps": preset["steps"], "runs": preset["runs"],
            "noise": 0, "sweep": False, "seed": seed}
    return move


def _lesson(name: str) -> Move:
    return lambda seed: (f"/api/training/{name}", {"seed": seed})


MOVES: dict[str, Move] = {
    "graph lab, S2": lambda n: ("/api/graph", {"code": f"# {n}\n{EXAMPLES['S2'].program}"}),
    "descent, the five-optimizer table": _story("table"),
    "descent, the schedulers story": _story("schedulers"),
    **{f"training, {name}": _lesson(name) for name in ("flow", "accumulation", "precision",
                                                        "nan", "run")},
}


class Replicas:
    """The servers, and the next one for each request (round robin, as a proxy does)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self._next = itertools.cycle(ports)

    def pick(self) -> int:
        return next(self._next)

    def started(self) -> int:
        """Children started so far, over every replica."""
        total = 0
        for port in self.ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
                total += int(json.loads(r.read())["runner"]["started"])
        return total


async def _one(port: int, path: str, body: dict[str, object],
               student: int = 0) -> tuple[int, bytes, float]:
    conn = loadgen.Connection(port)
    # As a browser asks: gzip accepted (each student's body compared as it arrives).
    forwarded = (f"X-Forwarded-For: 10.0.{student // 250}.{student % 250 + 1}\r\n"
                 "Accept-Encoding: gzip\r\n")
    start = time.perf_counter()
    try:
        status, payload = await asyncio.wait_for(
            conn.request("POST", path, json.dumps(body).encode(), forwarded), TIMEOUT)
    finally:
        conn.close()
    return status, payload, time.perf_counter() - start


async def _crowd(replicas: Replicas, requests: list[tuple[str, dict[str, object]]]
                 ) -> list[tuple[int, bytes, float]]:
    return await asyncio.gather(*(_one(replicas.pick(), path, body, student)
                                  for student, (path, body) in enumerate(requests)))


async def follows(replicas: Replicas, students: int) -> bool:
    print(f"\n1. {students} identical requests at once, never seen before "
          f"({len(replicas.ports)} server{'s' if len(replicas.ports) > 1 else ''})")
    print(f"{'the teacher moves to':<38} {'alone':>7} {'p99 crowd':>10} {'ratio':>6}  "
          f"{'children':>8}  {'kept p99':>8}  all 200, same bytes")
    ok = True
    for name, move in MOVES.items():
        status, _, alone = await _one(replicas.pick(), *move(next(_fresh)))
        before = replicas.started()
        request = move(next(_fresh))
        answers = await _crowd(replicas, [request] * students)
        children = replicas.started() - before
        kept = await _crowd(replicas, [request] * students)  # the same again, now kept
        floor = quantile([seconds for _, _, seconds in kept], 0.99)
        p99 = quantile([seconds for _, _, seconds in answers], 0.99)
        same = status == 200 and all(s == 200 for s, _, _ in answers) and \
            len({payload for _, payload, _ in answers}) == 1
        ratio = p99 / alone
        passed = ratio <= 1.5 and same and children == 1
        ok &= passed
        print(f"{name:<38} {alone:6.2f}s {p99:9.2f}s {ratio:6.2f}  {children:>8}  {floor:7.2f}s  "
              f"{'yes' if same else 'NO':<4} {'PASS' if passed else 'MISS'}")
    return ok


async def distinct(replicas: Replicas, students: int) -> bool:
    program = EXAMPLES["S2"].program

    def own(n: int) -> tuple[str, dict[str, object]]:  # each student's own numbers
        code = program.replace("[2.0]", f"[{2 + n / 100:.2f}]").replace("[3.0]", f"[{3 + n}.0]")
        return "/api/graph", {"code": code}

    _, _, alone = await _one(replicas.pick(), *own(next(_fresh)))
    base = next(_fresh)
    answers = await _crowd(replicas, [own(base + n) for n in range(students)])
    p99 = quantile([seconds for _, _, seconds in answers], 0.99)
    failed = Counter(status for status, _, _ in answers if status != 200)
    passed = not failed and p99 <= 1.0
    print(f"\n2. {students} distinct learner programs at once (S2, each with its own numbers)")
    print(f"one alone {alone:.3f} s; p99 of the crowd {p99:.3f} s (target ≤ 1 s), "
          f"ratio {p99 / alone:.1f}; failures {sum(failed.values())} {dict(failed) or ''}  "
          f"{'PASS' if passed else 'MISS'}")
    return passed


def _redis() -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save",
                                "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    return process, f"redis://127.0.0.1:{port}/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=1)
    args = parser.parse_args()
    redis = None
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile("w+") as log:
        env = {"APP_COMPUTE_AHEAD": "false", "APP_ROOM_STORE": f"{folder}/rooms.sqlite3",
               "APP_KEPT_STORE": "", "APP_TRUSTED_PROXIES": "127.0.0.1"}
        if args.replicas > 1:
            redis, url = _redis()
            env["APP_ROOM_STORE"] = url
        ports = [free_port() for _ in range(args.replicas)]
        servers = [start_server(port, log, env) for port in ports]
        try:
            replicas = Replicas(ports)
            ok = asyncio.run(follows(replicas, args.students))
            ok &= asyncio.run(distinct(replicas, args.students))
        finally:
            for server in servers:
                stop(server)
            if redis is not None:
                redis.terminate()
    print("\nPASS" if ok else "\nMISS")


if __name__ == "__main__":
    main()
