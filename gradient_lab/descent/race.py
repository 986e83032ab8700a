"""Optimizers racing down a surface in lockstep: each run's Trajectory, from torch.optim itself.

Every run is the loop a learner writes (zero_grad, loss, backward, clip, step, scheduler step).
The runs of one race share a single stacked forward and backward per step: run r's parameters
are row r of one (n, 2) tensor P, which the forward reads as two leaves (every x, every y), and
the rows never mix, so row r's gradient is exactly the one its own loop would compute. Each run
keeps its own torch.optim optimizer, which steps a view of its row; tests/test_optimizers.py
pins every trajectory to the plain loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.optim import lr_scheduler

from gradient_lab.descent.surfaces import DTYPE, SurfaceFn
from gradient_lab.optimizers import (
    FLOAT32_MAX,
    Run,
    make_clip,
    make_optimizer,
    make_scheduler,
    named_options,
    refused,
    scheduler_options,
    update_rule,
)
from gradient_lab.tensors import Plain, to_plain

# The optimizer state the page draws: torch's own names.
STATE_KEYS = ("momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "square_avg",
              "grad_avg", "sum")
_HIDDEN = {"foreach", "maximize", "capturable", "differentiable", "fused", "decoupled_weight_decay"}


@dataclass(frozen=True, slots=True)
class Sweep:
    """The learning rates tried for one run, each one's final loss after `steps`, the pick."""

    lrs: list[float]
    final_loss: Plain
    picked: float
    steps: int


@dataclass(frozen=True, slots=True)
class Trajectory:
    """points[k] are the parameters after k steps; per-step lists have one entry per step."""

    label: str
    optimizer: str
    settings: dict[str, Plain]
    rule: str  # its update rule, written with these settings
    points: Plain
    loss: Plain
    grad: Plain
    grad_norm: Plain
    grad_norm_clipped: Plain
    lr: list[float]
    lr_y: list[float] | None
    state: dict[str, Plain]
    diverged_at: int | None
    sweep: Sweep | None = None


@dataclass(frozen=True, slots=True)
class Race:
    """Every run of one race, in the order asked."""

    runs: list[Trajectory]


class _Stepper:
    """One run's optimizer, scheduler and clipping, stepping its view of its row of P."""

    def __init__(self, run: Run, row: torch.Tensor, grad: torch.Tensor, steps: int) -> None:
        if run.lr_y is not None:  # two parameters, x and y, each its own group
            self.params = [row[0:1], row[1:2]]
            for p, g in zip(self.params, (grad[0:1], grad[1:2]), strict=True):
                p.grad = g
        else:
            self.params = [row]
            row.grad = grad
        self.run = run
        self.optimizer = make_optimizer(run, self.params)
        self.scheduler = make_scheduler(run.scheduler, self.optimizer, steps)
        self.clip = make_clip(run.clip)
        self._plateau = isinstance(self.scheduler, lr_scheduler.ReduceLROnPlateau)
        # Only a scheduler changes an lr, so without one a check before the first step will do.
        self._lr_may_overflow = self.scheduler is not None or any(
            group["lr"] > FLOAT32_MAX for group in self.optimizer.param_groups)
        self._lr: list[float] = []  # x's lr at each step, when a scheduler moves it
        self._lr_y: list[float] = []
        self._steps = 0

    def step(self, losses: torch.Tensor, r: int) -> None:
        """One step of the optimizer, then of the scheduler; torch refusing either names them."""
        groups = self.optimizer.param_groups
        if self.scheduler is not None or self._steps < 2:  # else steps 2... repeat step 1's
            self._lr.append(float(groups[0]["lr"]))
            self._lr_y.append(float(groups[-1]["lr"]))
        self._steps += 1
        if self._lr_may_overflow:
            for group in groups:  # an lr past float32 (given, or grown by a scheduler) diverges
                if group["lr"] > FLOAT32_MAX:
                    group["lr"] = math.inf
        try:
            self.optimizer.step()
        except Exception as error:  # noqa: BLE001 - torch finding an option wrong mid-run
            raise refused(f"{self.run.optimizer} at step {self._steps}", named_options(self.run),
                          error) from None
        try:
            if self._plateau:
                self.scheduler.step(losses[r])  # stepped with the run's loss, as torch asks
            elif self.scheduler is not None:
                self.scheduler.step()
        except Exception as error:  # noqa: BLE001 - StepLR divides by step_size here
            spec = self.run.scheduler or {}
            raise refused(f"scheduler {spec.get('kind')} at step {self._steps}",
                          scheduler_options(spec), error) from None

    def lrs(self, steps: int) -> tuple[list[float], list[float]]:
        """x's and y's lr at each of the first `steps` steps."""
        if self.scheduler is not None or steps <= 2:
            return self._lr[:steps], self._lr_y[:steps]
        return ([*self._lr[:1], *self._lr[1:2] * (steps - 1)],
                [*self._lr_y[:1], *self._lr_y[1:2] * (steps - 1)])

    def state(self) -> list[tuple[str, list[torch.Tensor]]]:
        states = [self.optimizer.state[p] for p in self.params]
        return [(key, [s[key] for s in states]) for key in STATE_KEYS
                if all(isinstance(s.get(key), torch.Tensor) for s in states)]

    def settings(self) -> dict[str, Plain]:
        defaults = self.optimizer.defaults
        return {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()
                if k not in _HIDDEN and isinstance(v, (int, float, bool, tuple))}


