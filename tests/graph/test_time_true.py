"""Values as they were: each backward call carries every leaf as that call's forward used it,
and .grad as the call left it; each step() its parameters before and after. Checked against
the same program run in plain Python, instrumented to note each parameter at each backward()
and step() (a training loop moves its parameters in place, so the values at the end of the
program are the last iteration's, not the one a step shows)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from gradient_lab.graph.model import Graph
from gradient_lab.graph.recording import TRACED_CALLS
from gradient_lab.jobs import graph_of
from gradient_lab.runner.limits import Limits

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "programs"


def _program(name: str, fewer: tuple[str, str] | None = None) -> str:
    code = (CORPUS / name).read_text(encoding="utf-8")
    if fewer:  # fewer iterations than the tutorial's: the lab traces 20 calls all the same
        assert fewer[0] in code
        code = code.replace(*fewer)
    return code


# Gradient accumulation: four micro-batches a step, the loss scaled by 1/4, as in the pattern
# HF Accelerate's docs start from
# (huggingface.co/docs/accelerate/usage_guides/gradient_accumulation).
_ACCUMULATION = """import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(16, 3), torch.randn(16, 1)
accumulation_steps = 4
for i in range(8):
    xb, yb = x[2 * i:2 * i + 2], y[2 * i:2 * i + 2]
    loss = torch.nn.functional.mse_loss(model(xb), yb) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
"""

# A scalar polynomial fitted by hand, as the tutorial's polynomial_autograd does (a, b, c, d
# moved under no_grad), small enough that every value is sent whole.
_POLYNOMIAL = _program("pt__tut_polynomial_autograd.py")


def _named_tensors(frame: Any) -> dict[str, torch.Tensor]:
    """The program's leaves that require grad, by the names the lab gives them."""
    while frame is not None and frame.f_code.co_filename != "<program>":
        frame = frame.f_back
    found: dict[str, torch.Tensor] = {}
    for name, value in (frame.f_globals if frame else {}).items():
        if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf:
            found.setdefault(name, value)
        elif isinstance(value, torch.nn.Module):
            for sub, param in value.named_parameters(prefix=name):
                found.setdefault(sub, param)
    return found


