"""The surfaces: the catalogue, the grid's orientation, and the learner's surface in the sandbox."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
import torch

from gradient_lab.descent.race import descend
from gradient_lab.descent.surfaces import (
    FORMULA_NAMES,
    SURFACES,
    compile_expr,
    evaluate,
    resolve,
    surface_fn,
)
from gradient_lab.errors import ProgramError
from gradient_lab.optimizers import OPTIMIZERS, Run
from gradient_lab.runner.limits import Limits

# Every test below that takes `name` runs for each surface in the registry: a surface added
# there meets them all without being named here.
NAMES = list(SURFACES)


def test_the_catalogue_has_every_surface_the_lab_promises() -> None:
    assert {"quadratic", "valley", "saddle", "rosenbrock", "beale", "himmelblau", "rastrigin",
            "ackley", "booth", "cliff"} <= set(SURFACES)


@pytest.mark.parametrize("name", NAMES)
def test_each_known_minimum_is_a_minimum_with_zero_gradient(name: str) -> None:
    fn = surface_fn(name)
    for mx, my in SURFACES[name].minima:
        p = torch.tensor([mx, my], dtype=torch.float64, requires_grad=True)
        fn(p[0], p[1]).backward()
        assert p.grad is not None and p.grad.norm() < 1e-3, (name, p.grad)


@pytest.mark.parametrize("name", NAMES)
def test_each_minimum_is_lower_than_the_ground_around_it(name: str) -> None:
    # Zero gradient holds at a maximum or a saddle too: a minimum is below its neighbours.
    fn = surface_fn(name)
    for mx, my in SURFACES[name].minima:
        at = float(fn(torch.tensor(mx, dtype=torch.float64), torch.tensor(my, dtype=torch.float64)))
        for dx, dy in [(1e-2, 0), (-1e-2, 0), (0, 1e-2), (0, -1e-2), (7e-3, 7e-3)]:
            near = fn(torch.tensor(mx + dx, dtype=torch.float64),
                      torch.tensor(my + dy, dtype=torch.float64))
            assert float(near) > at, (name, (mx, my), (dx, dy))


@pytest.mark.parametrize("name", NAMES)
def test_the_formula_as_typed_equals_the_built_in(name: str) -> None:
    # The page offers each formula to edit as the learner's own: it must be the same surface.
    surface = SURFACES[name]
    text = surface.formula
    for param, value in surface.params.items():
        text = re.sub(rf"\b{param}\b", repr(value), text)
    assert set(re.findall(r"[A-Za-z_]+", text)) <= {"x", "y", *FORMULA_NAMES}
    ours = evaluate(compile_expr(text, Limits()), surface.x_range, surface.y_range, 12,
                    max_numel=1000)
    theirs = evaluate(surface_fn(name), surface.x_range, surface.y_range, 12, max_numel=1000)
    assert torch.allclose(torch.tensor(ours.z), torch.tensor(theirs.z), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_the_start_and_minima_lie_on_the_plot(name: str) -> None:
    surface = SURFACES[name]
    (x0, x1), (y0, y1) = surface.x_range, surface.y_range
    for x, y in [surface.start, *surface.minima]:
        assert x0 <= x <= x1 and y0 <= y <= y1, (name, (x, y))


@pytest.mark.parametrize("name", NAMES)
def test_every_optimizer_has_an_lr_here_that_races_without_diverging(name: str) -> None:
    surface = SURFACES[name]
    assert set(surface.lr) == set(OPTIMIZERS) and surface.steps >= 1
    for optimizer, lr in surface.lr.items():
        run = descend(surface_fn(name), surface.start, min(surface.steps, 100),
                      Run(optimizer, lr=lr))
        assert run.diverged_at is None, (name, optimizer, lr)


def test_grid_rows_follow_y_and_columns_follow_x() -> None:
    grid = evaluate(lambda x, y: x + 10 * y, (0, 2), (0, 1), 3, max_numel=100)
    assert grid.x == [0.0, 1.0, 2.0] and grid.y == [0.0, 0.5, 1.0]
    for i, y in enumerate(grid.y):
        for j, x in enumerate(grid.x):
            assert grid.z[i][j] == pytest.approx(x + 10 * y)


def test_a_grid_equals_the_surface_point_by_point() -> None:
    fn = surface_fn("beale")
    grid = evaluate(fn, (-4.5, 4.5), (-4.5, 4.5), 9, max_numel=100)
    for i, y in enumerate(grid.y):
        for j, x in enumerate(grid.x):
            assert grid.z[i][j] == pytest.approx(float(fn(torch.tensor(x), torch.tensor(y))),
                                                 rel=1e-6)


def test_the_valley_takes_its_condition_number_as_a_parameter() -> None:
    steep = surface_fn("valley", {"condition": 100})
    assert float(steep(torch.tensor(0.0), torch.tensor(1.0))) == 50.0
    with pytest.raises(ProgramError, match="no parameter"):
        surface_fn("valley", {"kappa": 3})


def test_nonfinite_values_are_spelled_for_json() -> None:
    grid = evaluate(lambda x, y: torch.log(x), (0, 1), (0, 1), 2, max_numel=100)
    assert grid.z[0][0] == "-Infinity"


def test_a_learners_expression_equals_the_built_in() -> None:
    ours = compile_expr("(x**2 + y - 11)**2 + (x + y**2 - 7)**2", Limits())
    a = evaluate(ours, (-5, 5), (-5, 5), 20, max_numel=1000)
    b = evaluate(surface_fn("himmelblau"), (-5, 5), (-5, 5), 20, max_numel=1000)
    assert torch.allclose(torch.tensor(a.z), torch.tensor(b.z))


def test_a_learners_program_is_the_loss_of_a_two_parameter_model() -> None:
    program = ("data = torch.linspace(-1, 1, 20)\n"
               "target = 2 * data + 1\n"
               "y_hat = x * data + y\n"
               "loss = ((y_hat - target) ** 2).mean()\n")
    fn = compile_expr(program, Limits())
    grid = evaluate(fn, (0, 4), (-1, 3), 5, max_numel=100)
    assert grid.z[2][2] == pytest.approx(0.0, abs=1e-6)  # x = 2, y = 1: the line itself
    data = torch.linspace(-1, 1, 20)
    expected = ((0.0 * data + (-1.0) - (2 * data + 1)) ** 2).mean()
    assert grid.z[0][0] == pytest.approx(float(expected))


def test_an_error_in_the_learners_program_keeps_its_own_line_number() -> None:
    with pytest.raises(ProgramError) as caught:
        compile_expr("a = 1\nb = 1 / 0\nloss = x", Limits())(torch.zeros(1), torch.zeros(1))
    assert caught.value.line == 2
    with pytest.raises(ProgramError) as error:
        compile_expr("a = 1\nloss = x + nope", Limits())(torch.zeros(1), torch.zeros(1))
    assert error.value.line == 2 and "nope" in error.value.message


def test_a_surface_that_is_not_one_number_per_point_is_refused() -> None:
    fn = compile_expr("torch.stack([x, y])", Limits())
    with pytest.raises(ProgramError, match="one number"):
        fn(torch.zeros(3), torch.zeros(3))


def test_python_if_on_a_tensor_is_refused_and_torch_where_works() -> None:
    with pytest.raises(ProgramError, match="control flow"):
        compile_expr("if x > 0:\n    loss = x\nelse:\n    loss = y", Limits())(
            torch.ones(2), torch.ones(2))
    fn = compile_expr("torch.where(x > 0, x, y)", Limits())
    assert fn(torch.tensor([1.0, -1.0]), torch.tensor([5.0, 5.0])).tolist() == [1.0, 5.0]


def test_resolve_needs_a_name_or_an_expression() -> None:
    with pytest.raises(ProgramError):
        resolve(None, None, None, Limits())
    assert math.isclose(float(resolve("booth", None, None, Limits())(
        torch.tensor(1.0), torch.tensor(3.0))), 0.0)


@pytest.mark.parametrize("text", ["max(x, y)", "x if x > 0 else y"])
def test_a_python_branch_on_x_explains_that_the_grid_runs_at_once(text: str) -> None:
    fn = compile_expr(text, Limits())
    with pytest.raises(ProgramError) as caught:
        evaluate(fn, (-1, 1), (-1, 1), 5, max_numel=1000)
    assert "data-dependent control flow" in caught.value.message
    assert caught.value.hint_key == "hint.vmap_control_flow"


def _typed_back(name: str) -> str:
    """The formula the descent page shows for a built-in, as a learner would paste it back: its
    parameters (the valley's condition) written as their values."""
    surface = SURFACES[name]
    text = surface.formula
    for param, value in surface.params.items():
        text = re.sub(rf"\b{param}\b", repr(value), text)
    return text


@pytest.mark.parametrize("name", NAMES)
def test_each_built_in_formula_typed_back_is_the_same_surface(name: str) -> None:
    surface = SURFACES[name]
    typed = evaluate(compile_expr(_typed_back(name), Limits()), surface.x_range,
                     surface.y_range, 25, max_numel=1000)
    built_in = evaluate(surface_fn(name), surface.x_range, surface.y_range, 25, max_numel=1000)
    assert torch.allclose(torch.tensor(typed.z), torch.tensor(built_in.z), rtol=1e-5,
                          atol=1e-4), name


@pytest.mark.parametrize(("text", "expected"), [
    ("x^2 + y^2", lambda x, y: x**2 + y**2),  # not x ** (2 + y) ** 2, as Python reads ^
    ("-x^2", lambda x, y: -(x**2)),
    ("(x - 1)^2 + 100*(y - x^2)^2", lambda x, y: (x - 1) ** 2 + 100 * (y - x**2) ** 2),
    ("loss = x^2\nloss ^= 1", lambda x, y: x**2),
])
def test_a_caret_is_a_power_with_a_powers_precedence(text: str, expected: Any) -> None:
    x, y = torch.linspace(-2, 2, 7), torch.linspace(-1, 3, 7)
    assert torch.allclose(compile_expr(text, Limits())(x, y), expected(x, y))


@pytest.mark.parametrize("text", ["sin(3*x) + cos(y)", "tan(x/4) * exp(-y) + log(2 + x)",
                                  "sqrt(abs(x)) + tanh(y) + sigmoid(x) + pi - e"])
def test_a_surface_speaks_the_names_its_formulas_use(text: str) -> None:
    x, y = torch.tensor([0.5]), torch.tensor([0.25])
    names = {"sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "exp": torch.exp,
             "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs, "tanh": torch.tanh,
             "sigmoid": torch.sigmoid, "pi": math.pi, "e": math.e}
    assert torch.allclose(compile_expr(text, Limits())(x, y), eval(text, names, {"x": x, "y": y}))


def test_an_unknown_name_in_a_surface_says_which_names_it_may_use() -> None:
    with pytest.raises(ProgramError) as caught:
        compile_expr("sinh(x) + y", Limits())(torch.zeros(1), torch.zeros(1))
    assert caught.value.hint_key == "hint.surface_names"
    assert caught.value.line == 1 and "sinh" in caught.value.message
