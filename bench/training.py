"""Benchmark the training lab: `python bench/training.py [--repeats N] [--device cpu|cuda]`.

A 200-step run of a 2×64 MLP on 1,000 points (moons, batches of 100, Adam), two ways:

1. through the endpoint: POST /api/training/run on `python -m gradient_lab` (a free port of
   127.0.0.1), read to the last server-sent event: one sandbox job per chunk of steps, plus HTTP;
2. the same loop written plainly in this process: the same data, batches, model and optimizer,
   recording the same loss, gradient norm and lr per step.

It prints the median of each and of their ratio (the target is 1.3 or less), in wall time
and in CPU time (the client, server and sandbox processes together vs the plain loop's
thread), which a busy shared machine disturbs less. The plain loop runs on
one thread on a CPU, as a sandbox worker does. --device defaults to cuda when this machine has it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from server import free_port, session_cpu, start_server, stop  # noqa: E402

from gradient_lab.runner.limits import Limits  # noqa: E402
from gradient_lab.training.loop import TrainConfig, chunk_steps  # noqa: E402
from gradient_lab.training.models import build_mlp, make_dataset  # noqa: E402

RUN = {"dataset": "moons", "points": 1000, "noise": 0.1, "width": 64, "depth": 2,
       "optimizer": "adam", "lr": 0.01, "batch_size": 100, "steps": 200, "seed": 0}


def plain_loop(device: torch.device) -> list[float]:
    """The lesson's loop as a learner would write it: zero_grad → loss → backward → step."""
    x, y = make_dataset("moons", 1000, 0.1, 0)
    x, y = x.to(device), y.to(device)
    torch.manual_seed(0)
    model = build_mlp(2, 64, 2, 2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses, norms, lrs = [], [], []
    for step in range(200):
        epoch, i = divmod(step, 10)
        if i == 0:
            order = torch.randperm(1000, generator=torch.Generator().manual_seed(epoch))
        index = order[i * 100:(i + 1) * 100].to(device)
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[index]), y[index])
        loss.backward()
        norms.append(torch.nn.utils.get_total_norm(
            [p.grad for p in model.parameters() if p.grad is not None]))
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses).tolist()


def endpoint_run(base: str, device: str) -> list[float]:
    body = json.dumps({**RUN, "device": device}).encode()
    request = urllib.request.Request(base + "/api/training/run", data=body,
                                     headers={"Content-Type": "application/json"})
    losses: list[float] = []
    with urllib.request.urlopen(request, timeout=120) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("event: error"):
                raise RuntimeError("the run failed")
            if line.startswith("data: "):
                losses += json.loads(line[6:])["loss"]
    return losses


def _seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _cpu_seconds(fn: Callable[[], object], server: int | None) -> float:
    """CPU seconds `fn` costs: this thread's, plus the server session's when `server` is given."""
    before = sum(session_cpu(server)) if server else 0.0
    thread = time.thread_time()  # after the /proc walk above, so it is not counted
    fn()
    thread = time.thread_time() - thread
    return thread + ((sum(session_cpu(server)) - before) if server else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)  # as in a sandbox worker
    port = free_port()
    log = tempfile.TemporaryFile("w+")
    process = start_server(port, log, env={"APP_DEVICE": args.device})
    base = f"http://127.0.0.1:{port}"
    try:
        endpoint, plain = endpoint_run(base, args.device), plain_loop(device)  # warm-up
        agree = max(abs(a - b) for a, b in zip(endpoint, plain, strict=True))

        def plain_synced() -> None:
            plain_loop(device)
            if device.type == "cuda":
                torch.cuda.synchronize()

        # Interleaved, so a busy moment on a shared machine slows both sides alike.
        pairs = [(_seconds(lambda: endpoint_run(base, args.device)), _seconds(plain_synced))
                 for _ in range(args.repeats)]
        # CPU time as well: on a loaded machine wall time measures the other load too.
        cpu = [(_cpu_seconds(lambda: endpoint_run(base, args.device), process.pid),
                _cpu_seconds(plain_synced, None)) for _ in range(args.repeats)]
    finally:
        stop(process)
        log.close()
    t_endpoint = statistics.median(e for e, _ in pairs)
    t_plain = statistics.median(p for _, p in pairs)
    ratio = statistics.median(e / p for e, p in pairs)
    cpu_ratio = statistics.median(e / p for e, p in cpu)
    chunks = math.ceil(RUN["steps"] / chunk_steps(TrainConfig(**RUN), Limits().stream_chunks))  # type: ignore[arg-type]
    name = torch.cuda.get_device_name() if device.type == "cuda" else "one thread"
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"device {args.device} ({name}), torch {torch.__version__}, {os.cpu_count()} CPUs, "
          f"load average {load}")
    print(f"endpoint (POST /api/training/run, {chunks} chunks):  {t_endpoint * 1000:8.1f} ms")
    print(f"plain loop in this process:                   {t_plain * 1000:8.1f} ms")
    print(f"ratio {ratio:.2f}, the median of {args.repeats} interleaved pairs (target <= 1.3); "
          f"largest loss difference {agree:.2e}")
    print(f"CPU time: endpoint (this client + server + workers) "
          f"{statistics.median(e for e, _ in cpu) * 1000:.1f} ms, plain "
          f"{statistics.median(p for _, p in cpu) * 1000:.1f} ms, ratio {cpu_ratio:.2f}")


if __name__ == "__main__":
    main()
