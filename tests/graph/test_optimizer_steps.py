"""What optimizer.step() and zero_grad() did, as the graph lab records them: each parameter
before, the .grad the step read, after, and the optimizer's state; checked against plain torch."""

from __future__ import annotations

import dataclasses

import pytest
import torch

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
    g = run("import torch\n\nw = torch.zeros(1000, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(100):\n"
            "    opt.zero_grad()\n    (w - 1).pow(2).sum().backward()\n    opt.step()\n")
    assert 0 < len(g.optimizer_steps) <= 40
    before = g.optimizer_steps[0].params[0].before
    assert isinstance(before, dict) and before["shape"] == [1000]  # summarised, not 1,000 values
    assert dataclasses.asdict(g.optimizer_steps[0])  # plain values all the way down