def plain_run(code: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run code in plain Python: each backward call's leaves (values before it, .grad after)
    and each step()'s parameters before and after, as lists of numbers."""
    values: list[dict[str, Any]] = []
    grads: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    backward = torch.autograd.backward
    step = torch.optim.Optimizer.step

    def noted(*args: Any, **kwargs: Any) -> Any:
        leaves = _named_tensors(sys._getframe(1))
        values.append({k: t.detach().clone() for k, t in leaves.items()})
        result = backward(*args, **kwargs)
        grads.append({k: t.grad.clone() for k, t in leaves.items() if t.grad is not None})
        return result

    def pre(optimizer: Any, args: Any, kwargs: Any) -> None:
        params = {id(p) for g in optimizer.param_groups for p in g["params"]}
        named = {k: t for k, t in _named_tensors(sys._getframe(1)).items() if id(t) in params}
        steps.append({k: (t, t.detach().clone()) for k, t in named.items()})

    def post(optimizer: Any, args: Any, kwargs: Any) -> None:
        steps[-1] = {k: (before, t.detach().clone()) for k, (t, before) in steps[-1].items()}

    handles = [register_optimizer_step_pre_hook(pre),
               register_optimizer_step_post_hook(post)]
    torch.autograd.backward = noted
    try:
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            compiled = compile(code, "<program>", "exec")
        exec(compiled, {"__name__": "__main__"})  # noqa: S102
    finally:
        torch.autograd.backward = backward
        for handle in handles:
            handle.remove()
    assert torch.optim.Optimizer.step is step
    return values, grads, steps


def _same(shown: Any, plain: torch.Tensor) -> None:
    """A value the lab sent (whole, or summarised) is the plain run's tensor."""
    if isinstance(shown, dict) and shown.get("summary"):
        assert shown["shape"] == list(plain.shape)
        assert shown["mean"] == pytest.approx(plain.double().mean().item(), rel=1e-4, abs=1e-7)
        assert shown["min"] == pytest.approx(plain.min().item(), rel=1e-5, abs=1e-7)
        assert shown["max"] == pytest.approx(plain.max().item(), rel=1e-5, abs=1e-7)
    else:
        torch.testing.assert_close(torch.tensor(shown, dtype=plain.dtype), plain)


def lab_run(code: str) -> Graph:
    with warnings.catch_warnings():  # the tutorials' docstrings hold "\s" and the like
        warnings.simplefilter("ignore", DeprecationWarning)
        return graph_of(code, "cpu", Limits())


def _leaves(g: Graph) -> dict[str, str]:
    return {n.id: n.name for n in g.nodes if n.kind == "leaf" and n.name}


def _check(code: str) -> Graph:
    g = lab_run(code)
    values, grads, steps = plain_run(code)
    names = _leaves(g)
    assert len(g.backward) == min(TRACED_CALLS, len(values))
    for call in g.backward:
        shown = {names[k]: v for k, v in call.leaf_values.items() if k in names}
        assert set(shown) == set(values[call.index]), call.index
        for name, value in shown.items():
            _same(value, values[call.index][name])
        for key, grad in call.leaf_grads.items():
            if key in names:
                _same(grad, grads[call.index][names[key]])
    recorded = [e for e in g.optimizer_steps if e.kind == "step"]
    assert recorded, "the program's step() calls are recorded"
    for event, plain in zip(recorded, steps, strict=False):
        for param in event.params:
            before, after = plain[param.name]
            _same(param.before, before)
            _same(param.after, after)
    return g


def test_the_polynomial_loop_shows_each_coefficient_as_each_iteration_used_it() -> None:
    g = lab_run(_POLYNOMIAL)
    values, grads, _ = plain_run(_POLYNOMIAL)
    names = _leaves(g)
    assert sorted(names.values()) == ["a", "b", "c", "d"]
    assert len(g.backward) == TRACED_CALLS
    first, last = g.backward[0].leaf_values, g.backward[-1].leaf_values
    node = {name: key for key, name in names.items()}
    # the coefficients move each iteration: step 0 shows the random start, not the end
    assert first[node["a"]] != last[node["a"]]
    a = next(n for n in g.nodes if n.name == "a")
    assert a.value != first[node["a"]]  # the node itself holds the program's last value
    for call in g.backward:
        for key, name in names.items():
            _same(call.leaf_values[key], values[call.index][name])
            _same(call.leaf_grads[key], grads[call.index][name])


def test_an_mlp_with_adam_shows_each_parameter_as_each_step_found_and_left_it() -> None:
    g = _check(_program("course__jcj_two_layer_net_optim.py", ("range(500)", "range(25)")))
    assert {e.optimizer for e in g.optimizer_steps} == {"Adam"}


def test_the_polynomial_fit_with_an_optimizer_agrees_with_plain_python() -> None:
    _check(_program("pt__tut_polynomial_optim.py", ("range(1000)", "range(30)")))


def test_gradient_accumulation_shows_grad_growing_until_the_step() -> None:
    g = _check(_ACCUMULATION)
    weight = next(k for k, n in _leaves(g).items() if n == "model.weight")
    # four calls use one value of the weight, then step() moves it
    seen = [g.backward[i].leaf_values[weight] for i in range(8)]
    assert seen[0] == seen[1] == seen[2] == seen[3] != seen[4] == seen[7]
    assert [e.after_call for e in g.optimizer_steps if e.kind == "step"] == [3, 7]


def test_backward_twice_on_one_graph_shows_grad_accumulating() -> None:
    # the Learn the Basics tutorial's own demonstration, with inp.grad.zero_() between
    code = _program("pt__tut_basics_autogradqs.py")
    g = lab_run(code)
    values, grads, _ = plain_run(code)
    names = _leaves(g)
    inp = next(k for k, n in names.items() if n == "inp")
    calls = [c for c in g.backward if inp in c.leaf_grads]
    assert len(calls) == 3
    for call in calls:
        _same(call.leaf_values[inp], values[call.index]["inp"])
        _same(call.leaf_grads[inp], grads[call.index]["inp"])


def test_each_node_says_in_which_order_the_program_made_it() -> None:
    # three iterations: each one's loss is made after the last one's (the page numbers module
    # calls by it; the walk meets them from the last loss back)
    g = lab_run(_ACCUMULATION.replace("range(8)", "range(3)"))
    roots = [c.roots[0] for c in g.backward]
    made = [next(n.made for n in g.nodes if n.id == r) for r in roots]
    assert None not in made and made == sorted(made) and len(set(made)) == 3
    weight = next(n for n in g.nodes if n.name == "model.weight")
    assert weight.made is None  # made by nn.Linear's __init__, not by the program's lines
