"""The descent lab's models: the surfaces, a race of optimizers over one, and its basins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    create_model,
    model_validator,
)

from gradient_lab.optimizers import (
    CLIP_OPTIONS,
    IMPLEMENTATION_FLAGS,
    MAX_ITEMS,
    OPTIMIZER_OPTIONS,
    SCHEDULER_OPTIONS,
    Context,
    Option,
    Run,
    optimizer_conflicts,
    scheduler_conflicts,
)
from gradient_lab.web.schemas.common import ClipKind, OptimizerName, SchedulerKind, SurfaceName

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
    steps: int = Field(description="How many steps a race here takes to show its point.")
    params: dict[str, float] = Field(description="The surface's parameters and defaults.")


class OptimizerOut(BaseModel):
    """How the page names and draws an optimizer: its registry entry, less torch's class."""

    name: str
    labels: dict[str, str] = Field(description="Its name in each page language.")
    color: str
    symbol: str = Field(description="A Plotly marker symbol.")
    dash: str = Field(description="A Plotly line dash: its runs' first line style.")
    options: list[str] = Field(description="The torch keyword arguments a learner may give it.")
    defaults: dict[str, Any] = Field(description="What torch takes for them when none is given.")


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


class _Options(BaseModel):
    """A registry's name (the `tag` field) and the torch keyword arguments it takes.

    _with_options adds a field for every option some name takes, checked as the domain's rule
    for it says; _known refuses, by name, an option this name does not take.
    """

    model_config = ConfigDict(extra="forbid")
    tag: ClassVar[str] = "kind"
    family: ClassVar[str] = "scheduler"
    registry: ClassVar[Mapping[str, Mapping[str, Option]]] = {}
    flags: ClassVar[tuple[str, ...]] = ()  # torch's, which the lab picks itself

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        """The data as given, once every name in it is one this registry entry takes."""
        entry = data.get(cls.tag) if isinstance(data, dict) else None
        if not isinstance(entry, str) or entry not in cls.registry:
            return data  # the tag's own field says what is wrong
        every = {n for options in cls.registry.values() for n in options}
        allowed = [n for n in cls.model_fields if n != cls.tag and n not in every]
        allowed += cls.registry[entry]
        for name in data:
            if name in cls.flags:
                raise ValueError(f"{name} says how torch runs the update, which the lab picks "
                                 f"itself; {cls.family} {entry} takes no {name}")
            if name != cls.tag and name not in allowed:
                raise ValueError(f"unknown option {name!r} for {cls.family} {entry}; the "
                                 f"options are {', '.join(allowed)}")
        return data

    def options(self) -> dict[str, object]:
        """The torch keyword arguments given; one left out or null is torch's default."""
        entry = getattr(self, self.tag)
        return self.model_dump(include=set(self.registry[entry]), exclude_none=True)


def _one(option: Option) -> Any:
    """One value of `option`, as pydantic checks it: strict types, finite numbers, its range."""
    if option.choices:
        return Literal[option.choices]
    if option.kind is float:
        return Annotated[float, Field(strict=True, allow_inf_nan=False, ge=option.ge,
                                      gt=option.gt, lt=option.lt, le=option.le)]
    if option.kind is int:
        return Annotated[int, Field(strict=True, ge=option.ge, gt=option.gt, lt=option.lt,
                                    le=option.le), BeforeValidator(_whole)]
    return Annotated[bool, Field(strict=True)]


def _whole(value: Any) -> Any:
    """A float with nothing after the point as the int it is (JSON Schema's integers hold 10.0);
    anything else as given, for the strict check to judge."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _type(option: Option) -> Any:
    """The field's type: one value, exactly `items` of them, a list, or one per group."""
    one = _one(option)
    if option.items is not None:
        return tuple[(one,) * option.items]  # type: ignore[misc]
    if option.many:  # torch takes an empty list of milestones: no decay
        return Annotated[list[one], Field(max_length=MAX_ITEMS)]  # type: ignore[valid-type]
    per_group = Annotated[list[one], Field(min_length=1, max_length=MAX_ITEMS)]  # type: ignore[valid-type]
    return one | per_group if option.per_group else one


M = TypeVar("M", bound=_Options)