def race(fn: SurfaceFn, start: tuple[float, float], steps: int, runs: list[Run], *,
         noise: float = 0.0, seed: int = 0,
         device: torch.device | None = None) -> list[Trajectory]:
    """Every run from `start` for `steps` steps, in lockstep; one Trajectory per run.

    With `noise`, each step's loss gains noise * (xi_x * x + xi_y * y), xi ~ N(0, 1) drawn
    from `seed`: every run sees the same stochastic gradients. `loss` records f itself.
    """
    device = device or torch.device("cpu")
    n = len(runs)
    # rows[r] is run r's parameters [x, y], which its optimizer steps in place. The forward
    # reads them through xs and ys: leaves that share their storage (every run's x, then every
    # run's y, each contiguous as autograd likes a leaf), with .grad the same views of `grad`,
    # so backward writes each run's gradient into grad[r], that optimizer's p.grad. Two
    # leaves, instead of one (n, 2) tensor indexed twice, take two SelectBackward nodes out
    # of every backward: a third of its time.
    columns = torch.tensor(list(start), dtype=DTYPE, device=device)[:, None].repeat(1, n)
    grad_columns = torch.zeros_like(columns)
    rows, grad = columns.T, grad_columns.T  # (n, 2) views
    xs, ys = (c.detach().requires_grad_() for c in columns)
    xs.grad, ys.grad = grad_columns  # backward adds into these in place
    seed_grad = torch.ones(n, dtype=DTYPE, device=device)  # d(sum of the losses)/d(loss_r)
    steppers = [_Stepper(run, rows[r], grad[r], steps) for r, run in enumerate(runs)]
    xi = None
    if noise:
        generator = torch.Generator(device).manual_seed(seed)
        xi = noise * torch.randn(steps, 2, generator=generator, dtype=DTYPE, device=device)
    points = torch.empty(steps + 1, n, 2, dtype=DTYPE, device=device)
    losses = torch.empty(steps + 1, n, dtype=DTYPE, device=device)
    grads = torch.empty(steps, n, 2, dtype=DTYPE, device=device)
    clipped = torch.empty_like(grads) if any(r.clip is not None for r in steppers) else grads
    states: list[torch.Tensor] = []  # one flat row per step: every run's state, side by side
    held: list[torch.Tensor] = []
    clipping = [stepper for stepper in steppers if stepper.clip is not None]
    points[0] = rows
    for k in range(steps):
        grad.zero_()  # every run's zero_grad, in one op
        if xi is None:
            f = fn(xs, ys)  # one forward for every run
            loss = f
        else:
            # Through views, as a learner's p[0] and p[1] would be: f's share of the gradient
            # is summed before the noise's is added, so the float32 sums come out the same.
            f = fn(xs.view_as(xs), ys.view_as(ys))
            loss = f + xi[k, 0] * xs + xi[k, 1] * ys
        loss.backward(seed_grad)  # rows never mix: run r's gradient is grad[r]
        losses[k] = f.detach()
        grads[k] = grad
        if clipping:
            for stepper in clipping:
                stepper.clip(stepper.params)  # type: ignore[misc]
            clipped[k] = grad
        seen = loss.detach()
        for r, stepper in enumerate(steppers):
            stepper.step(seen, r)
        points[k + 1] = rows
        if k == 0:
            # torch.optim makes each state tensor on the first step and updates it in place
            # after, so the same tensors are read each step (the oracle tests pin this).
            held = [t for stepper in steppers for _, ts in stepper.state() for t in ts]
        states.append(torch.cat(held) if held else torch.empty(0, dtype=DTYPE))
    with torch.no_grad():
        losses[steps] = fn(rows[:, 0], rows[:, 1])
    return _trajectories(steppers, points, losses, grads, clipped, states)


