"""Benchmark the program runner: `python bench/runner.py [--seconds N]`.

Prints four figures, each a ratio or rate measured in this one run against a baseline also
measured in it, so a slow or noisy machine moves both sides alike:

1. in-process: the sandbox job for the tutorial's S2 (run_program, trace, the reply's JSON) ÷
   plain torch;
2. HTTP p50 of POST /api/graph (S2) ÷ HTTP p50 of GET /healthz, one keep-alive connection;
3. requests per second with 50 concurrent clients posting S2, with no errors;
4. the same load with 10% hostile programs: benign p99 against the calm run's p99.

The server is `python -m app` on a free port of 127.0.0.1, with the default settings unless
APP_* variables say otherwise. Nothing else is contacted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import loadgen  # noqa: E402
from server import free_port, quantile, session_cpu, start_server, stop  # noqa: E402

from app.lessons import LESSONS  # noqa: E402

S2 = LESSONS["S2"].program
HOSTILE = {
    "steps": "while True:\n    pass\n",  # the interpreter's step limit
    "huge": "import torch\nx = torch.ones(10**6, 10**6)\n",  # refused before allocating
    "escape": "x = ().__class__\n",  # refused by name
    "cpu": ("import torch\na = torch.randn(1000, 1000)\n"  # runs to the wall or CPU limit
            "for i in range(100000):\n    a = torch.tanh(a @ a)\n"),
}


def _median_ratio(repeats: int) -> tuple[float, float, float]:
    """Median CPU seconds of the sandbox job and of plain torch on S2, and their ratio."""
    import torch

    from app.jobs import graph_json
    from app.sandbox.limits import Limits

    torch.set_num_threads(1)  # as in a sandbox worker
    code, limits = compile(S2, "<S2>", "exec"), Limits()

    def plain() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, {})  # the baseline: what a learner's own Python would do

    def runner() -> None:
        graph_json(S2, "cpu", limits)  # what a worker runs for POST /api/graph

    # CPU time of this thread, not wall time: both sides are single-threaded CPU work, and on
    # a shared machine wall time also counts whoever else had the core meanwhile.
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(repeats + repeats // 10):
        for fn, times in ((plain, theirs), (runner, ours)):
            start = time.thread_time()
            fn()
            if i >= repeats // 10:  # the first tenth warms caches up
                times.append(time.thread_time() - start)
    a, b = statistics.median(ours), statistics.median(theirs)
    return a, b, a / b


@dataclass(frozen=True, slots=True)
class Phase:
    """One load phase: rate, benign latency, what went wrong, and the client's own CPU."""

    rps: float
    p50: float
    p99: float
    benign_errors: Counter[int]  # status -> count; 0 is a failed connection
    hostile: Counter[tuple[str, int]]  # (kind, status) -> count
    client_cpu: float  # of one core
    server_ms: float  # CPU per request of the uvicorn process
    sandbox_ms: float  # CPU per request of the sandbox workers (and their forkserver)
    others: float  # cores that processes outside this bench kept busy meanwhile

    def cpu_text(self) -> str:
        return (f"CPU per request: server {self.server_ms:.2f} ms + sandbox "
                f"{self.sandbox_ms:.2f} ms; other processes kept {self.others:.1f} cores busy")

    def errors_text(self) -> str:
        total = sum(self.benign_errors.values())
        detail = ", ".join(f"{n} x {status}" for status, n in sorted(self.benign_errors.items()))
        return f"{total} errors" + (f" ({detail})" if detail else "")


