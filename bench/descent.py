"""Benchmark the descent lab: `python bench/descent.py [--repeats N]`.

Prints three figures, each measured in this one run, baselines in the same process:

1. a race of 7 runs x 1,000 steps on Rosenbrock through POST /api/descent vs the naive loop:
   plain torch.optim, one optimizer after another, one forward/backward per run per step.
   Target >= 4x, trajectories within 1e-6. The endpoint's time is the whole request: the
   child's job, the reply's JSON and gzip (accepted, as a browser does), and this client
   reading and parsing it, with orjson: a native parser, as a browser's JSON.parse is (the
   stdlib's json takes three times as long over a race's 10^5 numbers). The endpoint and the
   naive loop take turns, so that a change in the machine's speed (a VM's varies by a third
   from minute to minute) falls on both.
2. a 200x200 grid of Rosenbrock through POST /api/surface, and evaluate() alone, vs f point by
   point (one torch call per point). Target >= 100x.
3. a 40x40 basins map (Himmelblau, Adam, 200 steps) through POST /api/basins. Target <= 2 s.

The endpoints are the real server's: `python -m gradient_lab` (default settings) on a free port of
127.0.0.1, a new connection per request.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import orjson  # noqa: E402
import torch  # noqa: E402
from server import free_port, start_server, stop  # noqa: E402

from gradient_lab.descent.race import race  # noqa: E402
from gradient_lab.descent.surfaces import SURFACES, evaluate, surface_fn  # noqa: E402
from gradient_lab.optimizers import OPTIMIZERS, Run  # noqa: E402

START = (-1.5, 2.0)
STEPS = 1_000
RUNS = [{"optimizer": name, "lr": SURFACES["rosenbrock"].lr[name]} for name in OPTIMIZERS]


def _best(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def naive_race() -> list[list[list[float]]]:
    """What a learner writes: each optimizer in turn, its own forward and backward per step."""
    paths = []
    for run in RUNS:
        kind = OPTIMIZERS[str(run["optimizer"])]
        cls, preset = kind.cls, kind.preset
        p = torch.tensor(list(START), requires_grad=True)
        optimizer = cls([p], lr=run["lr"], **preset)
        points = [p.detach().clone()]
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss = (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2
            loss.backward()
            optimizer.step()
            points.append(p.detach().clone())
        paths.append(torch.stack(points).tolist())
    return paths


def point_by_point(n: int) -> list[list[float]]:
    f = surface_fn("rosenbrock")
    xs, ys = torch.linspace(-2, 2, n), torch.linspace(-1, 3, n)
    with torch.no_grad():
        return [[float(f(x, y)) for x in xs] for y in ys]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in a child
    # This client imports torch (for the naive loop): parsing a reply's 10^5 numbers would set
    # off full collections over torch's objects, ~0.15 s each, that a browser never pays.
    gc.freeze()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start "
          "(a race alone keeps its priority; with other jobs running it is reniced, and load "
          "slows the endpoint)")
    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log)
        try:
            _measure(http.client.HTTPConnection("127.0.0.1", port, timeout=120), args.repeats)
        finally:
            stop(server)


class _Client:
    """POST JSON, gzip accepted; the reply parsed, as a page does.

    A fresh connection per request: the naive loop between two requests outlasts uvicorn's
    keep-alive, and connecting to the loopback costs a tenth of a millisecond.
    """

    def __init__(self, connection: http.client.HTTPConnection) -> None:
        self.connection = connection

    def post(self, path: str, body: object) -> object:
        self.connection.close()
        self.connection.request("POST", path, json.dumps(body), {
            "Content-Type": "application/json", "Accept-Encoding": "gzip"})
        response = self.connection.getresponse()
        data = response.read()
        if response.getheader("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        assert response.status == 200, data[:500]
        return orjson.loads(data)


def _measure(connection: http.client.HTTPConnection, repeats: int) -> None:
    client = _Client(connection)

    def endpoint_race() -> object:
        return client.post("/api/descent", {
            "surface": "rosenbrock", "start": list(START), "steps": STEPS, "runs": RUNS})

    endpoint_race()  # warm: the worker's first optimizer imports torch._dynamo
    naive_race()
    api_times, naive_times = [], []
    for _ in range(repeats):  # in turns (see the module's docstring)
        t_one, result = _best(endpoint_race, 1)
        api_times.append(t_one)
        t_one, paths = _best(naive_race, 1)
        naive_times.append(t_one)
    t_api, t_naive = statistics.median(api_times), statistics.median(naive_times)
    rosenbrock = surface_fn("rosenbrock")
    runs = [Run(str(r["optimizer"]), lr=float(r["lr"])) for r in RUNS]
    t_job, _ = _best(lambda: race(rosenbrock, START, STEPS, runs), repeats)
    ours = torch.tensor([run["points"] for run in result["runs"]])  # type: ignore[index]
    gap = float((ours - torch.tensor(paths)).abs().max())
    print(f"race 7x{STEPS} Rosenbrock: endpoint {t_api * 1e3:.0f} ms, naive loop "
          f"{t_naive * 1e3:.0f} ms -> {t_naive / t_api:.1f}x (target >= 4x); "
          f"max |trajectory difference| {gap:.1e} (<= 1e-6: {gap <= 1e-6}); "
          f"race() alone in-process {t_job * 1e3:.0f} ms -> {t_naive / t_job:.1f}x")

    def endpoint_grid() -> object:
        return client.post("/api/surface", {"surface": "rosenbrock", "x_range": [-2, 2],
                                            "y_range": [-1, 3], "resolution": 200})

    endpoint_grid()
    f = surface_fn("rosenbrock")
    t_grid_api, _ = _best(endpoint_grid, repeats)
    t_grid, _ = _best(lambda: evaluate(f, (-2, 2), (-1, 3), 200, max_numel=10**6),
                      repeats)
    t_points, _ = _best(lambda: point_by_point(200), 1)
    print(f"grid 200x200: evaluate {t_grid * 1e3:.1f} ms, endpoint {t_grid_api * 1e3:.0f} ms, "
          f"point by point {t_points * 1e3:.0f} ms -> {t_points / t_grid:.0f}x in-process, "
          f"{t_points / t_grid_api:.0f}x through the endpoint (target >= 100x)")

    def endpoint_basins() -> object:
        return client.post("/api/basins", {
            "surface": "himmelblau", "run": {"optimizer": "adam", "lr": 0.1},
            "x_range": [-5, 5], "y_range": [-5, 5], "resolution": 40, "steps": 200})

    endpoint_basins()
    t_basins, _ = _best(endpoint_basins, repeats)
    print(f"basins 40x40, 200 Adam steps: endpoint {t_basins * 1e3:.0f} ms "
          f"(target <= 2000 ms)")


if __name__ == "__main__":
    main()
