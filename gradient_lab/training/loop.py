"""The training loop (tutorial §4.1, §4.2, §5.3) on a 2-D data set, run in chunks of steps.

`train` yields the run chunk by chunk, so the page can watch it as it runs. Batches come from
the step number and the seed, never from a generator carried along, so the same run gives the
same numbers however it is cut.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import ReduceLROnPlateau

from gradient_lab.optimizers import (
    CLIPS,
    Run,
    make_optimizer,
    make_scheduler,
    named_options,
    refused,
)
from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import (
    SIZES,
    Activation,
    DatasetName,
    build_mlp,
    check_size,
    make_dataset,
    plain_list,
)

# The optimizers, schedulers and clips are the descent lab's registries (gradient_lab.optimizers),
# so a name means the same torch.optim settings on both pages; "none" means no scheduler or clip.
NONE = "none"

GRID = 40  # the decision boundary is drawn on GRID × GRID points


@dataclass(frozen=True, slots=True)
class TrainConfig:
    dataset: DatasetName = "moons"
    points: int = 1000
    noise: float = 0.1
    width: int = 64
    depth: int = 2
    activation: Activation = "relu"
    optimizer: str = "adam"
    lr: float = 0.01
    weight_decay: float = 0.0
    scheduler: str = NONE
    batch_size: int = 100
    accumulation: int = 1
    clip: str = NONE
    max_norm: float = 1.0
    steps: int = 200
    seed: int = 0


@dataclass(frozen=True, slots=True)
class TrainData:
    x: list[Any]  # [point][2]
    y: list[Any]
    grid_x: list[Any]
    grid_y: list[Any]


@dataclass(frozen=True, slots=True)
class TrainChunk:
    start: int  # the first step of this chunk; steps are counted from 0
    loss: list[Any]  # per step: the loss of the whole (accumulated) batch
    grad_norm: list[Any]  # per step: the total gradient norm before clipping
    clipped_norm: list[Any]  # ... and after it (the same when clip is "none")
    lr: list[Any]  # per step: the learning rate the step used
    accuracy: float  # on the whole data set, after the chunk's last step
    boundary: list[list[Any]]  # P(class 1) on the grid, [row = y][column = x]
    total: int  # the run's steps
    diverged: bool  # the loss became NaN or infinite: the run stops here
    data: TrainData | None = field(default=None)  # the first chunk carries the points and grid


def chunk_steps(config: TrainConfig, max_chunks: int) -> int:
    """Steps per chunk: about a tenth of a second of work, at least 4 updates per run and at
    most `max_chunks`.

    An estimate from the config alone, so the same run is always cut the same way: a step
    costs about 1 ms of Python plus its multiply-adds, forward and backward, at 10 GFLOP/s.
    A tenth of a second keeps most chunks under the pool's threshold for a long job, which
    would renice the worker and, on a busy machine, slow the rest of the run.
    """
    adds = config.batch_size * config.accumulation * (
        4 * config.width + (config.depth - 1) * config.width**2)
    step_seconds = 1e-3 + 6 * adds / 1e10
    return max(1, math.ceil(config.steps / max_chunks),
               min(math.ceil(config.steps / 4), int(0.1 / step_seconds)))


def train(config: TrainConfig, *, device: torch.device,
          max_chunks: int) -> Iterator[TrainChunk]:
    """The run, chunk by chunk: what each chunk's steps saw, and the model after them."""
    check_size("steps", config.steps, SIZES.steps)
    check_size("width", config.width, SIZES.width)
    check_size("depth", config.depth, 8)
    check_size("batch_size", config.batch_size, SIZES.batch)
    check_size("accumulation", config.accumulation, 16)
    x, y = make_dataset(config.dataset, config.points, config.noise, config.seed)
    x, y = x.to(device), y.to(device)
    torch.manual_seed(config.seed)
    model = build_mlp(2, config.width, config.depth, 2, activation=config.activation).to(device)
    run = Run(config.optimizer, config.lr, {"weight_decay": config.weight_decay})
    optimizer = make_optimizer(run, list(model.parameters()))
    scheduler = make_scheduler(None if config.scheduler == NONE else {"kind": config.scheduler},
                               optimizer, config.steps)
    batches = _Batches(len(x), config.batch_size, config.seed)
    per_chunk = chunk_steps(config, max_chunks)
    for start in range(0, config.steps, per_chunk):
        stop = min(config.steps, start + per_chunk)
        losses, norms, clipped, lrs = [], [], [], []
        for step in range(start, stop):
            lrs.append(optimizer.param_groups[0]["lr"])
            optimizer.zero_grad()
            parts = []
            for k in range(config.accumulation):
                index = batches.take(step * config.accumulation + k)
                loss = nn.functional.cross_entropy(model(x[index]), y[index])
                if config.accumulation > 1:
                    loss = loss / config.accumulation  # so the summed grads are the batch mean's
                loss.backward()
                parts.append(loss.detach())
            norm, after = clip_gradients(model, config.clip, config.max_norm)
            total = parts[0] if len(parts) == 1 else torch.stack(parts).sum()
            _update(config, run, optimizer, scheduler, total, step)
            losses.append(total)
            norms.append(norm)
            clipped.append(after)
            if not math.isfinite(total.item()):
                break
        with torch.no_grad():
            accuracy = (model(x).argmax(1) == y).float().mean().item()
            grid_x, grid_y, boundary = _boundary(model, x)
        data = None
        if start == 0:
            data = TrainData(plain_list(x), plain_list(y), plain_list(grid_x), plain_list(grid_y))
        diverged = not math.isfinite(losses[-1].item())
        yield TrainChunk(
            start=start, loss=plain_list(torch.stack(losses)),
            grad_norm=plain_list(torch.stack(norms)),
            clipped_norm=plain_list(torch.stack(clipped)), lr=lrs, accuracy=accuracy,
            boundary=plain_list(boundary), total=config.steps, diverged=diverged, data=data)
        if diverged:
            return


