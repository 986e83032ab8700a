"""Gradient accumulation and mixed precision (tutorial §5.3 #3): one step computed two ways."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import (
    SIZES,
    Batch,
    Count,
    build_mlp,
    check_size,
    linears,
    make_dataset,
    plain_list,
)


@dataclass(frozen=True, slots=True)
class Accumulation:
    layers: list[str]
    big_batch: list[Any]  # each Linear weight's gradient norm, one batch of micro × size
    accumulated: list[Any]  # ... from `micro_batches` backward() calls on loss / micro_batches
    undivided: list[Any]  # ... the counter-example: the same calls without the division
    max_difference: float  # the largest |accumulated - big_batch| over every gradient entry
    max_difference_undivided: float
    ratio_undivided: float  # |undivided| / |big_batch|: the forgotten division, micro_batches×


def accumulate(*, micro_batches: Count = 4, micro_batch: Count = 32, seed: int,
               device: torch.device) -> Accumulation:
    """The gradients of one big batch vs `micro_batches` accumulated ones, with and without / N.

    .. note:: They agree only to float32 rounding (about 1e-7): the sums run in another order.
       A model with BatchNorm would not agree at all, since it normalises each micro-batch alone.
    """
    check_size("micro_batches", micro_batches, 16)
    check_size("micro_batch", micro_batch, SIZES.batch)
    x, y = make_dataset("moons", micro_batches * micro_batch, 0.1, seed)
    x, y = x.to(device), y.to(device)
    torch.manual_seed(seed)
    model = build_mlp(2, 32, 2, 2, activation="tanh").to(device)
    loss_fn = nn.functional.cross_entropy

    def grads(divide: int | None) -> list[torch.Tensor]:
        model.zero_grad()
        if divide is None:
            loss_fn(model(x), y).backward()
        else:
            for xb, yb in zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True):
                (loss_fn(model(xb), yb) / divide).backward()
        return [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]

    big, acc, undivided = grads(None), grads(micro_batches), grads(1)
    weights = [i for i, p in enumerate(model.parameters()) if p.dim() == 2]

    def norms(gs: list[torch.Tensor]) -> list[Any]:
        return plain_list(torch.stack([torch.linalg.vector_norm(gs[i]) for i in weights]).cpu())

    def largest(gs: list[torch.Tensor]) -> float:
        return max((a - b).abs().max().item() for a, b in zip(gs, big, strict=True))

    total = torch.nn.utils.get_total_norm
    return Accumulation(
        layers=[f"layer {i + 1}" for i in range(len(linears(model)) - 1)] + ["output"],
        big_batch=norms(big), accumulated=norms(acc), undivided=norms(undivided),
        max_difference=largest(acc), max_difference_undivided=largest(undivided),
        ratio_undivided=(total(undivided) / total(big)).item(),
    )


# Each of the two runs stops here, after at least one step: on a CPU without bfloat16 units
# autocast can be ten times slower than float32, and the lesson must end within the job's limit.
RUN_SECONDS = 1.5


@dataclass(frozen=True, slots=True)
class Precision:
    device: str
    dtype: str  # what autocast computed the matmuls in: bfloat16 on a CPU, float16 on a GPU
    scaler: bool  # float16 needs a GradScaler, bfloat16 does not
    steps: int  # asked for; a run that reached RUN_SECONDS first has fewer losses
    loss_fp32: list[Any]
    loss_amp: list[Any]
    seconds_fp32: float
    seconds_amp: float
    memory_fp32: int | None  # peak bytes allocated on a GPU; None on a CPU (torch keeps no count)
    memory_amp: int | None
    max_loss_difference: float


def compare_precision(*, steps: Count = 40, width: Count = 128, batch: Batch = 256, seed: int,
                      device: torch.device) -> Precision:
    """The same run in float32 and under torch.autocast: loss curves, seconds, peak memory.

    Each run stops at RUN_SECONDS; the difference is taken over the steps both ran.

    .. note:: On a CPU autocast uses bfloat16, which keeps float32's exponent range and needs no
       GradScaler; small CPU matmuls often get no faster. On CUDA it uses float16 with a
       GradScaler, which multiplies the loss so small gradients do not flush to zero.
    """
    check_size("steps", steps, 500)
    check_size("width", width, SIZES.width * 4)
    check_size("batch", batch, SIZES.batch * 4)
    dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    x, y = make_dataset("spirals", batch, 0.05, seed)
    x, y = x.to(device), y.to(device)
    fp32 = _timed_run(x, y, steps, width, seed, device, None)
    amp = _timed_run(x, y, steps, width, seed, device, dtype)
    both = min(len(fp32[0]), len(amp[0]))
    return Precision(
        device=device.type, dtype=str(dtype).removeprefix("torch."), scaler=dtype == torch.float16,
        steps=steps, loss_fp32=plain_list(fp32[0]), loss_amp=plain_list(amp[0]),
        seconds_fp32=fp32[1], seconds_amp=amp[1], memory_fp32=fp32[2], memory_amp=amp[2],
        max_loss_difference=(fp32[0][:both] - amp[0][:both]).abs().max().item(),
    )


def _timed_run(x: torch.Tensor, y: torch.Tensor, steps: int, width: int, seed: int,
               device: torch.device,
               dtype: torch.dtype | None) -> tuple[torch.Tensor, float, int | None]:
    torch.manual_seed(seed)
    model = build_mlp(2, width, 3, 2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
    losses: list[torch.Tensor] = []
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    started = time.perf_counter()
    for _ in range(steps):
        if losses and time.perf_counter() - started > RUN_SECONDS:
            break
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.detach().float())
    if cuda:
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - started
    memory = torch.cuda.max_memory_allocated(device) if cuda else None
    return torch.stack(losses).cpu(), seconds, memory


LESSONS = (Lesson("accumulation", accumulate, tab=3), Lesson("precision", compare_precision, tab=4))
