"""Request and response models of /api/*: the contract, in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.optimizers import CLIPS, OPTIMIZERS, SCHEDULERS, Run
from app.surfaces import SURFACES
from app.training.models import Activation, DatasetName, Init
from app.training.nan import Cause, Fix

Device = Literal["auto", "cpu", "cuda"]


class GraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The PyTorch program to run.")
    device: Device = Field("auto", description="Where to run it; auto picks CUDA when present.")


class VariableOut(BaseModel):
    value: Any = Field(description="A number, nested lists, or a summary for large tensors.")
    grad: Any
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None = Field(description="The grad_fn class name, e.g. MulBackward0.")
    shape: list[int]
    dtype: str
    line: int | None = Field(description="The line that produced this tensor.")


class SavedOut(BaseModel):
    name: str = Field(description="The saved attribute, as torchviz's show_saved reads it: self.")
    value: Any
    shape: list[int] | None


class NodeOut(BaseModel):
    id: str = Field(description="n0, n1, ... in walk order: the same program gives the same ids.")
    kind: Literal["leaf", "op", "const"]
    name: str | None = Field(description="The learner's variable bound to this tensor, if any.")
    op: str | None = Field(description="grad_fn class name (MulBackward0); null for leaves.")
    shape: list[int] | None
    dtype: str | None
    value: Any
    grad: Any = Field(description="For leaves: .grad. For ops: the gradient that reached the "
                                  "node in the last traced backward, kept or not.")
    grad_kept: bool = Field(description="True when .grad holds it (leaves, retain_grad()).")
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    is_output: bool = Field(description="A root: a backward call started here, or no op uses it.")
    line: int | None
    module: str | None = Field(description="The nn.Module call this op belongs to (model.0).")
    origin: str = Field(description="'forward', or 'backward N' for nodes built by create_graph.")
    saved: list[SavedOut]
    nonfinite: bool


class EdgeOut(BaseModel):
    source: str = Field(description="The input, in forward direction.")
    target: str = Field(description="The op (or cut tensor) that consumes it.")
    kind: Literal["data", "detached", "no_grad"]
    input: int | None = Field(description="Position in the target's next_functions.")


class GradInOut(BaseModel):
    target: str | None = Field(description="The input node this gradient is sent to.")
    grad: Any
    local: Any = Field(description="d(output)/d(input) for scalar and elementwise ops, else null.")


class StepOut(BaseModel):
    node: str
    op: str
    grad_outputs: list[Any] = Field(description="The gradient(s) that arrived at this node.")
    grad_inputs: list[GradInOut] = Field(description="What it sent to each input.")


class BackwardOut(BaseModel):
    index: int
    kind: Literal["backward", "grad"]
    line: int
    roots: list[str]
    create_graph: bool
    retain_graph: bool
    steps: list[StepOut]
    leaf_grads: dict[str, Any] = Field(description="Each leaf's .grad right after this call.")
    error: str | None = Field(description="Set when this call raised (backward twice, ...).")


class GradcheckOut(BaseModel):
    line: int
    passed: bool
    message: str | None
    analytical: Any
    numerical: Any


class NonfiniteOut(BaseModel):
    node: str
    where: Literal["value", "grad"]


class GraphResponse(BaseModel):
    device: str
    stdout: str
    variables: dict[str, VariableOut]
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    backward: list[BackwardOut]
    gradchecks: list[GradcheckOut]
    first_nonfinite: NonfiniteOut | None
    truncated: bool = Field(description="True when more backward calls ran than were traced.")


# --- the descent lab -------------------------------------------------------------------------
# The allowed names come from the domain registries, so they are written down once.

if TYPE_CHECKING:
    SurfaceName = str
    OptimizerName = str
    SchedulerKind = str
    ClipKind = str
else:
    SurfaceName = Literal[tuple(SURFACES)]
    OptimizerName = Literal[tuple(OPTIMIZERS)]
    SchedulerKind = Literal[tuple(SCHEDULERS)]
    ClipKind = Literal[tuple(CLIPS)]

# A coordinate on a surface: far past any surface a lesson draws, and far below where a grid's
# float32 overflows (about 3e38), which answered a range of 1e300 with a 500.
Coordinate = Annotated[float, Field(ge=-1e6, le=1e6)]
Range = tuple[Coordinate, Coordinate]
Model = BaseModel


def to_json(model: type[BaseModel], result: object) -> str:
    """`result` (a dataclass) as `model`'s JSON, reading its lists in place."""
    return model.model_validate(result, from_attributes=True).model_dump_json()


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
                                  "run by the sandbox.")


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


