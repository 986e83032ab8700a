"""What a child runs: one function per request kind, plain values in, the reply's JSON out.

A route names a job by reference (`await client_jobs.reply(jobs.descent, ...)`); the pool sends
the job's name and arguments to a fresh walled child, which finds it in JOBS and rebuilds each
argument as its annotation says. So torch, and every learner's program, run only in children.

`python -m gradient_lab.jobs` is the zygote (gradient_lab/runner/pool/forkserver.py), the process
they fork from.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from typing import Any, get_type_hints

import torch
from pydantic import TypeAdapter

from gradient_lab import training, wire
from gradient_lab.descent.race import Race, Sweep, race
from gradient_lab.descent.surfaces import SURFACES, Grid, evaluate, resolve
from gradient_lab.descent.sweeps import SWEEP_LRS, SWEEP_STEPS, Basins, sweep_lr
from gradient_lab.descent.sweeps import basins as find_basins
from gradient_lab.errors import AppError, TooLarge
from gradient_lab.graph.model import Graph
from gradient_lab.graph.recording import GraphRecorder
from gradient_lab.graph.tracing import trace
from gradient_lab.optimizers import Run
from gradient_lab.runner.child import hints
from gradient_lab.runner.child.program import Execution, run_program
from gradient_lab.runner.limits import Limits
from gradient_lab.tensors import cuda_broken, pick_device
from gradient_lab.training import TrainConfig, train

Reply = bytes | Iterator[bytes]
GRID_POINTS = 400 * 400  # the most points a surface's grid or a basins map may have


def graph(code: str, device: str, limits: Limits) -> bytes:
    """Run the program and describe the graph it built (a GraphResponse)."""
    return wire.dumps(graph_of(code, device, limits))


def graph_of(code: str, device: str, limits: Limits) -> Graph:
    """The graph the program built, its variables and what it printed.

    .. note:: A program that fails at run time (S6, S19) still built something: its error
       carries that graph as `partial`, so the page can draw it beside the message.
    """
    torch_device = pick_device(device)
    recorder = GraphRecorder(limits)
    with _default_device(torch_device), recorder:
        execution = run_program(code, program_bytes=limits.program_bytes,
                                stdout_bytes=limits.stdout_bytes)
    error = execution.error
    if error is None:
        return _traced(execution, recorder, torch_device)
    # After a failed CUDA kernel, nothing more can be read from the GPU to draw.
    if not cuda_broken():
        with contextlib.suppress(AppError):  # a partial graph too large: the error says enough
            error.partial = asdict(_traced(execution, recorder, torch_device))
    raise error


def _traced(execution: Execution, recorder: GraphRecorder, device: torch.device) -> Graph:
    """trace(), where the program's own objects may refuse to be read: a 4xx, not a bug."""
    try:
        return trace(execution, recorder, device)
    except AppError:
        raise
    except Exception as exc:  # noqa: BLE001 - what the program left (a tensor too big to read)
        raise hints.from_exception(exc, None) from None


def _default_device(device: torch.device) -> contextlib.AbstractContextManager[object]:
    # On a GPU server the program's tensors go to the GPU, as if it had written device=.
    return contextlib.nullcontext() if device.type == "cpu" else device


# The descent lab's replies: these fields hold float32 tensors' values, written as float32s.
_FLOAT32 = ("x", "y", "z", "points", "loss", "grad", "grad_norm", "grad_norm_clipped", "state",
            "final_loss", "minima")


def surface(surface: str | None, expr: str | None, params: dict[str, float],
            x_range: tuple[float, float], y_range: tuple[float, float], resolution: int,
            limits: Limits) -> bytes:
    """The surface on a grid (a Grid); a learner's expression runs here."""
    fn = resolve(surface, expr, params, limits)
    grid: Grid = evaluate(fn, x_range, y_range, resolution, max_numel=GRID_POINTS)
    return wire.dumps(grid, _FLOAT32)


