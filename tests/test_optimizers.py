"""Every race equals the plain torch.optim loop a learner writes, written out here as the oracle."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

from gradient_lab.descent.race import descend, race
from gradient_lab.descent.surfaces import SURFACES, compile_expr, surface_fn
from gradient_lab.descent.sweeps import SWEEP_LRS, basins, sweep_lr
from gradient_lab.errors import RequestInvalid
from gradient_lab.optimizers import (
    CLIP_OPTIONS,
    CLIPS,
    IMPLEMENTATION_FLAGS,
    OPTIMIZER_OPTIONS,
    OPTIMIZERS,
    SCHEDULER_OPTIONS,
    SCHEDULERS,
    Context,
    Run,
    optimizer_conflicts,
    scheduler_conflicts,
    update_rule,
)
from gradient_lab.runner.limits import Limits

ROSENBROCK = surface_fn("rosenbrock")
START = (-1.5, 2.0)
TOLERANCE = 1e-6


def _plain_loop(f: Callable[..., torch.Tensor], start: tuple[float, float], steps: int,
                make: Callable[[list[Any]], torch.optim.Optimizer], *,
                scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
                clip: Callable[[list[torch.Tensor]], object] | None = None,
                groups: bool = False, noise: torch.Tensor | None = None) -> dict[str, Any]:
    """The tutorial's loop: zero_grad, loss, backward, clip, step, scheduler step."""
    if groups:
        x = torch.tensor([start[0]], requires_grad=True)
        y = torch.tensor([start[1]], requires_grad=True)
        params = [x, y]
        optimizer = make([{"params": [x]}, {"params": [y]}])
    else:
        p = torch.tensor(list(start), requires_grad=True)
        params = [p]
        optimizer = make([p])
    sched = scheduler(optimizer) if scheduler else None

    def xy() -> tuple[torch.Tensor, torch.Tensor]:
        return (params[0][0], params[1][0]) if groups else (params[0][0], params[0][1])

    out: dict[str, list[Any]] = {"points": [], "loss": [], "grad": [], "lr": [], "state": []}
    for k in range(steps):
        out["points"].append([float(v.detach()) for v in xy()])
        optimizer.zero_grad()
        f_value = f(*xy())
        loss = f_value if noise is None else f_value + noise[k, 0] * xy()[0] + noise[k, 1] * xy()[1]
        out["loss"].append(float(f_value.detach()))
        if not math.isfinite(float(f_value.detach())):
            return out
        loss.backward()
        out["grad"].append(torch.cat([q.grad for q in params]).tolist())
        if clip is not None:
            clip(params)
        out["lr"].append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        if isinstance(sched, torch.optim.lr_scheduler.ReduceLROnPlateau):
            sched.step(loss.detach())
        elif sched is not None:
            sched.step()
        out["state"].append({key: torch.cat([optimizer.state[q][key] for q in params]).tolist()
                             for key in ("momentum_buffer", "exp_avg", "exp_avg_sq",
                                         "max_exp_avg_sq", "square_avg", "sum")
                             if key in optimizer.state[params[0]]})
    out["points"].append([float(v.detach()) for v in xy()])
    out["loss"].append(float(f(*xy()).detach()))
    return out


def _close(a: Any, b: Any) -> None:
    ta, tb = (torch.as_tensor(v, dtype=torch.float64) for v in (a, b))
    assert ta.shape == tb.shape and torch.allclose(ta, tb, atol=TOLERANCE, rtol=0), (a, b)


def _assert_matches(trajectory: Any, oracle: dict[str, Any]) -> None:
    _close(trajectory.points, oracle["points"])
    _close(trajectory.loss, oracle["loss"])
    _close(trajectory.grad, oracle["grad"])
    _close(trajectory.lr, oracle["lr"])
    for key in trajectory.state:
        _close(trajectory.state[key], [s[key] for s in oracle["state"]])
    assert set(trajectory.state) == set(oracle["state"][0]) if oracle["state"] else True


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_each_optimizer_equals_the_plain_torch_optim_loop(name: str) -> None:
    cls, preset = OPTIMIZERS[name].cls, OPTIMIZERS[name].preset
    lr = SURFACES["rosenbrock"].lr[name]
    trajectory = descend(ROSENBROCK, START, 150, Run(name, lr=lr))
    oracle = _plain_loop(ROSENBROCK, START, 150, lambda p: cls(p, lr=lr, **preset))
    _assert_matches(trajectory, oracle)
    assert trajectory.diverged_at is None and len(trajectory.points) == 151