def _with_options(base: type[M], title: str) -> type[M]:
    """`base` with a field for each option in base.registry, which says who takes it.

    One field serves every name that takes the option, so the registry gives an option one
    rule wherever it appears (a test checks).
    """
    rules = {key: option for options in base.registry.values() for key, option in options.items()}
    fields: dict[str, Any] = {}
    for key, option in rules.items():
        takers = [entry for entry, options in base.registry.items() if key in options]
        about = None if len(takers) == len(base.registry) else f"{', '.join(takers)} only."
        fields[key] = ((_type(option), Field(description=about)) if option.required
                       else (_type(option) | None, Field(None, description=about)))
    return create_model(title, __base__=base, __doc__=base.__doc__, **fields)


class _SchedulerIn(_Options):
    """{"kind": ..., torch's keyword arguments for that lr scheduler}."""

    registry: ClassVar[Mapping[str, Mapping[str, Option]]] = SCHEDULER_OPTIONS
    kind: SchedulerKind


class _ClipIn(_Options):
    """{"kind": "norm" | "value", "max": max_norm for norm, clip_value for value}."""

    family: ClassVar[str] = "clip"
    registry: ClassVar[Mapping[str, Mapping[str, Option]]] = CLIP_OPTIONS
    kind: ClipKind


if TYPE_CHECKING:
    SchedulerIn = _SchedulerIn
    ClipIn = _ClipIn
else:
    SchedulerIn = _with_options(_SchedulerIn, "SchedulerIn")
    ClipIn = _with_options(_ClipIn, "ClipIn")


class _RunIn(_Options):
    """One run; its other fields are the optimizer's torch.optim keyword arguments."""

    tag: ClassVar[str] = "optimizer"
    family: ClassVar[str] = "optimizer"
    registry: ClassVar[Mapping[str, Mapping[str, Option]]] = OPTIMIZER_OPTIONS
    flags: ClassVar[tuple[str, ...]] = IMPLEMENTATION_FLAGS

    optimizer: OptimizerName
    lr: float | None = Field(None, gt=0, description="torch's default when left out.")
    lr_y: float | None = Field(None, gt=0, description="A second parameter group: y's own lr.")
    scheduler: SchedulerIn | None = None
    clip: ClipIn | None = None
    label: str | None = Field(None, max_length=80)

    @model_validator(mode="after")
    def _fits(self) -> Self:
        """The run, once its options go together as torch needs (nesterov needs momentum)."""
        _refuse(self.conflicts())
        return self

    def conflicts(self, steps: int | None = None) -> list[str]:
        """What torch would refuse across this run's options, a race of `steps` steps."""
        lines = optimizer_conflicts(self.optimizer, self.options())
        if self.scheduler is not None:
            kind = self.scheduler.kind
            context = Context(self.optimizer, 1 if self.lr_y is None else 2, steps)
            lines += [f"scheduler {kind}: {line}" for line in
                      scheduler_conflicts(kind, self.scheduler.options(), context)]
        return lines

    def to_run(self) -> Run:
        return Run(optimizer=self.optimizer, lr=self.lr, options=self.options(),
                   scheduler=None if self.scheduler is None
                   else {"kind": self.scheduler.kind, **self.scheduler.options()},
                   clip=None if self.clip is None
                   else {"kind": self.clip.kind, **self.clip.options()},
                   lr_y=self.lr_y, label=self.label)


def _refuse(lines: list[str]) -> None:
    if lines:
        raise ValueError("; ".join(lines))


if TYPE_CHECKING:
    RunIn = _RunIn
else:
    RunIn = _with_options(_RunIn, "RunIn")


class DescentRequest(_OnSurface):
    start: tuple[Coordinate, Coordinate]
    steps: int = Field(200, ge=1, le=5_000)
    runs: list[RunIn] = Field(min_length=1, max_length=12)
    noise: float = Field(0.0, ge=0, description="Stochastic gradients: the noise's scale.")
    # Bounded as torch's generator and the runner's JSON hold an int: 2**64 was a 500.
    seed: int = Field(0, ge=0, le=2**63 - 1,
                      description="Seeds the noise: the same request, the same race.")
    sweep: bool = Field(False, description="Race each optimizer over a small lr grid first "
                                           "and use the lr with the lowest final loss.")

    @model_validator(mode="after")
    def _fits(self) -> Self:
        """The race, once each run's scheduler lasts its steps (OneCycleLR's total_steps)."""
        _refuse([f"runs.{i}: {line}" for i, run in enumerate(self.runs)
                 for line in run.conflicts(self.steps)])
        return self


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
    rule: str = Field(description="Its update rule, written with these settings.")
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
