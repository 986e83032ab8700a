"""A class of students on one server: `python bench/classroom.py [--seconds N] [--students 50]`.

Starts `python -m gradient_lab` (default settings) on a free port of 127.0.0.1, or with `--port`
uses the server already listening there (a proxy in front of replicas: scripts/compose-check.sh),
and lets `--students` simulated students use it for `--seconds`. Each arrives within the first few
seconds, opens a lab's page (the HTML and every script and style it loads, gzip accepted, an empty
cache), then repeats: think for a while, press a button. The buttons are what the pages send:

- graph lab: POST /api/graph with one of the tutorial's examples (gradient_lab.graph.examples; the
  ones whose point is an error expect their 4xx);
- descent lab: POST /api/descent with a preset (gradient_lab.descent.presets), POST /api/surface for
  a built-in surface at the page's resolution, now and then POST /api/basins;
- training lab: POST /api/training/run (read to its last event), /flow with a preset, /nan,
  /accumulation, /precision.

One press in twenty is hostile instead: endless loops, CPU burners, huge tensors, reading files,
starting processes, hostile surface expressions, oversized training runs. Each must get a 4xx.

Prints throughput, p50/p99 per endpoint, errors, the hostile requests' statuses, and the
resident memory of the server's whole process tree (server, zygote, children; from
/proc; not with --port) at the start, at its peak and after a settle period, then PASS or MISS
for each target.
Only 127.0.0.1 is contacted, and every loop ends by the deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import loadgen  # noqa: E402
from page_weight import page_assets  # noqa: E402
from server import free_port, quantile, session_rss, start_server, stop  # noqa: E402

from gradient_lab.descent.presets import PRESETS  # noqa: E402
from gradient_lab.descent.surfaces import SURFACES  # noqa: E402
from gradient_lab.graph.examples import EXAMPLES  # noqa: E402
from gradient_lab.training import FLOW_PRESETS  # noqa: E402

GZIP = "Accept-Encoding: gzip\r\n"
THINK = (2.0, 10.0)  # seconds a student looks at a result before the next press (uniform)
ARRIVAL = 5.0  # students open their page within this many seconds of the start
HOSTILE_SHARE = 0.05
TIMEOUT = 30.0  # a request unanswered by then counts as failed (status 0)
# uvicorn closes a connection idle for 5 s; a browser whose pooled connection was closed
# opens a new one, so a student opens a new one after idling longer than this.
IDLE_RECONNECT = 4.0
LAB_PAGES = {"graph": "/", "descent": "/descent", "training": "/training"}
LAB_SHARE = {"graph": 0.4, "descent": 0.35, "training": 0.25}


@dataclass(frozen=True, slots=True)
class Press:
    endpoint: str  # "POST /api/graph", "page /descent", ...
    method: str
    path: str
    body: bytes
    kind: str  # "benign", or the hostile request's name
    expect_ok: bool = True  # a benign press whose point is an error expects a 4xx


@dataclass(frozen=True, slots=True)
class Result:
    press: Press
    status: int  # 0: no answer (connection failed or timed out)
    seconds: float
    wire: int  # response bytes
    detail: bytes = b""  # the start of the body, when the status is not 200


def _post(path: str, body: object, kind: str = "benign", expect_ok: bool = True) -> Press:
    return Press(f"POST {path}", "POST", path, json.dumps(body).encode(), kind, expect_ok)


def _benign(lab: str, rng: random.Random) -> Press:
    if lab == "graph":
        lesson = rng.choice(list(EXAMPLES.values()))
        return _post("/api/graph", {"code": lesson.program}, expect_ok=not (
            lesson.fails_at or lesson.refused))
    if lab == "descent":
        roll = rng.random()
        if roll < 0.5:
            preset = rng.choice(PRESETS)
            return _post("/api/descent", {k: v for k, v in preset.items()
                                          if k not in ("id", "section")})
        surface = rng.choice(list(SURFACES.values()))
        ranges = {"x_range": surface.x_range, "y_range": surface.y_range}
        if roll < 0.85:
            return _post("/api/surface", {"surface": surface.name, **ranges, "resolution": 100})
        return _post("/api/basins", {"surface": surface.name, **ranges, "resolution": 40,
                                     "steps": 200, "run": {"optimizer": "adam",
                                                           "lr": surface.lr["adam"]}})
    roll, seed = rng.random(), rng.randrange(1000)
    if roll < 0.5:
        return _post("/api/training/run", {"dataset": rng.choice(["moons", "circles"]),
                                           "seed": seed, "device": "cpu"})
    if roll < 0.75:
        preset = FLOW_PRESETS[rng.choice(list(FLOW_PRESETS))]
        return _post("/api/training/flow", {**preset, "seed": seed, "device": "cpu"})
    if roll < 0.9:
        return _post("/api/training/nan", {"cause": "lr", "seed": seed, "device": "cpu"})
    if roll < 0.95:
        return _post("/api/training/accumulation", {"seed": seed, "device": "cpu"})
    return _post("/api/training/precision", {"seed": seed, "device": "cpu"})


_BURN = ("import torch\na = torch.randn(1000, 1000)\n"
         "for i in range(100000):\n    a = torch.tanh(a @ a)\n")
_RANGES = {"x_range": [-2, 2], "y_range": [-2, 2], "resolution": 50}
HOSTILE = [
    _post("/api/graph", {"code": "while True:\n    pass\n"}, "graph loop"),
    _post("/api/graph", {"code": _BURN}, "graph cpu burn"),
    _post("/api/graph", {"code": "import torch\nx = torch.ones(10**6, 10**6)\n"}, "graph huge"),
    _post("/api/graph", {"code": "x = [0] * 10**9\n"}, "graph huge list"),
    _post("/api/graph", {"code": "print(open('/etc/passwd').read())\n"}, "graph read file"),
    _post("/api/graph", {"code": "import subprocess\nsubprocess.run(['id'])\n"},
          "graph subprocess"),
    _post("/api/graph", {"code": "def f(n):\n    return f(n + 1)\nf(0)\n"}, "graph recursion"),
    _post("/api/surface", {"surface": {"expr": "().__class__.__base__"}, **_RANGES},
          "surface escape"),
    _post("/api/surface", {"surface": {"expr": "__import__('os').getcwd()"}, **_RANGES},
          "surface import"),
    _post("/api/surface", {"surface": {"expr": "while True:\n    pass\n"}, **_RANGES},
          "surface loop"),
    _post("/api/surface", {"surface": {"expr": "x + torch.ones(10**5, 10**5).sum()"},
                           **_RANGES}, "surface huge"),
    _post("/api/descent", {"surface": "rosenbrock", "start": [0, 0], "steps": 10**9,
                           "runs": [{"optimizer": "sgd"}]}, "descent steps"),
    _post("/api/descent", {"surface": {"expr": "x ** 2 + y ** 2 + ().__class__"},
                           "start": [1, 1], "runs": [{"optimizer": "adam"}]}, "descent escape"),
    _post("/api/training/run", {"width": 10**6, "depth": 10**3}, "training huge"),
    _post("/api/training/flow", {"depth": 10**5}, "flow huge"),
    Press("POST /api/graph", "POST", "/api/graph", b'{"code": ', "graph bad json"),
]


async def _send(conn: loadgen.Connection, press: Press, idle: float = 0.0) -> Result:
    if idle > IDLE_RECONNECT:
        conn.close()
    start = time.monotonic()
    try:
        status, payload = await asyncio.wait_for(
            conn.request(press.method, press.path, press.body, GZIP), TIMEOUT)
    except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
        conn.close()
        status, payload = 0, b""
    return Result(press, status, time.monotonic() - start, len(payload),
                  b"" if status == 200 else payload[:300])


async def _open_page(conn: loadgen.Connection, page: str, assets: list[str],
                     results: list[Result]) -> None:
    """A page on an empty cache: the HTML, then its files one by one (one connection)."""
    start, wire, worst = time.monotonic(), 0, 200
    for path in [page, *assets]:
        got = await _send(conn, Press(f"page {page}", "GET", path, b"", "benign"), 99.0)
        wire += got.wire
        worst = got.status if got.status != 200 else worst
    press = Press(f"page {page}", "GET", page, b"", "benign")
    results.append(Result(press, worst, time.monotonic() - start, wire))


async def _student(n: int, port: int, deadline: float, pages: dict[str, list[str]],
                   results: list[Result]) -> None:
    rng = random.Random(n)
    lab = rng.choices(list(LAB_SHARE), weights=list(LAB_SHARE.values()))[0]
    conn = loadgen.Connection(port)
    try:
        await asyncio.sleep(rng.uniform(0, ARRIVAL))
        if lab in pages:
            await _open_page(conn, LAB_PAGES[lab], pages[lab], results)
        while True:
            think = rng.uniform(*THINK)
            await asyncio.sleep(think)
            if time.monotonic() >= deadline:
                return
            hostile = rng.random() < HOSTILE_SHARE
            press = rng.choice(HOSTILE) if hostile else _benign(lab, rng)
            results.append(await _send(conn, press, think))
    finally:
        conn.close()


async def _watch_memory(leader: int, samples: list[tuple[float, int, int]],
                        stop_at: asyncio.Event) -> None:
    while not stop_at.is_set():
        samples.append((time.monotonic(), *session_rss(leader)))
        try:
            await asyncio.wait_for(stop_at.wait(), 0.5)
        except TimeoutError:
            pass


async def _class(port: int, leader: int | None, students: int, seconds: float, settle: float,
                 pages: dict[str, list[str]]) -> tuple[list[Result], list[tuple[float, int, int]],
                                                       float, float]:
    results: list[Result] = []
    samples: list[tuple[float, int, int]] = []
    done = asyncio.Event()
    watcher = asyncio.create_task(
        done.wait() if leader is None else _watch_memory(leader, samples, done))
    start = time.monotonic()
    deadline = start + seconds
    await asyncio.gather(*(_student(n, port, deadline, pages, results)
                           for n in range(students)))
    ended = time.monotonic()
    await asyncio.sleep(settle)
    done.set()
    await watcher
    return results, samples, start, ended


def _warm_up(port: int) -> None:
    """Every kind of benign press once, so that lazy imports are not counted as growth."""
    async def run() -> None:
        conn = loadgen.Connection(port)
        rng = random.Random(-1)
        try:
            for lab in LAB_SHARE:
                for _ in range(6):
                    got = await _send(conn, _benign(lab, rng))
                    if got.status == 0 or got.status >= 500:
                        sys.exit(f"warm-up: {got.press.endpoint} answered {got.status}")
        finally:
            conn.close()
    loadgen.run(run())


def _mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _report(results: list[Result], samples: list[tuple[float, int, int]], start: float,
            ended: float, baseline: int, settled: int, args: argparse.Namespace) -> bool:
    seconds = ended - start
    benign = [r for r in results if r.press.kind == "benign"]
    hostile = [r for r in results if r.press.kind != "benign"]
    api = [r for r in results if not r.press.endpoint.startswith("page")]
    print(f"\n{args.students} students for {seconds:.0f} s: {len(api)} API requests "
          f"({len(api) / seconds:.1f}/s), {len(results) - len(api)} page loads, "
          f"{len(hostile)} hostile")
    by_endpoint: dict[str, list[Result]] = defaultdict(list)
    for r in benign:
        by_endpoint[r.press.endpoint].append(r)
    print(f"\n  {'benign, by endpoint':34s} {'n':>5s} {'p50 ms':>8s} {'p99 ms':>8s} "
          f"{'max ms':>8s}  statuses")
    for endpoint, rs in sorted(by_endpoint.items()):
        times = [r.seconds for r in rs]
        statuses = Counter(r.status for r in rs)
        print(f"  {endpoint:34s} {len(rs):5d} {quantile(times, .5) * 1e3:8.0f} "
              f"{quantile(times, .99) * 1e3:8.0f} {max(times) * 1e3:8.0f}  "
              + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    failures = [r for r in benign if (r.status == 200) != r.press.expect_ok
                or not 200 <= r.status < 500]
    for r in failures[:10]:
        print(f"  benign failure: {r.press.endpoint} -> {r.status} after {r.seconds:.2f} s "
              f"{r.detail[:200]!r}")
    print("\n  hostile, by kind                    n  statuses")
    kinds: dict[str, Counter[int]] = defaultdict(Counter)
    for r in hostile:
        kinds[r.press.kind][r.status] += 1
    for kind, statuses in sorted(kinds.items()):
        print(f"  {kind:34s} {sum(statuses.values()):3d}  "
              + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    by_status = Counter(r.status for r in hostile)
    print("  hostile by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(by_status.items())))

    if samples:
        peak, procs = max((rss, count) for _, rss, count in samples)
        print(f"\n  memory (RSS summed over the server's {procs} processes at peak): start "
              f"{_mib(baseline)}, peak {_mib(peak)}, after {args.settle:g} s settling "
              f"{_mib(settled)} ({(settled - baseline) / baseline:+.1%})")

    times = [r.seconds for r in benign]
    p99 = quantile(times, 0.99)
    refused = all(400 <= r.status < 500 for r in hostile)
    memory_ok = settled <= baseline * (1 + args.tolerance)
    checks = [
        (not failures, f"benign failures: {len(failures)} of {len(benign)} (target 0)"),
        (p99 <= 1.0, f"benign p99 {p99 * 1e3:.0f} ms, all endpoints and pages (target <= 1000)"),
        (refused, f"hostile refused with a 4xx: {sum(400 <= r.status < 500 for r in hostile)} "
                  f"of {len(hostile)} (target all; 5xx: "
                  f"{sum(r.status >= 500 for r in hostile)})"),
    ]
    if samples:
        checks.append((memory_ok, f"memory after settling {_mib(settled)} vs start "
                                  f"{_mib(baseline)} (target within +{args.tolerance:.0%})"))
    print()
    for ok, text in checks:
        print(f"  {_verdict(ok)}  {text}")
    return all(ok for ok, _ in checks)


def _lesson(port: int, leader: int | None, args: argparse.Namespace) -> bool:
    """Open the pages, warm up, hold the class and report; whether every target was met.

    `leader`: the server's process, whose session's memory is read (None: not read).
    """
    base = f"http://127.0.0.1:{port}"
    pages = {}
    for lab, page in LAB_PAGES.items():
        files = page_assets(base, page)
        if files[0].status == 200:
            pages[lab] = [f.path for f in files[1:]]
        else:  # a lab whose page is not there yet: its students use the API only
            print(f"page {page} answered {files[0].status}: not loaded", flush=True)
    _warm_up(port)
    time.sleep(3)
    baseline = settled = 0
    if leader is not None:
        baseline = min(session_rss(leader)[0] for _ in range(3) if not time.sleep(0.3))
    memory = "not read" if leader is None else _mib(baseline)
    print(f"server ready on {base}; memory after warm-up {memory}", flush=True)
    results, samples, start, ended = loadgen.run(
        _class(port, leader, args.students, args.seconds, args.settle, pages))
    if samples:
        settled = samples[-1][1]
    return _report(results, samples, start, ended, baseline, settled, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="class length (default 60)")
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--settle", type=float, default=15.0,
                        help="seconds after the class before memory is read again (default 15)")
    # 10%: the tree is ~1.2 GB, mostly torch mapped into each process (RSS counts shared pages
    # once per process); a worker that ran a job keeps its allocator's caches and arenas (tens
    # of MB), while a leak of anything per request (50 students, hundreds of requests) would
    # pass 120 MB. Reniced workers retire, so the settled tree is the starting pool again.
    parser.add_argument("--tolerance", type=float, default=0.10,
                        help="memory growth allowed after settling, as a fraction (default 0.10)")
    parser.add_argument("--port", type=int, default=None,
                        help="use the server already listening on 127.0.0.1:PORT (a proxy in "
                             "front of replicas) instead of starting one; memory is not read")
    args = parser.parse_args()
    if args.port is not None:
        sys.exit(0 if _lesson(args.port, None, args) else 1)

    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log)
        try:
            ok = _lesson(port, server.pid, args)
            if not ok:
                log.seek(0)
                lines = [line for line in log.read().splitlines() if "HTTP/1.1" not in line]
                print("\n--- the server's log, less its access lines (last 40) ---\n"
                      + "\n".join(lines[-40:]))
        except BaseException:
            stop(server)
            log.seek(0)
            print(f"--- server output ---\n{log.read()[-5000:]}", file=sys.stderr)
            raise
        stop(server)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