def _trajectories(steppers: list[_Stepper], points: torch.Tensor, losses: torch.Tensor,
                  grads: torch.Tensor, clipped: torch.Tensor,
                  states: list[torch.Tensor]) -> list[Trajectory]:
    steps = grads.shape[0]
    finite = torch.isfinite(losses) & torch.isfinite(points).all(dim=-1)  # (steps + 1, n)
    norms = torch.linalg.vector_norm(grads, dim=-1)
    clipped_norms = torch.linalg.vector_norm(clipped, dim=-1)
    state = torch.stack(states) if states else torch.empty(0, 0)
    out: list[Trajectory] = []
    offset = 0
    for r, stepper in enumerate(steppers):
        bad = (~finite[:, r]).nonzero()
        diverged = int(bad[0]) if bad.numel() else None
        end = steps if diverged is None else diverged  # a diverged run stops where it blew up
        lrs = stepper.lrs(end)
        run_state: dict[str, Plain] = {}
        for key, ts in stepper.state():
            width = sum(t.numel() for t in ts)
            run_state[key] = _plain(state[:end, offset:offset + width])
            offset += width
        out.append(Trajectory(
            label=stepper.run.label or stepper.run.optimizer,
            optimizer=stepper.run.optimizer,
            settings=stepper.settings(),
            rule=update_rule(stepper.run.optimizer, stepper.settings()),
            points=_plain(points[:end + 1, r]),
            loss=_plain(losses[:end + 1, r]),
            grad=_plain(grads[:end, r]),
            grad_norm=_plain(norms[:end, r]),
            grad_norm_clipped=_plain(clipped_norms[:end, r]),
            lr=lrs[0],
            lr_y=lrs[1] if stepper.run.lr_y is not None else None,
            state=run_state,
            diverged_at=diverged,
        ))
    return out


def _plain(t: torch.Tensor) -> Plain:
    return to_plain(t, max_numel=max(1, t.numel()))


def descend(fn: SurfaceFn, start: tuple[float, float], steps: int, run: Run, *,
            noise: float = 0.0, seed: int = 0) -> Trajectory:
    """One run alone: the race of one."""
    return race(fn, start, steps, [run], noise=noise, seed=seed)[0]


def final_losses(trajectories: list[Trajectory]) -> list[float]:
    """Each run's last loss; inf for a run that diverged (for ranking)."""
    out = []
    for t in trajectories:
        last = t.loss[-1] if isinstance(t.loss, list) and t.loss else math.inf
        out.append(float(last) if t.diverged_at is None and isinstance(last, float) else math.inf)
    return out