_TICK = os.sysconf("SC_CLK_TCK")


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy since boot."""
    with open("/proc/stat") as file:
        values = [int(v) for v in file.readline().split()[1:]]
    return (sum(values) - values[3] - values[4]) / _TICK  # less idle and iowait


def _load(port: int, clients: int, seconds: float, hostile_every: int, server: int) -> Phase:
    """Run one load phase; the rate counts requests finished before the deadline."""
    kinds = list(HOSTILE)
    benign = loadgen.body(S2)
    hostile = {k: loadgen.body(v) for k, v in HOSTILE.items()}

    def pick(n: int) -> tuple[str, bytes]:
        if hostile_every and n % hostile_every == hostile_every - 1:
            kind = kinds[(n // hostile_every) % len(kinds)]
            return kind, hostile[kind]
        return "benign", benign

    cpu, start = time.process_time(), time.monotonic()
    (own, rest), busy = session_cpu(server), _machine_busy()
    outcomes, deadline = loadgen.run(loadgen.load(port, clients, seconds, pick))
    cpu = time.process_time() - cpu
    own, rest = (after - before for after, before in zip(session_cpu(server), (own, rest),
                                                         strict=True))
    busy = _machine_busy() - busy
    elapsed = time.monotonic() - start
    done = [o for o in outcomes if o.started + o.seconds <= deadline]
    ok = [o.seconds for o in outcomes if o.kind == "benign" and o.status == 200]
    return Phase(
        rps=len(done) / (deadline - start),
        p50=quantile(ok, 0.50),
        p99=quantile(ok, 0.99),
        benign_errors=Counter(o.status for o in outcomes
                              if o.kind == "benign" and o.status != 200),
        hostile=Counter((o.kind, o.status) for o in outcomes if o.kind != "benign"),
        client_cpu=cpu / elapsed,
        server_ms=own / len(outcomes) * 1e3,
        sandbox_ms=rest / len(outcomes) * 1e3,
        others=(busy - own - rest - cpu) / elapsed,
    )


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="length of each load phase (default 15)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=400, help="in-process repetitions")
    args = parser.parse_args()
    summary: list[str] = []

    ours, theirs, ratio = _median_ratio(args.repeats)
    print(f"1. in-process S2, CPU time: runner {ours * 1e3:.3f} ms / plain torch "
          f"{theirs * 1e3:.3f} ms "
          f"= {ratio:.1f}x (target <= 20x) {_verdict(ratio <= 20)}", flush=True)
    summary.append(f"in-process runner / torch  {ratio:7.1f}x  (<= 20x)   {_verdict(ratio <= 20)}")

    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log)
        try:
            _run_http(port, server.pid, args, summary)
        except BaseException:
            stop(server)
            log.seek(0)
            print(f"--- server output ---\n{log.read()}", file=sys.stderr)
            raise
        stop(server)

    print("\nsummary")
    for line in summary:
        print(f"  {line}")


def _run_http(port: int, server: int, args: argparse.Namespace,
              summary: list[str]) -> None:
    graph = ("POST", "/api/graph", loadgen.body(S2))
    health = ("GET", "/healthz", b"")
    loadgen.run(loadgen.sequential(port, [graph, health], 30))  # warm up
    graph_times, health_times = loadgen.run(loadgen.sequential(port, [graph, health], 400))
    g50, h50 = statistics.median(graph_times), statistics.median(health_times)
    ratio = g50 / h50
    print(f"2. HTTP p50: /api/graph {g50 * 1e3:.2f} ms / /healthz {h50 * 1e3:.2f} ms "
          f"= {ratio:.2f}x (target <= 4x) {_verdict(ratio <= 4)}", flush=True)
    summary.append(f"HTTP p50 graph / healthz   {ratio:7.2f}x  (<= 4x)    {_verdict(ratio <= 4)}")

    _load(port, args.clients, 2.0, 0, server)  # warm up every worker and connection
    calm = _load(port, args.clients, args.seconds, 0, server)
    ok = calm.rps >= 200 and not calm.benign_errors
    print(f"3. {args.clients} clients on S2 for {args.seconds:g} s: {calm.rps:.0f} requests/s, "
          f"{calm.errors_text()}, p50 {calm.p50 * 1e3:.0f} ms, p99 {calm.p99 * 1e3:.0f} ms; "
          f"the client used {calm.client_cpu:.0%} of a core (target >= 200/s, 0 errors) "
          f"{_verdict(ok)}\n   {calm.cpu_text()}", flush=True)
    summary.append(f"requests/s, 50 clients     {calm.rps:7.0f}/s  (>= 200/s) {_verdict(ok)}"
                   f"   {calm.errors_text()}, client {calm.client_cpu:.0%} of a core")

    attack = _load(port, args.clients, args.seconds, 10, server)
    refused = all(400 <= status < 500 for _, status in attack.hostile)
    ratio = attack.p99 / calm.p99
    ok = ratio <= 2 and refused and not attack.benign_errors
    print(f"4. 10% hostile: {attack.rps:.0f} requests/s; benign p50 {calm.p50 * 1e3:.0f} -> "
          f"{attack.p50 * 1e3:.0f} ms, p99 {calm.p99 * 1e3:.0f} -> {attack.p99 * 1e3:.0f} ms "
          f"= {ratio:.2f}x calm (target <= 2x), benign {attack.errors_text()}; the client "
          f"used {attack.client_cpu:.0%} of a core\n   {attack.cpu_text()}")
    for (kind, status), count in sorted(attack.hostile.items()):
        print(f"   hostile {kind:7s} -> {status}: {count}")
    print(f"   every hostile request refused with a 4xx: {refused}  {_verdict(ok)}", flush=True)
    summary.append(f"benign p99 attack / calm   {ratio:7.2f}x  (<= 2x)    {_verdict(ok)}"
                   f"   benign {attack.errors_text()}, hostile all 4xx: {refused}")
    loadgen.run(loadgen.sequential(port, [health], 1))  # still answering afterwards


if __name__ == "__main__":
    main()