def test_a_race_of_every_optimizer_equals_each_run_alone() -> None:
    runs = [Run(name, lr=SURFACES["rosenbrock"].lr[name]) for name in OPTIMIZERS]
    raced = race(ROSENBROCK, START, 200, runs)
    for run, trajectory in zip(runs, raced, strict=True):
        cls, preset = OPTIMIZERS[run.optimizer].cls, OPTIMIZERS[run.optimizer].preset
        oracle = _plain_loop(ROSENBROCK, START, 200, lambda p, c=cls, k=preset, r=run:
                             c(p, lr=r.lr, **k))
        _assert_matches(trajectory, oracle)


def test_torch_keyword_arguments_pass_through_with_torch_names() -> None:
    run = Run("adam", lr=0.05, options={"betas": [0.8, 0.9], "weight_decay": 0.1, "amsgrad": True})
    trajectory = descend(ROSENBROCK, START, 80, run)
    oracle = _plain_loop(ROSENBROCK, START, 80, lambda p: torch.optim.Adam(
        p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True))
    _assert_matches(trajectory, oracle)
    assert trajectory.settings["betas"] == [0.8, 0.9] and trajectory.settings["amsgrad"] is True


@pytest.mark.parametrize(("name", "options"), [
    ("adam", {"foreach": True}),
    ("adam", {"fused": True}),
    ("sgd", {"foreach": True, "momentum": 0.5}),
    ("rmsprop", {"foreach": False}),
])
def test_a_learners_choice_of_torch_implementation_is_kept(name: str,
                                                           options: dict[str, Any]) -> None:
    """The race settles foreach itself only when neither foreach nor fused is given."""
    cls, preset = OPTIMIZERS[name].cls, OPTIMIZERS[name].preset
    lr = SURFACES["rosenbrock"].lr[name]
    trajectory = descend(ROSENBROCK, START, 60, Run(name, lr=lr, options=options))
    oracle = _plain_loop(ROSENBROCK, START, 60, lambda p: cls(p, lr=lr, **preset, **options))
    _assert_matches(trajectory, oracle)


SCHEDULER_CASES: dict[str, dict[str, Any]] = {
    "step": {"step_size": 20, "gamma": 0.5},
    "multistep": {"milestones": [10, 40], "gamma": 0.3},
    "exponential": {"gamma": 0.97},
    "cosine": {"T_max": 60},
    "plateau": {"patience": 3, "factor": 0.5},
    "onecycle": {"max_lr": 0.1, "total_steps": 100},
    "warmup": {"start_factor": 0.1, "total_iters": 30},
}


def test_every_scheduler_kind_is_covered() -> None:
    assert set(SCHEDULER_CASES) == set(SCHEDULERS)


@pytest.mark.parametrize("kind", list(SCHEDULER_CASES))
def test_each_scheduler_equals_the_plain_loop(kind: str) -> None:
    kwargs = SCHEDULER_CASES[kind]
    run = Run("adam", lr=0.05, scheduler={"kind": kind, **kwargs})
    trajectory = descend(ROSENBROCK, START, 100, run)
    cls = SCHEDULERS[kind][0]
    oracle = _plain_loop(ROSENBROCK, START, 100, lambda p: torch.optim.Adam(p, lr=0.05),
                         scheduler=lambda o: cls(o, **kwargs))
    _assert_matches(trajectory, oracle)
    assert len(set(trajectory.lr)) > 1  # the schedule really moved the lr