# The training lab (/api/training/...). Sizes are bounded by app.training.SIZES, which answers
# 413 naming the value; the names come from the domain's Literal types, one per registry.


class _TrainingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    device: Device = Field("auto", description="Where to train; auto picks CUDA when present.")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seeds the data, the init and batches.")


class FlowRequest(_TrainingRequest):
    depth: int = Field(20, ge=1, description="Hidden layers (Linear, BatchNorm?, activation).")
    width: int = Field(64, ge=1)
    activation: Activation = "sigmoid"
    init: Init = "default"
    batchnorm: bool = False
    residual: bool = False
    steps: int = Field(20, ge=1, description="SGD steps recorded in the heatmap.")
    lr: float = Field(0.1, gt=0, le=100)
    batch: int = Field(128, ge=2)


class FlowResponse(BaseModel):
    layers: list[str]
    norms: list[Any] = Field(description="Each Linear weight's grad norm at step 0, first to last.")
    heatmap: list[list[Any]] = Field(description="[layer][step] grad norms.")
    loss: list[Any]
    ratio: Any = Field(description="First layer's norm / last layer's norm at step 0.")


class TrainRequest(_TrainingRequest):
    dataset: DatasetName = "moons"
    points: int = Field(1000, ge=10)
    noise: float = Field(0.1, ge=0, le=1)
    width: int = Field(64, ge=1)
    depth: int = Field(2, ge=1)
    activation: Activation = "relu"
    optimizer: OptimizerName = "adam"
    lr: float = Field(0.01, gt=0, le=100)
    weight_decay: float = Field(0.0, ge=0, le=10)
    scheduler: Literal["none"] | SchedulerKind = "none"
    batch_size: int = Field(100, ge=1)
    accumulation: int = Field(1, ge=1, description="Micro-batches per optimizer step.")
    clip: Literal["none"] | ClipKind = "none"
    # Bounded: clip_grad_value_ cannot clamp float32 gradients at a float past float32's range.
    max_norm: float = Field(1.0, gt=0, le=1e6, description="The norm (or value) clipping keeps.")
    steps: int = Field(200, ge=1)


class TrainDataOut(BaseModel):
    x: list[Any]
    y: list[Any]
    grid_x: list[Any]
    grid_y: list[Any]


class TrainChunkOut(BaseModel):
    """One server-sent event of POST /api/training/run: the steps of one chunk."""

    start: int
    loss: list[Any]
    grad_norm: list[Any]
    clipped_norm: list[Any]
    lr: list[Any]
    accuracy: float
    boundary: list[list[Any]] = Field(description="P(class 1), [row = grid_y][column = grid_x].")
    total: int
    diverged: bool
    data: TrainDataOut | None = Field(description="The points and grid, in the first chunk only.")


class AccumulationRequest(_TrainingRequest):
    micro_batches: int = Field(4, ge=1)
    micro_batch: int = Field(32, ge=1)


class AccumulationResponse(BaseModel):
    layers: list[str]
    big_batch: list[Any]
    accumulated: list[Any]
    undivided: list[Any]
    max_difference: float
    max_difference_undivided: float
    ratio_undivided: float


class PrecisionRequest(_TrainingRequest):
    steps: int = Field(40, ge=1)
    width: int = Field(256, ge=1)
    batch: int = Field(512, ge=2)


class PrecisionResponse(BaseModel):
    device: str
    dtype: str
    scaler: bool
    loss_fp32: list[Any]
    loss_amp: list[Any]
    seconds_fp32: float
    seconds_amp: float
    memory_fp32: int | None
    memory_amp: int | None
    max_loss_difference: float


class NanRequest(_TrainingRequest):
    cause: Cause = "lr"
    fix: Fix = "none"
    steps: int = Field(100, ge=1)


class OriginOut(BaseModel):
    phase: Literal["forward", "backward", "update"]
    module: str
    op: str


class NanResponse(BaseModel):
    cause: Cause
    fix: Fix
    loss: list[Any]
    grad_norm: list[Any]
    first_nonfinite_step: int | None
    origin: OriginOut | None