def _update(config: TrainConfig, run: Run, optimizer: Optimizer, scheduler: Any,
            loss: torch.Tensor, step: int) -> None:
    """optimizer.step(), then the scheduler's; torch refusing either is the options' fault."""
    try:
        optimizer.step()
    except Exception as error:  # noqa: BLE001 - torch finding an option wrong mid-run
        raise refused(f"{config.optimizer} at step {step + 1}", named_options(run), error) from None
    try:
        if isinstance(scheduler, ReduceLROnPlateau):
            scheduler.step(loss)  # it watches a metric: here the step's loss
        elif scheduler is not None:
            scheduler.step()
    except Exception as error:  # noqa: BLE001 - a scheduler divides by its options here
        raise refused(f"scheduler {config.scheduler} at step {step + 1}", {"steps": config.steps},
                      error) from None


def clip_gradients(model: nn.Module, clip: str,
                   max_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The total grad norm before and after clipping by torch's clip_grad_norm_/clip_grad_value_."""
    params: list[torch.Tensor] = [p for p in model.parameters() if p.grad is not None]
    grads = [p.grad for p in params if p.grad is not None]
    before = torch.nn.utils.get_total_norm(grads)
    if clip == NONE:
        return before, before
    CLIPS[clip](params, max_norm)
    return before, torch.nn.utils.get_total_norm(grads)


class _Batches:
    """Micro-batch m of a run: shuffled once per epoch, from the seed and the epoch's number."""

    def __init__(self, points: int, batch_size: int, seed: int) -> None:
        self.points, self.size, self.seed = points, min(batch_size, points), seed
        self.per_epoch = points // self.size
        self._epoch, self._order = -1, torch.empty(0, dtype=torch.long)

    def take(self, m: int) -> torch.Tensor:
        epoch, i = divmod(m, self.per_epoch)
        if epoch != self._epoch:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._epoch, self._order = epoch, torch.randperm(self.points, generator=g)
        return self._order[i * self.size:(i + 1) * self.size]


def _boundary(model: nn.Module,
              x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    low, high = x.min(0).values - 0.25, x.max(0).values + 0.25
    xs = torch.linspace(low[0].item(), high[0].item(), GRID, device=x.device)
    ys = torch.linspace(low[1].item(), high[1].item(), GRID, device=x.device)
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")  # gx[i][j] = xs[j]: Plotly's order
    p = model(torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)).softmax(1)[:, 1].double()
    return xs, ys, (p.reshape(GRID, GRID) * 1000).round() / 1000  # 3 decimals: a smaller event


LESSONS = (Lesson("train", train, tab=2, streamed=True),)