def descent(surface: str | None, expr: str | None, params: dict[str, float],
            start: tuple[float, float], steps: int, runs: list[Run], noise: float, seed: int,
            sweep: bool, limits: Limits) -> bytes:
    """The race (a Race); with `sweep`, each run first gets the lr its sweep picked."""
    sweep_steps = len(SWEEP_LRS) * len(runs) * min(steps, SWEEP_STEPS) if sweep else 0
    _within(len(runs) * steps + sweep_steps, limits.race_steps,
            f"{len(runs)} runs x {steps} steps" + (f" + {sweep_steps} of the lr sweep"
                                                   if sweep else ""), "hint.race_steps")
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
    """The basins map (Basins): `run` from every start of the grid, coloured by where it ends."""
    _within(resolution * resolution * steps, limits.basins_steps,
            f"{resolution}x{resolution} starts x {steps} steps", "hint.basins_steps")
    fn = resolve(surface, expr, params, limits)
    minima = SURFACES[surface].minima if expr is None and surface in SURFACES else ()
    found: Basins = find_basins(fn, run, x_range, y_range, resolution, steps, minima,
                                max_numel=GRID_POINTS)
    return wire.dumps(found, _FLOAT32)


def lesson(function: str, device: str, options: dict[str, Any]) -> bytes:
    """A training lesson's function, run on the device with the lesson's keywords.

    `function` names it as pickle names one, "module:name" (gradient_lab.training.lessons.Lesson
    gives each lesson's), so that the lessons' own declarations are the only list of them.
    """
    module, _, name = function.partition(":")
    if not module.startswith("gradient_lab.training."):
        raise ValueError(f"{function} is not a function of gradient_lab.training")
    run = getattr(importlib.import_module(module), name)
    return wire.dumps(run(device=pick_device(device), **options))


def training_run(config: TrainConfig, device: str, limits: Limits) -> Iterator[bytes]:
    """The training loop, one reply body per chunk of steps, as the steps run."""
    for chunk in train(config, device=pick_device(device), max_chunks=limits.stream_chunks):
        yield wire.dumps(chunk)


def walls() -> bytes:
    """What a child sees of its own walls: its user, capabilities, filters, what it can reach."""
    from gradient_lab.runner.child.selfcheck import report

    return wire.dumps(report())


def _within(steps: int, limit: int, what: str, hint_key: str) -> None:
    if steps > limit:
        raise TooLarge(f"{what} is {steps:,} optimizer steps; the limit is {limit:,}",
                       hint_key=hint_key)


def _from_json(job: Callable[..., Reply]) -> Callable[[dict[str, Any]], Reply]:
    """job, called with JSON arguments: each rebuilt as the type the job's signature names."""
    hints = get_type_hints(job)
    adapters = {name: TypeAdapter(hints[name]) for name in inspect.signature(job).parameters}

    def call(args: dict[str, Any]) -> Reply:
        return job(**{name: adapters[name].validate_python(value) for name, value in args.items()})

    return call


# Built here, in the zygote, so no child pays for pydantic's readers.
JOBS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    job.__name__: _from_json(job)
    for job in (graph, surface, descent, basins, lesson, training_run, walls)
}

# What the zygote runs before its first fork, so children start with the first-call costs of
# parsing, torch calls, backward, printing, tracing and torch.optim already paid.
_WARM_UP_PROGRAM = """import torch
x = torch.ones(3, requires_grad=True)
y = (x * 2 + 1).sum()
y.backward()
print(x.grad, y)
opt = torch.optim.SGD([x], lr=0.1)
opt.step()
"""


def warm_up() -> None:
    # Every lesson's module, loaded before any fork, as lesson() will find it in a child.
    for module in pkgutil.iter_modules(training.__path__, "gradient_lab.training."):
        importlib.import_module(module.name)
    graph(_WARM_UP_PROGRAM, "cpu", Limits())
    descent("quadratic", None, {}, (1.0, 1.0), 3, [Run("adam")], 0.0, 0, False, Limits())
    # The landscape's first SVD and batched matmuls load their kernels: ~1 s a child would pay.
    lesson("gradient_lab.training.landscape:map_landscape", "cpu",
           {"dataset": "xor", "points": 10, "noise": 0.0, "depth": 1, "width": 2,
            "activation": "relu", "runs": [{"optimizer": "sgd"}], "steps": 2, "resolution": 3,
            "span": 1.0, "shared": True, "seed": 0})


if __name__ == "__main__":
    from gradient_lab.runner.pool import forkserver

    forkserver.main(JOBS, warm_up)