@pytest.mark.parametrize(("kind", "clip"), [
    ("norm", lambda ps: torch.nn.utils.clip_grad_norm_(ps, max_norm=1.0)),
    ("value", lambda ps: torch.nn.utils.clip_grad_value_(ps, clip_value=1.0)),
])
def test_each_clip_equals_the_plain_loop_and_reports_both_norms(kind: str, clip: Any) -> None:
    run = Run("sgd", lr=0.01, clip={"kind": kind, "max": 1.0})
    trajectory = descend(ROSENBROCK, START, 100, run)
    oracle = _plain_loop(ROSENBROCK, START, 100, lambda p: torch.optim.SGD(p, lr=0.01), clip=clip)
    _assert_matches(trajectory, oracle)
    before = torch.tensor(trajectory.grad_norm)
    after = torch.tensor(trajectory.grad_norm_clipped)
    _close(before, torch.linalg.vector_norm(torch.tensor(oracle["grad"]), dim=1))
    assert (after <= before + 1e-6).all() and (after < before).any()
    if kind == "norm":
        assert (after <= 1.0 + 1e-5).all()


def test_two_parameter_groups_give_x_and_y_their_own_lr() -> None:
    run = Run("adamw", lr=0.1, lr_y=0.005, options={"weight_decay": 0.01})
    trajectory = descend(ROSENBROCK, START, 100, run)

    def make(groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        groups[1]["lr"] = 0.005
        return torch.optim.AdamW(groups, lr=0.1, weight_decay=0.01)

    oracle = _plain_loop(ROSENBROCK, START, 100, make, groups=True)
    _assert_matches(trajectory, oracle)
    assert trajectory.lr_y == [0.005] * 100 and trajectory.lr == [0.1] * 100


def test_noisy_gradients_are_seeded_and_equal_the_plain_loop() -> None:
    noise = 0.5 * torch.randn(60, 2, generator=torch.Generator().manual_seed(7))
    trajectory = descend(ROSENBROCK, START, 60, Run("momentum", lr=0.0005), noise=0.5, seed=7)
    oracle = _plain_loop(ROSENBROCK, START, 60,
                         lambda p: torch.optim.SGD(p, lr=0.0005, momentum=0.9), noise=noise)
    _assert_matches(trajectory, oracle)
    again = descend(ROSENBROCK, START, 60, Run("momentum", lr=0.0005), noise=0.5, seed=7)
    assert again.points == trajectory.points


def test_a_diverging_run_stops_with_diverged_at_and_the_others_carry_on() -> None:
    runs = [Run("sgd", lr=0.001), Run("sgd", lr=0.004)]
    calm, wild = race(ROSENBROCK, START, 200, runs)
    oracle = _plain_loop(ROSENBROCK, START, 200, lambda p: torch.optim.SGD(p, lr=0.004))
    assert wild.diverged_at == len(oracle["loss"]) - 1
    assert len(wild.points) == wild.diverged_at + 1 and len(wild.grad) == wild.diverged_at
    assert wild.loss[-1] in ("Infinity", "NaN")
    assert calm.diverged_at is None and len(calm.points) == 201


def test_torch_refusing_a_setting_is_a_request_error() -> None:
    with pytest.raises(RequestInvalid, match="Invalid learning rate"):
        descend(ROSENBROCK, START, 5, Run("sgd", lr=-1.0))
    with pytest.raises(RequestInvalid, match="unexpected keyword"):
        descend(ROSENBROCK, START, 5, Run("adam", options={"not_an_option": 1}))


def test_every_registered_name_has_its_option_rules() -> None:
    assert set(OPTIMIZER_OPTIONS) == set(OPTIMIZERS)
    assert set(SCHEDULER_OPTIONS) == set(SCHEDULERS)
    assert set(CLIP_OPTIONS) == set(CLIPS)


@pytest.mark.parametrize("registry", [OPTIMIZER_OPTIONS, SCHEDULER_OPTIONS, CLIP_OPTIONS])
def test_an_option_has_one_rule_wherever_it_appears(registry: dict[str, Any]) -> None:
    # The schema gives each option name one field, shared by every name that takes it.
    rules: dict[str, Any] = {}
    for options in registry.values():
        for key, option in options.items():
            assert rules.setdefault(key, option) == option, key


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_the_option_rules_name_only_torchs_own_keyword_arguments(name: str) -> None:
    taken = set(inspect.signature(OPTIMIZERS[name].cls).parameters) - {"params", "lr"}
    assert set(OPTIMIZER_OPTIONS[name]) <= taken
    assert taken - set(OPTIMIZER_OPTIONS[name]) <= set(IMPLEMENTATION_FLAGS)  # nothing forgotten


@pytest.mark.parametrize("kind", list(SCHEDULERS))
def test_the_scheduler_rules_name_only_torchs_own_keyword_arguments(kind: str) -> None:
    taken = set(inspect.signature(SCHEDULERS[kind][0]).parameters) - {"optimizer"}
    assert set(SCHEDULER_OPTIONS[kind]) <= taken
    # last_epoch resumes a run from a checkpoint; a race has steps, so total_steps, not epochs.
    assert taken - set(SCHEDULER_OPTIONS[kind]) <= {"last_epoch", "epochs", "steps_per_epoch"}


@pytest.mark.parametrize(("run", "named"), [
    # ZeroDivisionError while stepping: StepLR and CosineAnnealingLR divide by their option.
    (Run("sgd", scheduler={"kind": "step", "step_size": 0}), "step_size=0"),
    (Run("sgd", scheduler={"kind": "cosine", "T_max": 0}), "T_max=0"),
    # IndexError while building (one beta), ValueError while stepping (three).
    (Run("adam", options={"betas": [0.9]}), "betas=(0.9,)"),
    (Run("adam", options={"betas": [0.9, 0.99, 0.5]}), "betas=(0.9, 0.99, 0.5)"),
    # AssertionError while stepping: capturable needs an accelerator.
    (Run("adam", options={"capturable": True}), "capturable=True"),
    # ZeroDivisionError while building: 0.1 * 10 steps leaves OneCycleLR's first phase empty.
    (Run("sgd", scheduler={"kind": "onecycle", "pct_start": 0.1}), "pct_start=0.1"),
    # RuntimeError while stepping: Adam's lr / (1 - beta1) overflows a float32 step.
    (Run("adam", lr=3e38), "lr=3e+38"),
])
def test_whatever_torch_raises_over_an_option_is_a_request_error_naming_it(
        run: Run, named: str) -> None:
    with pytest.raises(RequestInvalid, match=re.escape(named)):
        descend(ROSENBROCK, START, 10, run)


def test_an_option_torch_refuses_mid_basins_map_is_a_request_error() -> None:
    with pytest.raises(RequestInvalid, match="capturable=True"):
        basins(ROSENBROCK, Run("adam", options={"capturable": True}), (-2, 2), (-1, 3), 3, 2,
               max_numel=100)


def test_a_basins_lr_past_float32_diverges_everywhere_as_a_race_does() -> None:
    result = basins(ROSENBROCK, Run("adam", lr=1e300), (-2, 2), (-1, 3), 3, 2, max_numel=100)
    assert {v for row in result.basin for v in row} == {-1}


def test_the_rules_across_options_name_what_clashes() -> None:
    (line,) = optimizer_conflicts("nesterov", {"dampening": 0.5})
    assert "nesterov" in line and "dampening=0.5" in line
    assert optimizer_conflicts("sgd", {"nesterov": True}) and not optimizer_conflicts(
        "sgd", {"nesterov": True, "momentum": 0.5})
    (line,) = scheduler_conflicts("onecycle", {"total_steps": 5}, Context("adam", steps=10))
    assert "total_steps=5" in line and "10 steps" in line
    (line,) = scheduler_conflicts("onecycle", {}, Context("adagrad"))
    assert "cycle_momentum" in line and "adagrad" in line
    assert not scheduler_conflicts("onecycle", {"cycle_momentum": False}, Context("adagrad"))
    (line,) = scheduler_conflicts("plateau", {"min_lr": [0.1, 0.2]}, Context("adam", groups=1))
    assert line.startswith("min_lr has 2 values")
    assert not scheduler_conflicts("plateau", {"min_lr": [0.1, 0.2]}, Context("adam", groups=2))


def test_a_learners_surface_races_like_the_same_built_in() -> None:
    learner = compile_expr("(1 - x)**2 + 100 * (y - x**2)**2", Limits())
    runs = [Run("adam", lr=0.05), Run("sgd", lr=0.001)]
    for ours, theirs in zip(race(learner, START, 100, runs), race(ROSENBROCK, START, 100, runs),
                            strict=True):
        _close(ours.points, theirs.points)


def test_the_sweep_picks_the_lr_with_the_lowest_final_loss() -> None:
    (picked,) = sweep_lr(ROSENBROCK, START, 100, [Run("adam")])
    finals = []
    for lr in SWEEP_LRS:
        t = descend(ROSENBROCK, START, 100, Run("adam", lr=lr))
        finals.append(math.inf if t.diverged_at is not None else t.loss[-1])
    assert picked.picked == SWEEP_LRS[finals.index(min(finals))]
    _close([v if isinstance(v, float) else math.inf for v in picked.final_loss], finals)


def test_basins_end_where_each_starts_plain_loop_ends() -> None:
    himmelblau = surface_fn("himmelblau")
    result = basins(himmelblau, Run("adam", lr=0.1), (-5, 5), (-5, 5), 12, 150,
                    SURFACES["himmelblau"].minima, max_numel=10_000)
    assert sorted(set(v for row in result.basin for v in row)) == [0, 1, 2, 3]
    for i, j in [(0, 0), (3, 7), (11, 2), (6, 6)]:
        start = (result.x[j], result.y[i])
        oracle = _plain_loop(himmelblau, start, 150, lambda p: torch.optim.Adam(p, lr=0.1))
        end = torch.tensor(oracle["points"][-1])
        nearest = torch.cdist(end[None], torch.tensor(result.minima)).argmin()
        assert result.basin[i][j] == int(nearest)


def test_basins_leave_starts_that_have_not_settled_unassigned() -> None:
    result = basins(surface_fn("quadratic"), Run("sgd", lr=0.01), (-2, 2), (-2, 2), 9, 5,
                    max_numel=10_000)  # five small steps: only starts near (0, 0) arrive
    assert result.minima == [[0.0, 0.0]] or len(result.minima) <= 1
    flat = [v for row in result.basin for v in row]
    assert flat.count(-1) > len(flat) // 2 and result.basin[4][4] == 0


def test_each_optimizer_looks_unlike_every_other() -> None:
    # Eight or more optimizers on one plot: no two share a colour or a marker.
    kinds = list(OPTIMIZERS.values())
    assert len(kinds) >= 8
    assert len({kind.color.lower() for kind in kinds}) == len(kinds)
    assert len({kind.symbol for kind in kinds}) == len(kinds)
    for kind in kinds:
        assert re.fullmatch(r"#[0-9A-Fa-f]{6}", kind.color)
        assert kind.dash in ("solid", "dash", "dashdot", "longdash", "longdashdot")


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_each_optimizer_is_named_in_every_page_language(name: str) -> None:
    from gradient_lab.i18n import LANGUAGES

    assert set(OPTIMIZERS[name].labels) == set(LANGUAGES)
    assert all(label.strip() for label in OPTIMIZERS[name].labels.values())


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_each_update_rule_is_written_with_the_runs_own_settings(name: str) -> None:
    settings = descend(ROSENBROCK, START, 2, Run(name, lr=0.001)).settings
    written = update_rule(name, settings)
    assert "{" not in written and "θ" in written
    for key, symbol in [("momentum", "μ"), ("alpha", "α")]:
        if f"{symbol} = " in written:
            assert f"{symbol} = {settings[key]}" in written


def test_the_rule_says_the_momentum_and_betas_a_run_raced_with() -> None:
    slow = descend(ROSENBROCK, START, 2, Run("momentum", lr=0.001, options={"momentum": 0.5}))
    assert "μ = 0.5" in update_rule("momentum", slow.settings)
    assert "μ = 0.9" not in update_rule("momentum", slow.settings)
    plain = descend(ROSENBROCK, START, 2, Run("sgd", lr=0.001))
    assert update_rule("sgd", plain.settings) == "θ ← θ − lr·g"  # no momentum: no buffer
    adam = descend(ROSENBROCK, START, 2, Run("adam", lr=0.01, options={"betas": [0.8, 0.95]}))
    assert "β₁ = 0.8, β₂ = 0.95" in adam.rule
    decayed = descend(ROSENBROCK, START, 2, Run("adam", lr=0.01, options={"weight_decay": 0.5}))
    assert "λ = 0.5" in decayed.rule
