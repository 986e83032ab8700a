"""The descent lab's models: the surfaces, a race of optimizers over one, and its basins."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.optimizers import Run
from app.schemas.common import ClipKind, OptimizerName, SchedulerKind, SurfaceName

# A coordinate on a surface: far past any surface a lesson draws, and far below where a grid's
# float32 overflows (about 3e38), which answered a range of 1e300 with a 500.
Coordinate = Annotated[float, Field(ge=-1e6, le=1e6)]
Range = tuple[Coordinate, Coordinate]
Number = float | str  # JSON has no NaN or inf: to_plain spells them "NaN", "Infinity"


class SurfaceOut(BaseModel):
    name: str
    formula: str = Field(description="As a torch expression of x and y.")
    latex: str
    x_range: Range
    y_range: Range
    start: tuple[float, float]
    minima: list[tuple[float, float]]
    lr: dict[str, float] = Field(description="A learning rate per optimizer that races well.")
    params: dict[str, float] = Field(description="The surface's parameters and defaults.")


class SurfaceExpr(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expr: str = Field(description="An expression in x and y, or a short program that sets loss; "
                                  "run in a walled child.")


class _OnSurface(BaseModel):
    model_config = ConfigDict(extra="forbid")

    surface: SurfaceName | SurfaceExpr
    params: dict[str, float] = Field(default_factory=dict,
                                     description="The surface's parameters, e.g. condition.")

    def spec(self) -> dict[str, object]:
        """The job's surface arguments: a built-in name, or the learner's expression."""
        if isinstance(self.surface, SurfaceExpr):
            return {"surface": None, "expr": self.surface.expr, "params": self.params}
        return {"surface": self.surface, "expr": None, "params": self.params}


class SurfaceRequest(_OnSurface):
    x_range: Range
    y_range: Range
    resolution: int = Field(100, ge=2, le=400)


class GridResponse(BaseModel):
    x: list[Number]
    y: list[Number]
    z: list[list[Number]] = Field(description="z[i][j] = f(x[j], y[i]).")


class SchedulerIn(BaseModel):
    """{"kind": ..., torch's keyword arguments (step_size, gamma, T_max, ...)}."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, float | bool | str | list[float]] = Field(init=False)

    kind: SchedulerKind


class ClipIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ClipKind
    max: float = Field(gt=0, description="max_norm for norm, clip_value for value.")


class RunIn(BaseModel):
    """One run; any other field is a torch.optim keyword argument (momentum, betas, ...)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, float | bool | list[float]] = Field(init=False)

    optimizer: OptimizerName
    lr: float | None = Field(None, gt=0, description="torch's default when left out.")
    lr_y: float | None = Field(None, gt=0, description="A second parameter group: y's own lr.")
    scheduler: SchedulerIn | None = None
    clip: ClipIn | None = None
    label: str | None = Field(None, max_length=80)

    def to_run(self) -> Run:
        return Run(optimizer=self.optimizer, lr=self.lr, options=dict(self.model_extra or {}),
                   scheduler=self.scheduler.model_dump() if self.scheduler else None,
                   clip=self.clip.model_dump() if self.clip else None, lr_y=self.lr_y,
                   label=self.label)


class DescentRequest(_OnSurface):
    start: tuple[Coordinate, Coordinate]
    steps: int = Field(200, ge=1, le=5_000)
    runs: list[RunIn] = Field(min_length=1, max_length=12)
    noise: float = Field(0.0, ge=0, description="Stochastic gradients: the noise's scale.")
    seed: int = Field(0, ge=0, description="Seeds the noise: the same request, the same race.")
    sweep: bool = Field(False, description="Race each optimizer over a small lr grid first "
                                           "and use the lr with the lowest final loss.")


class SweepOut(BaseModel):
    lrs: list[float]
    final_loss: list[Number]
    picked: float
    steps: int


class TrajectoryOut(BaseModel):
    label: str
    optimizer: str
    settings: dict[str, Any] = Field(description="The optimizer's hyperparameters, torch's "
                                                 "defaults filled in.")
    points: Any = Field(description="steps + 1 points [x, y]; points[0] is the start.")
    loss: Any = Field(description="f at each point.")
    grad: Any = Field(description="The gradient at step k, before clipping.")
    grad_norm: Any
    grad_norm_clipped: Any = Field(description="The gradient's norm after clipping.")
    lr: list[float] = Field(description="The lr each step used (x's, with two groups).")
    lr_y: list[float] | None
    state: dict[str, Any] = Field(description="Optimizer state after each step, by torch's "
                                              "names: momentum_buffer, exp_avg, exp_avg_sq...")
    diverged_at: int | None = Field(description="The step whose loss was inf or NaN; the run "
                                                "stops there.")
    sweep: SweepOut | None


class DescentResponse(BaseModel):
    runs: list[TrajectoryOut]


class BasinsRequest(_OnSurface):
    run: RunIn
    x_range: Range
    y_range: Range
    resolution: int = Field(40, ge=2, le=60)
    steps: int = Field(200, ge=1, le=1_000)


class BasinsResponse(BaseModel):
    x: list[Number]
    y: list[Number]
    basin: list[list[int]] = Field(description="basin[i][j]: the index in minima reached from "
                                               "(x[j], y[i]); -1 when none (diverged).")
    loss: Any
    minima: Any
    steps: int
