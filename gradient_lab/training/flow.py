"""Gradient flow (tutorial §5.1): how large each layer's weight gradient is, step by step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import torch
from torch import nn
from typing_extensions import Doc

from gradient_lab.tensors import Plain, to_plain
from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import (
    SIZES,
    Activation,
    Batch,
    Count,
    Init,
    LearningRate,
    build_mlp,
    check_size,
    linears,
    plain_list,
)

# Each preset tells one story of §5.1; the page offers them as one-click links.
FLOW_PRESETS: dict[str, dict[str, object]] = {
    "sigmoid_vanishes": {"activation": "sigmoid", "depth": 20, "init": "default"},
    "normal_explodes": {"activation": "relu", "depth": 20, "init": "normal"},
    "relu_he": {"activation": "relu", "depth": 20, "init": "he"},
    "batchnorm": {"activation": "relu", "depth": 20, "init": "normal", "batchnorm": True},
    "residual": {"activation": "sigmoid", "depth": 20, "init": "default", "residual": True},
}


@dataclass(frozen=True, slots=True)
class GradientFlow:
    layers: list[str]  # "layer 1" … "layer N" and "output", first to last
    norms: list[Any]  # each Linear weight's gradient norm at step 0 (the bar chart)
    heatmap: list[list[Any]]  # [layer][step]: the same norms over the first training steps
    loss: list[Any]  # the loss at each of those steps
    ratio: Plain  # first layer's norm / last layer's norm at step 0


def gradient_flow(
        *, depth: Annotated[Count, Doc("Hidden layers (Linear, BatchNorm?, activation).")] = 20,
        width: Count = 64, activation: Activation = "sigmoid", init: Init = "default",
        batchnorm: bool = False, residual: bool = False,
        steps: Annotated[Count, Doc("SGD steps recorded in the heatmap.")] = 20,
        lr: LearningRate = 0.1, batch: Batch = 128, seed: int,
        device: torch.device) -> GradientFlow:
    """Train an MLP on a synthetic batch with SGD; each Linear's weight.grad norm at every step.

    .. note:: The batch is fixed, `width` features drawn from N(0, 1), labelled by the sign of the
       first feature, so the input layer has the same width as the others and residual
       connections can wrap every block.
    """
    check_size("depth", depth, SIZES.depth)
    check_size("width", width, SIZES.width)
    check_size("batch", batch, SIZES.batch)
    check_size("steps", steps, SIZES.flow_steps)
    torch.manual_seed(seed)
    model = build_mlp(width, width, depth, 2, activation=activation, init=init,
                      batchnorm=batchnorm, residual=residual).to(device)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, width, generator=g).to(device)
    y = (x[:, 0] > 0).long()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    weights = [linear.weight for linear in linears(model)]
    norms, losses = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        norms.append(torch.stack([torch.linalg.vector_norm(w.grad) for w in weights]))
        losses.append(loss.detach())
        optimizer.step()
    per_step = torch.stack(norms).cpu().double()  # [step][layer]
    first = per_step[0]
    names = [f"layer {i + 1}" for i in range(depth)] + ["output"]
    return GradientFlow(
        layers=names,
        norms=plain_list(first),
        heatmap=plain_list(per_step.T),
        loss=plain_list(torch.stack(losses)),
        ratio=to_plain(first[0] / first[-1]),
    )


LESSONS = (Lesson("flow", gradient_flow, tab=1),)
