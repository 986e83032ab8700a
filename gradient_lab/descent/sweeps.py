"""Races of many runs at once: the learning-rate sweep and the basins map."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from gradient_lab.descent.race import Sweep, final_losses, race
from gradient_lab.descent.surfaces import DTYPE, SurfaceFn
from gradient_lab.errors import TooLarge
from gradient_lab.optimizers import FLOAT32_MAX, Run, make_optimizer, named_options, refused
from gradient_lab.tensors import Plain, to_plain

# A small log grid, 1e-4 to 1, two points a decade; each candidate races this many steps at most.
SWEEP_LRS = tuple(round(10 ** (e / 2), 6) for e in range(-8, 1))
SWEEP_STEPS = 300
SETTLED_GRAD_NORM = 1e-2  # an end point whose gradient is this small has reached a minimum


@dataclass(frozen=True, slots=True)
class Basins:
    """basin[i][j]: the minimum reached from the start (x[j], y[i]); -1 for none (diverged)."""

    x: Plain
    y: Plain
    basin: Plain
    loss: Plain
    minima: Plain
    steps: int


def sweep_lr(fn: SurfaceFn, start: tuple[float, float], steps: int, runs: list[Run], *,
             lrs: tuple[float, ...] = SWEEP_LRS, noise: float = 0.0,
             seed: int = 0) -> list[Sweep]:
    """Race each run at each lr of `lrs`, all in one race; pick each run's lowest final loss.

    A run with its own lr for y keeps the ratio of the two. A diverged trial ranks last.
    """
    trials = []
    for run in runs:
        ratio = run.lr_y / run.lr if run.lr_y is not None and run.lr else None
        trials += [replace(run, lr=lr, lr_y=None if ratio is None else lr * ratio) for lr in lrs]
    losses = final_losses(race(fn, start, steps, trials, noise=noise, seed=seed))
    sweeps = []
    for r in range(len(runs)):
        mine = losses[r * len(lrs):(r + 1) * len(lrs)]
        best = min(range(len(lrs)), key=lambda i: mine[i])  # ties go to the smaller lr
        sweeps.append(Sweep(lrs=list(lrs), final_loss=to_plain(torch.tensor(mine), len(mine)),
                            picked=lrs[best], steps=steps))
    return sweeps


def basins(fn: SurfaceFn, run: Run, x_range: tuple[float, float], y_range: tuple[float, float],
           resolution: int, steps: int, minima: tuple[tuple[float, float], ...] = (), *,
           max_numel: int) -> Basins:
    """`run` from every start of a resolution x resolution grid, all in one optimizer.

    .. note:: One optimizer steps all starts as one (n, 2) parameter. That equals one optimizer
       per start because every torch.optim update here is elementwise; clipping by norm and
       ReduceLROnPlateau would couple the starts, so a basins run takes neither.
    """
    if resolution * resolution > max_numel:
        raise TooLarge(f"{resolution}x{resolution} starts; the limit is {max_numel}",
                       hint_key="hint.too_large")
    xs = torch.linspace(*x_range, resolution, dtype=DTYPE)
    ys = torch.linspace(*y_range, resolution, dtype=DTYPE)
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")
    P = torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=1).requires_grad_()
    alone = replace(run, scheduler=None, clip=None, lr_y=None)
    optimizer = make_optimizer(alone, [P])
    for group in optimizer.param_groups:
        if group["lr"] > FLOAT32_MAX:  # as in a race: an lr past float32 diverges
            group["lr"] = math.inf
    for k in range(steps):
        optimizer.zero_grad()
        fn(P[:, 0], P[:, 1]).sum().backward()
        try:
            optimizer.step()
        except Exception as error:  # noqa: BLE001 - torch finding an option wrong mid-run
            raise refused(f"{run.optimizer} at step {k + 1}", named_options(alone), error) from None
    optimizer.zero_grad()
    fn(P[:, 0], P[:, 1]).sum().backward()
    grad = P.grad if P.grad is not None else torch.zeros_like(P)
    settled = torch.linalg.vector_norm(grad, dim=1) <= SETTLED_GRAD_NORM
    with torch.no_grad():
        end = P.detach()
        loss = fn(end[:, 0], end[:, 1])
    diagonal = math.hypot(x_range[1] - x_range[0], y_range[1] - y_range[0])
    basin, found = _assign(end, loss, minima, settled, tolerance=0.02 * diagonal)
    shape = (resolution, resolution)
    return Basins(x=to_plain(xs, resolution), y=to_plain(ys, resolution),
                  basin=basin.reshape(shape).tolist(),
                  loss=to_plain(loss.reshape(shape), resolution * resolution),
                  minima=to_plain(found, max(1, found.numel())), steps=steps)


def _assign(end: torch.Tensor, loss: torch.Tensor, minima: tuple[tuple[float, float], ...],
            settled: torch.Tensor, tolerance: float,
            most: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """Each end point's nearest minimum within tolerance; settled ends near none found new ones.

    An end that is still moving (its gradient is not yet small) near no known minimum is -1:
    it has not reached one yet.
    """
    finite = torch.isfinite(end).all(dim=1) & torch.isfinite(loss)
    found = torch.tensor(minima, dtype=DTYPE).reshape(-1, 2)
    basin = torch.full((end.shape[0],), -1, dtype=torch.long)
    while True:
        if found.numel():
            distance = torch.cdist(torch.where(finite[:, None], end, 0.0), found)
            nearest = distance.min(dim=1)
            hit = finite & (basin < 0) & (nearest.values <= tolerance)
            basin[hit] = nearest.indices[hit]
        left = (finite & settled & (basin < 0)).nonzero()
        if not left.numel() or found.shape[0] >= len(minima) + most:
            return basin, found
        found = torch.cat([found, end[left[0]]])  # a minimum the catalogue did not know
