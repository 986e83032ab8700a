"""The optimizers, schedulers and clips by name: torch.optim itself, as both labs use it.

OPTIMIZERS, SCHEDULERS and CLIPS are the registries the schemas take their names from. A `Run`
names one optimizer with its settings; make_optimizer and make_scheduler build torch's own
objects for it. The descent lab races runs (app.race); the training lab trains one (app.training).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop, lr_scheduler

from app.errors import AppError


class RequestInvalid(AppError):
    """torch refused a setting (an unknown keyword, a negative lr): the request must change."""

    status = 422
    type = "request_invalid"


OPTIMIZERS: dict[str, tuple[type[Optimizer], dict[str, object]]] = {
    "sgd": (SGD, {}),
    "momentum": (SGD, {"momentum": 0.9}),
    "nesterov": (SGD, {"momentum": 0.9, "nesterov": True}),
    "adam": (Adam, {}),
    "adamw": (AdamW, {}),
    "rmsprop": (RMSprop, {}),
    "adagrad": (Adagrad, {}),
}

# Each scheduler with the defaults a race of `steps` steps from `lr` needs where torch has none.
_Defaults = Callable[[int, float], dict[str, object]]
SCHEDULERS: dict[str, tuple[type[Any], _Defaults]] = {
    "step": (lr_scheduler.StepLR, lambda steps, lr: {"step_size": max(1, steps // 4)}),
    "multistep": (lr_scheduler.MultiStepLR,
                  lambda steps, lr: {"milestones": [steps // 3, 2 * steps // 3]}),
    "exponential": (lr_scheduler.ExponentialLR, lambda steps, lr: {"gamma": 0.99}),
    "cosine": (lr_scheduler.CosineAnnealingLR, lambda steps, lr: {"T_max": steps}),
    "plateau": (lr_scheduler.ReduceLROnPlateau, lambda steps, lr: {}),
    "onecycle": (lr_scheduler.OneCycleLR, lambda steps, lr: {"max_lr": lr, "total_steps": steps}),
    "warmup": (lr_scheduler.LinearLR,
               lambda steps, lr: {"start_factor": 0.1, "total_iters": max(1, steps // 10)}),
}

CLIPS: dict[str, Callable[[list[torch.Tensor], float], object]] = {
    "norm": lambda params, m: torch.nn.utils.clip_grad_norm_(params, max_norm=m),
    "value": lambda params, m: torch.nn.utils.clip_grad_value_(params, clip_value=m),
}


@dataclass(frozen=True, slots=True)
class Run:
    """What one run asks for; `options` are torch.optim keyword arguments with torch's names."""

    optimizer: str
    lr: float | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    scheduler: Mapping[str, object] | None = None  # {"kind": "step", **torch's arguments}
    clip: Mapping[str, object] | None = None  # {"kind": "norm" | "value", "max": m}
    lr_y: float | None = None  # a second parameter group: y gets its own lr (§4.3)
    label: str | None = None


def _torch_call(what: str, fn: Callable[..., Any], *args: object, **kwargs: object) -> Any:
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError, KeyError) as exc:
        raise RequestInvalid(f"{what}: {exc}", hint_key="hint.request_invalid") from None


def make_optimizer(run: Run, params: list[torch.Tensor]) -> Optimizer:
    """torch.optim's optimizer for `run`: x and y in one group, or two when lr_y is set."""
    if run.optimizer not in OPTIMIZERS:
        raise RequestInvalid(f"unknown optimizer {run.optimizer!r}; the optimizers are "
                             f"{', '.join(OPTIMIZERS)}")
    cls, preset = OPTIMIZERS[run.optimizer]
    kwargs = {**preset, **{k: tuple(v) if isinstance(v, list) else v
                           for k, v in run.options.items()}}
    if run.lr is not None:
        kwargs["lr"] = run.lr
    groups: list[dict[str, Any]] = [{"params": params}]
    if run.lr_y is not None:
        groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": run.lr_y}]
    return _torch_call(run.optimizer, cls, groups, **kwargs)  # type: ignore[no-any-return]


def make_scheduler(spec: Mapping[str, object] | None, optimizer: Optimizer,
                   steps: int) -> Any:
    """The lr scheduler `spec` names, over `optimizer`; None when there is none."""
    if spec is None:
        return None
    kind = str(spec.get("kind"))
    if kind not in SCHEDULERS:
        raise RequestInvalid(f"unknown scheduler {kind!r}; the schedulers are "
                             f"{', '.join(SCHEDULERS)}")
    cls, defaults = SCHEDULERS[kind]
    given = {k: v for k, v in spec.items() if k != "kind"}
    kwargs = {**defaults(steps, optimizer.param_groups[0]["lr"]), **given}
    return _torch_call(f"scheduler {kind}", cls, optimizer, **kwargs)
