"""What a sandbox worker runs: one function per request kind, plain values in and out.

The pool calls these by name ("app.jobs:graph") inside a worker process, so torch and the
learner's program never run in the server process.
"""

from __future__ import annotations

from dataclasses import asdict, replace

# The first optimizer a process builds imports torch._dynamo (800 modules, about 1 s). This
# module is preloaded by the workers' forkserver, so import it here, once, not per worker.
import torch._dynamo  # noqa: F401

from app import wire
from app.errors import AppError, ProgramError
from app.graph import Graph
from app.optimizers import Run
from app.race import Race, Sweep, race
from app.recording import GraphRecorder
from app.sandbox.interpreter import Execution, run_program
from app.sandbox.limits import Limits
from app.surfaces import SURFACES, Grid, evaluate, resolve
from app.sweeps import SWEEP_STEPS, Basins, sweep_lr
from app.sweeps import basins as find_basins
from app.tensors import cuda_broken, pick_device
from app.tracing import trace
from app.training import LESSONS


def graph(code: str, device: str, limits: Limits) -> Graph:
    """Run the program on the device and describe the graph it built.

    .. note:: A program that fails at run time (S6, S19) still built something: the error
       carries that graph as `partial`, so the page can draw it beside the message.
    """
    torch_device = pick_device(device)
    recorder = GraphRecorder(limits)
    try:
        execution = run_program(code, limits=limits, device=torch_device, recorder=recorder)
    except ProgramError as error:
        # After a failed CUDA kernel, nothing more can be read from the GPU to draw.
        if isinstance(error.execution, Execution) and not cuda_broken():
            try:
                error.partial = asdict(trace(error.execution, recorder, torch_device))
            except AppError:
                pass  # the partial graph is itself too large: the error alone says enough
        error.execution = None
        raise
    return trace(execution, recorder, torch_device)


def graph_json(code: str, device: str, limits: Limits) -> bytes:
    """graph(), as the reply's JSON body (a GraphResponse), written here in the worker."""
    return wire.dumps(graph(code, device, limits))


# The descent lab's jobs answer with the reply's JSON body (app.wire): these fields hold
# float32 tensors' values, written as float32s.
_FLOAT32 = ("x", "y", "z", "points", "loss", "grad", "grad_norm", "grad_norm_clipped", "state",
            "final_loss", "minima")


def surface(surface: str | None, expr: str | None, params: dict[str, float],
            x_range: tuple[float, float], y_range: tuple[float, float], resolution: int,
            limits: Limits) -> bytes:
    """The surface on a grid (a Grid, as JSON); a learner's expression runs here."""
    fn = resolve(surface, expr, params, limits)
    grid: Grid = evaluate(fn, x_range, y_range, resolution, max_numel=limits.tensor_numel)
    return wire.dumps(grid, _FLOAT32)


def descent(surface: str | None, expr: str | None, params: dict[str, float],
            start: tuple[float, float], steps: int, runs: list[Run], noise: float, seed: int,
            sweep: bool, limits: Limits) -> bytes:
    """The race (a Race, as JSON); with `sweep`, each run first gets the lr its sweep picked."""
    fn = resolve(surface, expr, params, limits)
    sweeps: list[Sweep | None] = [None] * len(runs)
    if sweep:
        picked = sweep_lr(fn, start, min(steps, SWEEP_STEPS), runs, noise=noise, seed=seed)
        runs = [replace(run, lr=s.picked, lr_y=None if run.lr_y is None or not run.lr
                        else s.picked * run.lr_y / run.lr) for run, s in zip(runs, picked,
                                                                              strict=True)]
        sweeps = list(picked)
    trajectories = race(fn, start, steps, runs, noise=noise, seed=seed)
    return wire.dumps(Race(runs=[replace(t, sweep=s) for t, s in zip(trajectories, sweeps,
                                                                     strict=True)]), _FLOAT32)


def basins(surface: str | None, expr: str | None, params: dict[str, float], run: Run,
           x_range: tuple[float, float], y_range: tuple[float, float], resolution: int,
           steps: int, limits: Limits) -> bytes:
    """The basins map (Basins, as JSON): `run` from every start of the grid, coloured by
    where it ends."""
    fn = resolve(surface, expr, params, limits)
    minima = SURFACES[surface].minima if expr is None and surface in SURFACES else ()
    found: Basins = find_basins(fn, run, x_range, y_range, resolution, steps, minima,
                                max_numel=limits.tensor_numel)
    return wire.dumps(found, _FLOAT32)


def training(lesson: str, device: str, **options: object) -> object:
    """Run one of the training lessons (app.training.LESSONS) on the device."""
    return LESSONS[lesson](device=pick_device(device), **options)


def training_json(lesson: str, device: str, **options: object) -> bytes:
    """training(), as the reply's JSON body, written here in the worker."""
    return wire.dumps(training(lesson, device, **options))


# What each new sandbox worker runs before its first request (WorkerPool's warm_up): parse,
# torch calls, backward, print and tracing, so that their first-use costs in a fresh process
# (page faults as it writes to what it shares with the forkserver, lazy imports, Python's
# specialising of hot code) are not a learner's wait: S2 took 11.3 ms as a fresh worker's
# first job, 1.8 ms after this.
#
# Only a program's graph. The pool starts a worker whenever a long job takes one's place, and a
# class under attack does so a dozen times a second, so this is paid often. Warming up a
# surface and a race of every optimizer too took 31 ms instead of 11, and saved a fresh
# worker's first 1,000-step race 10 ms of its 300.
_WARM_UP_PROGRAM = ("import torch\nx = torch.ones(3, requires_grad=True)\n"
                    "y = (x * 2 + 1).sum()\ny.backward()\nprint(x.grad)\n")


def warm_up(device: str, limits: Limits) -> None:
    """Run a small program's graph: what most requests are."""
    graph_json(_WARM_UP_PROGRAM, device, limits)

