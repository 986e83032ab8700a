"""Constants as they were: a tensor that does not require grad, changed in place by the program
after an op used it (a loop's input stepped on, a buffer refilled with the next batch, a running
mean), is shown in each backward call as that call's ops used it, not as the program left it.
Checked against the same program run in plain Python, with each such tensor cloned at the op
that used it."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from gradient_lab.graph.model import Graph
from tests.graph.test_time_true import _same, lab_run


class _Uses(TorchFunctionMode):
    """Clones each tensor that does not require grad as a call that builds the graph uses it,
    one dict per backward call: {id(tensor): (tensor, clone)} (its first use in that call)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[int, tuple[torch.Tensor, torch.Tensor]]] = [{}]

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        before = {id(x): (x, x.detach().clone()) for x in args
                  if isinstance(x, torch.Tensor) and not x.requires_grad}
        result = func(*args, **(kwargs or {}))
        if isinstance(result, torch.Tensor) and result.requires_grad:
            for key, used in before.items():
                self.calls[-1].setdefault(key, used)
        return result


def plain_uses(code: str) -> list[dict[str, torch.Tensor]]:
    """Run code in plain Python: for each backward call, each named tensor that does not
    require grad as the ops of that call's forward used it."""
    uses = _Uses()
    named: list[dict[str, torch.Tensor]] = []
    backward = torch.autograd.backward

    def noted(*args: Any, **kwargs: Any) -> Any:
        frame = sys._getframe(1)
        while frame.f_code.co_filename != "<program>":
            frame = frame.f_back  # type: ignore[assignment]
        names = {id(v): k for k, v in frame.f_globals.items() if isinstance(v, torch.Tensor)}
        named.append({names[key]: clone for key, (_, clone) in uses.calls[-1].items()
                      if key in names})
        uses.calls.append({})
        with torch._C.DisableTorchFunction():
            return backward(*args, **kwargs)

    torch.autograd.backward = noted
    try:
        torch.manual_seed(0)
        with uses, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            exec(compile(code, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102
    finally:
        torch.autograd.backward = backward
    return named


def _check(code: str, name: str) -> Graph:
    """Every backward call shows each named constant as plain Python saw its ops use it: as the
    call sent it, or, where the call sent none (unchanged since), as the node holds it."""
    g = lab_run(code)
    plain = plain_uses(code)
    assert len(g.backward) == len(plain) > 1
    consts = {n.name: n for n in g.nodes if n.kind == "const" and n.name}
    assert name in consts and all(name in used for used in plain)
    seen = []
    for call in g.backward:
        for const, used in plain[call.index].items():
            if const in consts:
                node = consts[const]
                _same(call.leaf_values.get(node.id, node.value), used)
        seen.append(call.leaf_values.get(consts[name].id, consts[name].value))
    assert seen[0] != seen[-1], "the constant changes between iterations"
    assert consts[name].value != seen[0]  # the node itself holds the program's last value
    return g


_STEPPED_INPUT = """import torch

x = torch.tensor([1.0, 2.0, 3.0])
w = torch.tensor([0.5, -0.5, 0.25], requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.01)
for i in range(6):
    loss = (w * x).sum() ** 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    {update}
"""


@pytest.mark.parametrize("update",
                         ["x.add_(1)", "x.mul_(2)", "x[0] = i", "x.copy_(torch.randn(3))"])
def test_an_input_changed_in_place_each_iteration_shows_as_each_iteration_used_it(
        update: str) -> None:
    _check(_STEPPED_INPUT.replace("{update}", update), "x")


# Batches copied into one preallocated buffer, as a pinned-memory or prefetching loader does.
_REFILLED_BATCH = """import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data, labels = torch.randn(24, 3), torch.randn(24, 1)
batch, target = torch.empty(4, 3), torch.empty(4, 1)
for i in range(6):
    batch.copy_(data[4 * i:4 * i + 4])
    target.copy_(labels[4 * i:4 * i + 4])
    loss = torch.nn.functional.mse_loss(model(batch), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("name", ["batch", "target"])
def test_a_batch_refilled_in_place_shows_each_iteration_its_own_batch(name: str) -> None:
    _check(_REFILLED_BATCH, name)


# A running mean of the predictions, kept in place as BatchNorm keeps its running_mean.
_RUNNING_BUFFER = """import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(8, 3)
running_mean = torch.zeros(8)
for i in range(5):
    pred = x @ w
    loss = ((pred - running_mean) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    running_mean.mul_(0.9).add_(0.1 * pred.detach())
"""


def test_a_running_buffer_shows_the_mean_each_iteration_subtracted() -> None:
    _check(_RUNNING_BUFFER, "running_mean")


# The next iteration's offset is set before this one's backward: the op had used the old one.
_CHANGED_BEFORE_BACKWARD = """import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
offset = torch.zeros(2)
for i in range(4):
    shifted = w + offset
    {update}
    loss = (shifted ** 2).sum()
    loss.backward()
"""


@pytest.mark.parametrize("update", ["offset.add_(1.0)", "offset[0] += 1.0",
                                    "torch.add(offset, 1.0, out=offset)"])
def test_a_constant_changed_between_forward_and_backward_shows_as_the_forward_used_it(
        update: str) -> None:
    _check(_CHANGED_BEFORE_BACKWARD.replace("{update}", update), "offset")
