"""NaN hunting (tutorial §5.3 #4): the step where the loss stops being finite, and its origin."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn
from torch.autograd.graph import Node
from torch.overrides import TorchFunctionMode

from gradient_lab.training.lessons import Lesson
from gradient_lab.training.loop import clip_gradients
from gradient_lab.training.models import Count, build_mlp, check_size, make_dataset, plain_list

Cause = Literal["lr", "log0", "unnormalised"]
Fix = Literal["none", "lower_lr", "clip", "epsilon", "normalise"]

# Each cause is a small run that goes wrong in its own way; `fix` changes one thing about it.
CAUSES: dict[Cause, dict[str, Any]] = {
    "lr": {"lr": 1.5, "scale": 1.0, "loss": "mse"},
    "log0": {"lr": 2.0, "scale": 1.0, "loss": "bce"},
    "unnormalised": {"lr": 0.05, "scale": 1000.0, "loss": "mse"},
}
FIXES: tuple[Fix, ...] = ("none", "lower_lr", "clip", "epsilon", "normalise")
EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the first non-finite value appeared."""

    phase: Literal["forward", "backward", "update"]
    module: str  # "0" … as model.named_modules() names it, "loss", or "optimizer"
    op: str  # the torch function (linear, log, mul) or backward node (LogBackward0)


@dataclass(frozen=True, slots=True)
class NanHunt:
    cause: Cause
    fix: Fix
    loss: list[Any]  # per step, up to and including the first non-finite one
    grad_norm: list[Any]  # the tutorial's monitor: total gradient norm per step
    first_nonfinite_step: int | None  # None: every step stayed finite
    origin: Origin | None


def hunt_nan(*, cause: Cause = "lr", fix: Fix = "none", steps: Count = 100, seed: int,
             device: torch.device) -> NanHunt:
    """Train until the loss is NaN/inf (or `steps` end); name the layer and op it started in.

    .. note:: A forward NaN is found by a TorchFunctionMode that checks every op's output, one
       born in backward by hooks on every node of the step's graph. Both cost time, so only this
       lesson uses them.
    """
    check_size("steps", steps, 500)
    setup = dict(CAUSES[cause])
    if fix == "lower_lr":
        setup["lr"] /= 100
    if fix == "normalise":
        setup["scale"] = 1.0
    x, y = make_dataset("moons", 256, 0.1, seed)
    x, y = (x * setup["scale"]).to(device), y.to(device).float()
    torch.manual_seed(seed)
    model = build_mlp(2, 32, 2, 1, activation="relu").to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=setup["lr"])
    loss_fn = _LOSSES[setup["loss"]](fix == "epsilon")
    losses: list[torch.Tensor] = []
    norms: list[torch.Tensor] = []
    for step in range(steps):
        bad = [name for name, p in model.named_parameters() if not torch.isfinite(p).all()]
        if bad:  # the last update wrote a non-finite weight: the loss is about to follow
            return _hunt(cause, fix, losses, norms, step, Origin("update", bad[0], "step"))
        optimizer.zero_grad()
        with _FirstNonFinite(model) as watch:
            loss = loss_fn(model(x).squeeze(1), y)
        found, handles = _watch_backward(loss, watch.outputs)
        try:
            loss.backward()
        finally:
            for handle in handles:
                handle.remove()
        norm, _ = clip_gradients(model, "norm" if fix == "clip" else "none", 1.0)
        losses.append(loss.detach())
        norms.append(norm)
        if watch.origin is not None:
            return _hunt(cause, fix, losses, norms, step, watch.origin)
        if found:
            return _hunt(cause, fix, losses, norms, step, found[0])
        optimizer.step()
    return _hunt(cause, fix, losses, norms, None, None)


def _hunt(cause: Cause, fix: Fix, losses: list[torch.Tensor], norms: list[torch.Tensor],
          step: int | None, origin: Origin | None) -> NanHunt:
    empty = torch.empty(0)
    return NanHunt(cause=cause, fix=fix,
                   loss=plain_list(torch.stack(losses).cpu() if losses else empty),
                   grad_norm=plain_list(torch.stack(norms).cpu() if norms else empty),
                   first_nonfinite_step=step, origin=origin)


def _mse(epsilon: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    return nn.functional.mse_loss


def _bce(epsilon: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The tutorial's hand-written binary cross-entropy; log(0) once sigmoid rounds to 0 or 1."""

    def loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(logits)
        if epsilon:
            p = p.clamp(EPSILON, 1 - EPSILON)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()

    return loss


_LOSSES = {"mse": _mse, "bce": _bce}


class _FirstNonFinite(TorchFunctionMode):
    """Check every torch op's output; remember the first that is NaN/inf, and its module."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.origin: Origin | None = None
        self._stack = ["loss"]
        self.outputs: dict[Node, str] = {}  # each module's output's grad_fn, for backward
        self._handles: list[Any] = []
        self._modules = dict(model.named_modules())
        for name, module in model.named_modules():
            if name and not list(module.children()):
                self._handles.append(module.register_forward_pre_hook(self._enter(name)))
                self._handles.append(module.register_forward_hook(self._leave))

    def _enter(self, name: str) -> Callable[..., None]:
        label = f"{name} ({type(self._modules[name]).__name__})"
        return lambda module, args: self._stack.append(label)

    def _leave(self, module: nn.Module, args: object, output: object) -> None:
        name = self._stack.pop()
        if isinstance(output, torch.Tensor) and output.grad_fn is not None:
            self.outputs[output.grad_fn] = name

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        super().__exit__(*exc)

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if (self.origin is None and isinstance(out, torch.Tensor) and out.is_floating_point()
                and not bool(torch.isfinite(out).all())):
            name = getattr(func, "__name__", str(func)).strip("_")
            self.origin = Origin("forward", self._stack[-1], name)
        return out


def _watch_backward(loss: torch.Tensor, modules: dict[Node, str]) -> tuple[list[Origin], list[Any]]:
    """Hook every node of loss's graph; the list gets the first whose gradients are NaN/inf.

    .. note:: Anomaly mode (torch.autograd.detect_anomaly) would name the node too, but only for
       NaN, not inf, and it re-runs nothing: hooks on the graph's nodes see both as they happen.
    """
    found: list[Origin] = []

    def check(node: Node) -> Callable[..., None]:
        def hook(grad_inputs: tuple[torch.Tensor | None, ...], grad_outputs: object) -> None:
            if not found and any(g is not None and not bool(torch.isfinite(g).all())
                                 for g in grad_inputs):
                found.append(Origin("backward", modules.get(node, "loss"), type(node).__name__))
        return hook

    handles, todo, seen = [], deque([loss.grad_fn]), set()
    while todo:
        node = todo.popleft()
        if node is None or node in seen:
            continue
        seen.add(node)
        handles.append(node.register_hook(check(node)))
        todo.extend(next_node for next_node, _ in node.next_functions)
    return found, handles


LESSONS = (Lesson("nan", hunt_nan, tab=5),)
