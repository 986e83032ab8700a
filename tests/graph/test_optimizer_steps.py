"""What optimizer.step() and zero_grad() did, as the graph lab records them: each parameter
before, the .grad the step read, after, and the optimizer's state; checked against plain torch."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from gradient_lab import wire
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.graph.model import Graph, OptimizerStep
from gradient_lab.jobs import graph_of
from gradient_lab.runner.limits import Limits


def run(code: str) -> Graph:
    return graph_of(code, "cpu", Limits())


def _steps(g: Graph, kind: str) -> list[OptimizerStep]:
    return [e for e in g.optimizer_steps if e.kind == kind]


_SGD = """import torch

w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
for i in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
"""


def test_each_sgd_step_is_recorded_as_torch_took_it() -> None:
    g = run(_SGD)
    steps = _steps(g, "step")
    assert [s.after_call for s in steps] == [0, 1, 2] and [s.line for s in steps] == [9] * 3
    assert steps[0].optimizer == "SGD" and steps[0].settings["lr"] == 0.1
    assert steps[0].settings["momentum"] == 0.9 and "foreach" not in steps[0].settings
    # The same loop in plain torch: each step's before, grad, after and momentum buffer.
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    leaf = next(n for n in g.nodes if n.name == "w")
    for step in steps:
        opt.zero_grad()
        (w ** 2).sum().backward()
        before, grad = w.detach().clone(), w.grad.clone()
        opt.step()
        [param] = step.params
        assert param.node == leaf.id and param.name == "w"
        assert param.before == pytest.approx(before.tolist())
        assert param.grad == pytest.approx(grad.tolist())
        assert param.after == pytest.approx(w.detach().tolist())
        assert param.state["momentum_buffer"] == pytest.approx(
            opt.state[w]["momentum_buffer"].tolist())


def test_zero_grad_is_recorded_clearing_each_grad() -> None:
    g = run(_SGD)
    zeroed = _steps(g, "zero_grad")
    # The first zero_grad() has no gradient to clear: nothing to show, so nothing recorded.
    assert [z.after_call for z in zeroed] == [0, 1] and [z.line for z in zeroed] == [6, 6]
    assert all(z.set_to_none and z.params[0].after is None for z in zeroed)
    steps = _steps(g, "step")
    assert zeroed[0].params[0].before == steps[0].params[0].grad  # what it cleared


def test_adam_records_its_moments_and_zero_grad_to_zeros() -> None:
    g = run("import torch\n\nw = torch.tensor([0.5, -1.5], requires_grad=True)\n"
            "opt = torch.optim.Adam([w], lr=0.01, betas=(0.8, 0.99))\n"
            "(w * torch.tensor([3.0, 4.0])).sum().backward()\nopt.step()\n"
            "opt.zero_grad(set_to_none=False)\n")
    [step] = _steps(g, "step")
    w = torch.tensor([0.5, -1.5], requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.01, betas=(0.8, 0.99))
    (w * torch.tensor([3.0, 4.0])).sum().backward()
    opt.step()
    state = step.params[0].state
    assert step.settings["betas"] == [0.8, 0.99] and state["step"] == 1
    assert state["exp_avg"] == pytest.approx(opt.state[w]["exp_avg"].tolist())
    assert state["exp_avg_sq"] == pytest.approx(opt.state[w]["exp_avg_sq"].tolist())
    assert step.params[0].after == pytest.approx(w.detach().tolist())
    [zeroed] = _steps(g, "zero_grad")
    assert zeroed.set_to_none is False and zeroed.params[0].after == [0.0, 0.0]


def test_a_models_parameters_are_named_and_tied_to_their_leaves() -> None:
    g = run(EXAMPLES["S21b"].program)
    steps = _steps(g, "step")
    assert len(steps) == 6 and [s.after_call for s in steps] == list(range(6))
    names = {p.name for p in steps[0].params}
    assert names == {"model.weight", "model.bias"}
    leaves = {n.id for n in g.nodes if n.kind == "leaf"}
    assert {p.node for p in steps[0].params} <= leaves


def test_a_program_without_an_optimizer_records_none() -> None:
    assert run(EXAMPLES["S2"].program).optimizer_steps == []


def test_the_record_is_bounded() -> None:
    g = run("import torch\n\nw = torch.zeros(10_000, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(100):\n"
            "    opt.zero_grad()\n    (w - 1).pow(2).sum().backward()\n    opt.step()\n")
    assert 0 < len(g.optimizer_steps) <= 40
    before = g.optimizer_steps[0].params[0].before
    assert isinstance(before, dict) and before["shape"] == [10_000]  # summarised, not 10,000 values
    assert dataclasses.asdict(g.optimizer_steps[0])  # plain values all the way down


_LINEAR = """import torch

