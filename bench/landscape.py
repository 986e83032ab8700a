"""Benchmark the loss-landscape lesson: `python bench/landscape.py [--repeats N]`.

One request as the page sends it by default (two optimizers, SGD and Adam, 150 full-batch steps
on 500 moons points, a 2-32-32-2 MLP, 41x41 grids: each run's random plane and PCA plane, its
path on the plane and its interpolation), run as a child runs it: jobs.lesson on one thread,
after the zygote's warm-up. It prints:

1. p50 and p95 of the request, wall and CPU time (targets: p50 <= 1.0 s, p95 <= 1.5 s);
2. its peak extra memory: the kernel's high-water mark of resident memory, above what it was
   before the request (target <= 100 MB);
3. the same request at 81x81, and with 1,000 points;
4. the same request with each grid as a plain per-point loop (planes.loop_loss: the model,
   its parameters overwritten for each point), in the same run, and the ratio (target >= 2),
   and one 41x41 grid alone both ways.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from gradient_lab import jobs  # noqa: E402
from gradient_lab.training import landscape  # noqa: E402
from gradient_lab.training.models import build_mlp, make_dataset  # noqa: E402
from gradient_lab.training.planes import (  # noqa: E402
    batched_loss,
    chunk_for,
    filter_normalized,
    grid_coordinates,
    loop_loss,
    losses_on_plane,
)
from gradient_lab.web.schemas import LESSONS, LandscapeRequest  # noqa: E402


def timed(call: Callable[[], object], repeats: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def peak_extra(call: Callable[[], object]) -> int:
    """The most resident memory above the starting point while `call` runs, in bytes.

    .. note:: The kernel's high-water mark (VmHWM), reset through /proc/self/clear_refs, with
       no sampling thread: a second thread taking the GIL while torch runs made glibc spread
       the chunks' tensors over several malloc arenas, and resident memory grew to 400 MB.
    """
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status("VmRSS")
    call()
    return _status("VmHWM") - before


def in_a_fork(call: Callable[[], object]) -> int:
    """peak_extra(call) in a process forked from this warmed one, as the pool forks a child
    from its zygote to run one request."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, str(peak_extra(call)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        extra = int(f.read())
    os.waitpid(pid, 0)
    return extra


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextmanager
def plain_loop_grids() -> Iterator[None]:
    """Every grid of the lesson as loop_loss: the model itself, one point at a time."""
    original, original_batched = landscape.losses_on_plane, landscape.batched_loss
    state: dict[str, Any] = {}

    def remember(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> Any:
        state.update(model=model, x=x, y=y)
        return original_batched(model, x, y)

    def looped(loss: Any, centre: torch.Tensor, directions: torch.Tensor,
               coordinates: torch.Tensor, chunk: int) -> torch.Tensor:
        return loop_loss(state["model"], state["x"], state["y"], centre, directions, coordinates)

    landscape.batched_loss, landscape.losses_on_plane = remember, looped  # type: ignore[assignment]
    try:
        yield
    finally:
        landscape.batched_loss, landscape.losses_on_plane = original_batched, original


def one_grid(repeats: int) -> tuple[float, float]:
    x, y = make_dataset("moons", 500, 0.1, 0)
    torch.manual_seed(0)
    model = build_mlp(2, 32, 2, 2)
    centre = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    g = torch.Generator().manual_seed(1)
    directions = torch.stack([filter_normalized(model, g), filter_normalized(model, g)])
    units = torch.linspace(-1, 1, 41)
    points = grid_coordinates(units, units)
    loss = batched_loss(model, x, y)
    batched = timed(lambda: losses_on_plane(loss, centre, directions, points,
                                            chunk_for(500, 32)), repeats)[1]
    looped = timed(lambda: loop_loss(model, x, y, centre, directions, points), repeats)[1]
    return statistics.median(batched), statistics.median(looped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    jobs.warm_up()
    default = LandscapeRequest.model_validate({}).options()

    def ask(**change: object) -> Callable[[], bytes]:
        return lambda: jobs.lesson(LESSONS["landscape"].function, "cpu", {**default, **change})

    memory = in_a_fork(ask()), in_a_fork(ask(resolution=81))  # before this process's own runs
    ask()()
    walls, cpus = timed(ask(), args.repeats)
    print(f"request (2 optimizers, 41x41, {default['points']} points, {default['steps']} steps),"
          f" {args.repeats} runs on 1 thread:")
    print(f"  wall p50 {p(walls, 0.5):.3f} s  p95 {p(walls, 0.95):.3f} s")
    print(f"  cpu  p50 {p(cpus, 0.5):.3f} s  p95 {p(cpus, 0.95):.3f} s")
    print(f"  peak extra memory, one request in a fresh fork: {memory[0] / 2**20:.1f} MiB"
          f" (81x81: {memory[1] / 2**20:.1f} MiB)")
    few = max(3, args.repeats // 4)
    for label, call in (("81x81", ask(resolution=81)), ("1,000 points", ask(points=1000))):
        w, c = timed(call, few)
        print(f"  {label}: wall p50 {p(w, 0.5):.3f} s, cpu p50 {p(c, 0.5):.3f} s")
    with plain_loop_grids():
        loop_walls, loop_cpus = timed(ask(), few)
    print(f"  the same request with per-point loop grids: wall p50 {p(loop_walls, 0.5):.3f} s,"
          f" cpu p50 {p(loop_cpus, 0.5):.3f} s;"
          f" batched is {p(loop_cpus, 0.5) / p(cpus, 0.5):.2f}x faster (cpu)")
    batched, looped = one_grid(few)
    print(f"  one 41x41 grid: batched {batched:.3f} s, loop {looped:.3f} s cpu:"
          f" {looped / batched:.2f}x")


if __name__ == "__main__":
    main()
