"""Loss landscapes (Li et al., NeurIPS 2018): each optimizer's run over the network it trained.

Every run starts from one seeded init and trains the whole data set (full batch), keeping its
weights at every step. Around its final point the lesson draws the loss on the plane of two
filter-normalized random directions, and on the plane of its own path's PCA, where the path is
drawn with the loss at each step both as it was and as the plane shows it. Since the runs
share their init, one more plane can hold them all: the PCA of every path from that init.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gradient_lab.errors import RequestInvalid, TooLarge
from gradient_lab.optimizers import Run, make_clip, make_optimizer, make_scheduler, refused
from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import (
    Activation,
    DatasetName,
    build_mlp,
    check_size,
    make_dataset,
    plain_list,
)
from gradient_lab.training.planes import (
    batched_loss,
    chunk_for,
    filter_normalized,
    grid_coordinates,
    losses_on_plane,
    pca_plane,
)

MAX_RESOLUTION = 81
MAX_RUNS = 4
MAX_STEPS = 1_000
# Multiply-adds of one request's grids (points × weights × grid points): ~4 s on one thread.
MAX_GRID_WORK = 6e10
# The interpolation θ0 + α(θ_final − θ0), Goodfellow et al. 2015: α from -0.5 to 1.5.
ALPHAS = torch.arange(-10, 31, dtype=torch.float32) / 20
MARGIN = 0.25  # a PCA plane's grid reaches this fraction of the path's extent past it
# A step the plane hides: its real loss exceeds the loss at its projection by this much.
HIDDEN_RATIO, HIDDEN_GAP = 1.5, 0.05


@dataclass(frozen=True, slots=True)
class Plane:
    x: list[Any]  # the coordinates along d1 (grid columns) ...
    y: list[Any]  # ... and along d2 (grid rows)
    z: list[list[Any]]  # the loss, [row = y][column = x]
    explained: list[Any] | None  # PCA planes: each axis's share of the path's variance


@dataclass(frozen=True, slots=True)
class Path:
    x: list[Any]  # per step (0 = the init): the weights' coordinates on the plane
    y: list[Any]
    loss: list[Any]  # the real loss at θ_t
    plane_loss: list[Any]  # the loss at θ_t's projection on the plane
    hidden: list[int]  # the steps whose real loss the plane hides


@dataclass(frozen=True, slots=True)
class LandscapeRun:
    optimizer: str
    lr: float | None
    final_loss: float
    accuracy: float  # on the data set, at the final weights
    diverged: bool  # the loss stopped being finite: the path ends at its last finite step
    random: Plane  # around the final point, filter-normalized directions in units of them
    pca: Plane  # the run's own PCA plane, centred at the final point
    path: Path  # the run on that plane
    alpha: list[Any]  # the 1-D interpolation θ0 + α(θ_final − θ0) ...
    interpolation: list[Any]  # ... and its loss


@dataclass(frozen=True, slots=True)
class SharedPlane:
    plane: Plane  # the PCA of every run's path from the common init, centred at it
    paths: list[Path]  # each run on it, in the order of `runs`


@dataclass(frozen=True, slots=True)
class Landscape:
    weights: int  # the network's number of parameters: the dimension the planes cut
    runs: list[LandscapeRun]
    shared: SharedPlane | None  # when asked for


def map_landscape(*, dataset: DatasetName, points: int, noise: float, depth: int, width: int,
                  activation: Activation, runs: Sequence[Mapping[str, Any] | Run], steps: int,
                  resolution: int, span: float, shared: bool, seed: int,
                  device: torch.device) -> Landscape:
    """Train each run from one seeded init; the loss around each final point and along each path.

    .. note:: A run is a gradient_lab.optimizers.Run or its fields (as JSON brings them).
       `resolution` is odd so the grid's centre is a grid point: the final weights themselves.
    """
    plans = [spec if isinstance(spec, Run) else Run(**spec) for spec in runs]
    _check(plans, steps, resolution, span)
    x, y = make_dataset(dataset, points, noise, seed)
    x, y = x.to(device), y.to(device)
    torch.manual_seed(seed)
    model = build_mlp(2, width, depth, 2, activation=activation).to(device)
    weights = sum(p.numel() for p in model.parameters())
    grids = len(plans) * 2 + (1 if shared else 0)
    work = points * weights * grids * resolution**2
    if work > MAX_GRID_WORK:
        raise TooLarge(f"{grids} grids of {resolution}x{resolution} over {points} points and "
                       f"{weights} weights is {work:.2g} multiply-adds; the limit is "
                       f"{MAX_GRID_WORK:.2g}", hint_key="hint.training_size")
    loss = batched_loss(model, x, y)
    chunk = chunk_for(points, width)

    def on_plane(centre: torch.Tensor, directions: torch.Tensor,
                 coordinates: torch.Tensor) -> torch.Tensor:
        return losses_on_plane(loss, centre, directions, coordinates, chunk)

    init = nn.utils.parameters_to_vector(model.parameters()).detach()
    paths = [_train(copy.deepcopy(model), run, x, y, steps) for run in plans]
    half = resolution // 2
    units = torch.arange(-half, half + 1, dtype=init.dtype, device=device) * (span / half)
    done = []
    for run, (trajectory, real, diverged) in zip(plans, paths, strict=True):
        final = trajectory[-1]
        nn.utils.vector_to_parameters(final, model.parameters())
        g = torch.Generator().manual_seed(seed + 1_000_003)  # the same draw for every run
        random = torch.stack([filter_normalized(model, g), filter_normalized(model, g)])
        z = on_plane(final, random, grid_coordinates(units, units))
        with torch.no_grad():
            accuracy = (model(x).argmax(1) == y).float().mean().item()
        pca, (path,) = _pca_view(on_plane, [trajectory], [real], final, resolution)
        along = torch.stack([final - init, torch.zeros_like(init)])
        alpha = ALPHAS.to(device)
        line = on_plane(init, along, torch.stack([alpha, torch.zeros_like(alpha)], 1))
        done.append(LandscapeRun(
            optimizer=run.optimizer, lr=run.lr, final_loss=real[-1].item(), accuracy=accuracy,
            diverged=diverged,
            random=Plane(plain_list(units), plain_list(units),
                         plain_list(z.reshape(resolution, resolution)), None),
            pca=pca, path=path, alpha=plain_list(alpha), interpolation=plain_list(line)))
    common = None
    if shared:
        plane, shared_paths = _pca_view(on_plane, [t for t, _, _ in paths],
                                        [r for _, r, _ in paths], init, resolution)
        common = SharedPlane(plane, shared_paths)
    return Landscape(weights=weights, runs=done, shared=common)


def _check(runs: list[Run], steps: int, resolution: int, span: float) -> None:
    check_size("runs", len(runs), MAX_RUNS)
    check_size("steps", steps, MAX_STEPS)
    check_size("resolution", resolution, MAX_RESOLUTION)
    if not runs:
        raise RequestInvalid("runs is empty; give at least one optimizer")
    if resolution < 3 or resolution % 2 == 0:
        raise RequestInvalid(f"resolution is {resolution}; it must be odd and at least 3, so "
                             "the final weights are the grid's centre")
    if not (math.isfinite(span) and span > 0):
        raise RequestInvalid(f"span is {span}; it must be a finite number above 0")
    for run in runs:
        if run.lr_y is not None:
            raise RequestInvalid(f"{run.optimizer}: lr_y gives y its own lr on a 2-D surface; "
                                 "a network's weights have one parameter group")


def _train(model: nn.Module, run: Run, x: torch.Tensor, y: torch.Tensor,
           steps: int) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """(weights [T, P], loss [T], diverged): full-batch steps, θ_0 … θ_T, while finite."""
    params: list[torch.Tensor] = list(model.parameters())
    optimizer = make_optimizer(run, params)
    scheduler = make_scheduler(run.scheduler, optimizer, steps)
    clip = make_clip(run.clip)
    trajectory = [nn.utils.parameters_to_vector(params).detach().clone()]
    losses = []
    for step in range(steps + 1):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        if not math.isfinite(loss.item()):
            trajectory.pop()  # its loss is not finite: the path ends at the step before
            break
        losses.append(loss.detach())
        if step == steps:
            break
        loss.backward()
        if clip is not None:
            clip(params)
        try:
            optimizer.step()
            if scheduler is not None:
                scheduler.step(*([loss.detach()] if _watches_loss(scheduler) else []))
        except Exception as error:  # noqa: BLE001 - torch refusing an option mid-run
            raise refused(f"{run.optimizer} at step {step + 1}", dict(run.options), error) from None
        trajectory.append(nn.utils.parameters_to_vector(params).detach().clone())
    if not losses:
        raise RequestInvalid(f"{run.optimizer}: the loss at the init is not finite")
    return torch.stack(trajectory), torch.stack(losses), len(losses) < steps + 1


def _watches_loss(scheduler: object) -> bool:
    return isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)


def _pca_view(on_plane: Any, trajectories: Sequence[torch.Tensor],
              real: Sequence[torch.Tensor], centre: torch.Tensor,
              resolution: int) -> tuple[Plane, list[Path]]:
    """The PCA plane of the stacked paths around `centre`, its grid, and each path on it."""
    directions, coordinates, explained = pca_plane(torch.cat(list(trajectories)), centre)
    low, high = coordinates.min(0).values, coordinates.max(0).values
    reach = torch.clamp((high - low) * MARGIN, min=1e-3)
    xs, ys = (torch.linspace((low[i] - reach[i]).item(), (high[i] + reach[i]).item(),
                             resolution, device=centre.device) for i in range(2))
    z = on_plane(centre, directions, grid_coordinates(xs, ys))
    paths, start = [], 0
    for trajectory, loss in zip(trajectories, real, strict=True):
        own = coordinates[start:start + len(trajectory)]
        start += len(trajectory)
        flat = on_plane(centre, directions, own)
        hidden = (loss > HIDDEN_RATIO * flat + HIDDEN_GAP).nonzero().reshape(-1)
        paths.append(Path(plain_list(own[:, 0]), plain_list(own[:, 1]), plain_list(loss),
                          plain_list(flat), hidden.tolist()))
    plane = Plane(plain_list(xs), plain_list(ys),
                  plain_list(z.reshape(resolution, resolution)), plain_list(explained.float()))
    return plane, paths


LESSONS = (Lesson("landscape", map_landscape, tab=6),)