torch.manual_seed(0)
model = torch.nn.Linear({n_in}, {n_out})
opt = torch.optim.{optimizer}(model.parameters(), lr=0.1{extra})
x, y = torch.randn(32, {n_in}), torch.randn(32, {n_out})
for i in range({steps}):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""
_OPTIMIZERS = {"SGD": ("SGD", ", momentum=0.9"), "Adam": ("Adam", "")}


def _plain_steps(layer: tuple[int, int], optimizer: str, steps: int) -> list[dict[str, Any]]:
    """_LINEAR's weight through each step in plain torch: before, .grad, after, state."""
    name, extra = _OPTIMIZERS[optimizer]
    space: dict[str, Any] = {}
    code = _LINEAR.format(optimizer=name, extra=extra, steps=0, n_in=layer[0], n_out=layer[1])
    exec(code, space)  # noqa: S102 - our own program
    model, opt, x, y = space["model"], space["opt"], space["x"], space["y"]
    taken = []
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        before, grad = model.weight.detach().clone(), model.weight.grad.clone()
        opt.step()
        taken.append({"before": before, "grad": grad, "after": model.weight.detach().clone(),
                      "state": {k: v.clone() for k, v in opt.state[model.weight].items()}})
    return taken


def _weight(g: Graph, step: int) -> Any:
    return next(p for p in _steps(g, "step")[step].params if p.name == "model.weight")


@pytest.mark.parametrize("optimizer", _OPTIMIZERS)
def test_a_linear_8_16_weight_is_sent_whole_as_torch_stepped_it(optimizer: str) -> None:
    # 128 values: a heat map of every one, each the number plain torch has
    name, extra = _OPTIMIZERS[optimizer]
    g = run(_LINEAR.format(optimizer=name, extra=extra, steps=2, n_in=8, n_out=16))
    for i, plain in enumerate(_plain_steps((8, 16), optimizer, 2)):
        weight = _weight(g, i)
        assert weight.before == plain["before"].tolist()
        assert weight.grad == plain["grad"].tolist()
        assert weight.after == plain["after"].tolist()
        assert weight.state == {k: v.tolist() for k, v in plain["state"].items()}
        change = (plain["after"] - plain["before"]).abs()
        k = int(change.argmax())
        assert weight.largest["index"] == [k // 8, k % 8]
        assert weight.largest["before"] == plain["before"].flatten()[k].item()
        assert weight.largest["after"] == plain["after"].flatten()[k].item()


@pytest.mark.parametrize("optimizer", _OPTIMIZERS)
def test_an_mnist_sized_weight_sends_block_means_and_its_exact_largest_change(
        optimizer: str) -> None:
    name, extra = _OPTIMIZERS[optimizer]
    g = run(_LINEAR.format(optimizer=name, extra=extra, steps=1, n_in=784, n_out=10))
    [plain] = _plain_steps((784, 10), optimizer, 1)
    weight = _weight(g, 0)
    for key, value in [("before", weight.before), ("grad", weight.grad),
                       ("after", weight.after), *weight.state.items()]:
        if key == "step":
            continue
        tensor = plain["state"][key] if key in plain["state"] else plain[key]
        assert value["shape"] == [10, 784] and value["heat"]["block"] == [1, 13]
        means = [[row[j:j + 13].mean().item() for j in range(0, 784, 13)] for row in tensor]
        assert torch.tensor(value["heat"]["values"]) == pytest.approx(
            torch.tensor(means), rel=1e-5, abs=1e-7), key  # float32 sums, in another order
    change = (plain["after"] - plain["before"]).abs()
    k = int(change.argmax())
    assert weight.largest == {
        "index": [k // 784, k % 784], "before": plain["before"].flatten()[k].item(),
        "after": plain["after"].flatten()[k].item(),
        "update": plain["after"].flatten()[k].item() - plain["before"].flatten()[k].item()}


def test_the_heat_maps_keep_the_reply_bounded() -> None:
    # 100 steps of Adam on three 256x256 layers: the first steps draw as heat maps (64x64 block
    # means), the later ones as summaries, and the step() record stays near 2 MB.
    g = run("import torch\n\nmodel = torch.nn.Sequential(*[torch.nn.Linear(256, 256) "
            "for _ in range(3)])\nopt = torch.optim.Adam(model.parameters())\n"
            "x = torch.randn(4, 256)\nfor i in range(100):\n    opt.zero_grad()\n"
            "    model(x).pow(2).mean().backward()\n    opt.step()\n")
    steps = _steps(g, "step")
    assert len(steps) >= 15
    assert "heat" in steps[0].params[0].before and "heat" not in steps[-1].params[0].before
    assert all(p.largest is not None for s in steps for p in s.params)
    assert len(wire.dumps([dataclasses.asdict(s) for s in g.optimizer_steps])) < 2_500_000
