"""The lessons' networks and data: an nn.Sequential MLP and 2-D data sets generated in torch."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import torch
from annotated_types import Ge, Gt, Le
from torch import nn

from gradient_lab.errors import TooLarge
from gradient_lab.tensors import to_plain

Activation = Literal["sigmoid", "tanh", "relu", "leaky_relu", "gelu"]
Init = Literal["default", "xavier", "he", "normal", "small"]
DatasetName = Literal["moons", "circles", "spirals", "xor"]

# The bounds of a lesson's keywords, which its request checks (answering 422). The sizes' upper
# bounds are SIZES', checked by the lesson itself with check_size (answering 413).
Count = Annotated[int, Ge(1)]
Batch = Annotated[int, Ge(2)]  # BatchNorm needs two rows to normalize
LearningRate = Annotated[float, Gt(0), Le(100)]

ACTIVATIONS: dict[Activation, Callable[[], nn.Module]] = {
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
}

# Each takes a Linear layer's weight; "default" keeps what nn.Linear chose (kaiming_uniform_, a=√5).
INITS: dict[Init, Callable[[torch.Tensor], object] | None] = {
    "default": None,
    "xavier": nn.init.xavier_normal_,
    "he": lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu"),
    "normal": lambda w: nn.init.normal_(w, 0.0, 1.0),
    "small": lambda w: nn.init.normal_(w, 0.0, 0.01),
}


@dataclass(frozen=True, slots=True)
class Sizes:
    """The bounds on every run: the inputs are chosen from menus, but their sizes still cost CPU."""

    depth: int = 50
    width: int = 256
    batch: int = 1024
    points: int = 4000
    steps: int = 2000
    flow_steps: int = 100


SIZES = Sizes()


def check_size(name: str, value: int, limit: int) -> None:
    """Refuse `value` past `limit`, naming it (the request schema bounds it too)."""
    if value > limit:
        raise TooLarge(f"{name} is {value}; the limit is {limit}", hint_key="hint.training_size")


class Residual(nn.Module):
    """x + block(x): the identity path carries the gradient past the block unchanged."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


def build_mlp(in_features: int, width: int, depth: int, out_features: int, *,
              activation: Activation = "relu", init: Init = "default",
              batchnorm: bool = False, residual: bool = False) -> nn.Sequential:
    """`depth` hidden blocks (Linear → BatchNorm? → activation) and a Linear head.

    A block whose input has `width` features is wrapped in `Residual` when asked; the first block
    of a 2-D model changes the size and so never is.
    """
    layers: list[nn.Module] = []
    for i in range(depth):
        fan_in = in_features if i == 0 else width
        parts: list[nn.Module] = [nn.Linear(fan_in, width)]
        if batchnorm:
            parts.append(nn.BatchNorm1d(width))
        parts.append(ACTIVATIONS[activation]())
        block = nn.Sequential(*parts)
        layers.append(Residual(block) if residual and fan_in == width else block)
    layers.append(nn.Linear(width if depth else in_features, out_features))
    model = nn.Sequential(*layers)
    chosen = INITS[init]
    if chosen is not None:
        for linear in linears(model):
            chosen(linear.weight)
            nn.init.zeros_(linear.bias)
    return model


def linears(model: nn.Module) -> list[nn.Linear]:
    """The model's Linear layers, first to last: the "layers" every chart counts."""
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


def make_dataset(name: DatasetName, points: int, noise: float,
                 seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, y): `points` 2-D inputs and their 0/1 labels, the same for the same seed."""
    check_size("points", points, SIZES.points)
    g = torch.Generator().manual_seed(seed)
    half = points // 2
    y = torch.cat([torch.zeros(points - half), torch.ones(half)]).long()
    if name == "moons":
        t = torch.rand(points, generator=g) * math.pi
        upper = torch.stack([torch.cos(t), torch.sin(t)], 1)
        lower = torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1)
        x = torch.where(y[:, None] == 0, upper, lower) - torch.tensor([0.5, 0.25])
    elif name == "circles":
        t = torch.rand(points, generator=g) * 2 * math.pi
        radius = torch.where(y == 0, 1.0, 0.5)
        x = radius[:, None] * torch.stack([torch.cos(t), torch.sin(t)], 1)
    elif name == "spirals":
        r = torch.rand(points, generator=g)
        t = 3 * math.pi * r + math.pi * y
        x = 1.2 * r[:, None] * torch.stack([torch.cos(t), torch.sin(t)], 1)
    else:
        x = torch.rand(points, 2, generator=g) * 2 - 1
        y = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).long()
    return x + noise * torch.randn(points, 2, generator=g), y


def plain_list(t: torch.Tensor) -> list[Any]:
    """Every value of `t` as nested lists, NaN and infinities spelled as strings (JSON has none)."""
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        values = to_plain(t, max_numel=t.numel())
    else:
        values = t.detach().cpu().tolist()  # the common case, without a Python walk
    return values if isinstance(values, list) else [values]
