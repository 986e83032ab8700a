"""The training lab's models (/api/training/...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gradient_lab.optimizers import Context, optimizer_conflicts, scheduler_conflicts
from gradient_lab.training import landscape
from gradient_lab.training.flow import gradient_flow
from gradient_lab.training.landscape import map_landscape
from gradient_lab.training.loop import train
from gradient_lab.training.models import Activation, DatasetName, Init
from gradient_lab.training.nan import Cause, Fix, hunt_nan
from gradient_lab.training.precision import accumulate, compare_precision
from gradient_lab.web.schemas.common import ClipKind, Device, OptimizerName, SchedulerKind
from gradient_lab.web.schemas.descent import RunIn

# The training lab (/api/training/...). Sizes are bounded by gradient_lab.training.SIZES, which
# answers 413 naming the value; the names come from the domain's Literal types, one per registry.


class LessonRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    device: Device = Field("auto", description="Where to train; auto picks CUDA when present.")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seeds the data, the init and batches.")

    def options(self) -> dict[str, Any]:
        """The keywords of the lesson's function (LESSONS), beside its device."""
        return self.model_dump(exclude={"device"})


class FlowRequest(LessonRequest):
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


class TrainRequest(LessonRequest):
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
    steps: int = Field(300, ge=1)

    @model_validator(mode="after")
    def _fits(self) -> Self:
        """The run, once its optimizer and scheduler go together as torch needs.

        The rules are the descent lab's (gradient_lab.optimizers): OneCycleLR cycles a momentum,
        which adagrad has not.
        """
        lines = optimizer_conflicts(self.optimizer, {"weight_decay": self.weight_decay})
        if self.scheduler != "none":
            context = Context(self.optimizer, steps=self.steps)
            lines += [f"scheduler {self.scheduler} with optimizer {self.optimizer}: {line}"
                      for line in scheduler_conflicts(self.scheduler, {}, context)]
        if lines:
            raise ValueError("; ".join(lines))
        return self


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


class AccumulationRequest(LessonRequest):
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


class PrecisionRequest(LessonRequest):
    steps: int = Field(40, ge=1)
    width: int = Field(128, ge=1)
    batch: int = Field(256, ge=2)


class PrecisionResponse(BaseModel):
    device: str
    dtype: str
    scaler: bool
    steps: int = Field(description="Steps asked for; a run that used up its time budget "
                                   "(training.precision.RUN_SECONDS) has fewer losses.")
    loss_fp32: list[Any]
    loss_amp: list[Any]
    seconds_fp32: float
    seconds_amp: float
    memory_fp32: int | None
    memory_amp: int | None
    max_loss_difference: float


class NanRequest(LessonRequest):
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


class LandscapeRequest(LessonRequest):
    dataset: DatasetName = "moons"
    points: int = Field(500, ge=10)
    noise: float = Field(0.1, ge=0, le=1)
    depth: int = Field(2, ge=1, le=4, description="Hidden layers (Linear, activation).")
    width: int = Field(32, ge=1, le=64)
    activation: Activation = "relu"
    runs: list[RunIn] = Field(
        default_factory=lambda: [RunIn(optimizer="sgd", lr=0.5),  # type: ignore[call-arg]
                                 RunIn(optimizer="adam", lr=0.02)],  # type: ignore[call-arg]
        min_length=1, max_length=landscape.MAX_RUNS,
        description="Each trains from the same seeded init, full batch.")
    steps: int = Field(150, ge=1, le=landscape.MAX_STEPS)
    resolution: int = Field(41, ge=3, le=landscape.MAX_RESOLUTION,
                            description="Grid points a side; odd, so the centre is on it.")
    span: float = Field(1.0, gt=0, le=10, description="The random plane's reach, in units of "
                                                       "its filter-normalized directions.")
    shared: bool = Field(False, description="Also the PCA plane of every path from the init.")

    @model_validator(mode="after")
    def _odd(self) -> Self:
        if self.resolution % 2 == 0:
            raise ValueError(f"resolution is {self.resolution}; it must be odd, so the final "
                             "weights are the grid's centre")
        return self

    def options(self) -> dict[str, Any]:
        """The lesson's keywords: the runs as gradient_lab.optimizers.Run's fields."""
        return {**self.model_dump(exclude={"device", "runs"}),
                "runs": [asdict(run.to_run()) for run in self.runs]}


class PlaneOut(BaseModel):
    x: list[Any]
    y: list[Any]
    z: list[list[Any]] = Field(description="The loss, [row = y][column = x].")
    explained: list[Any] | None = Field(description="PCA planes: each axis's variance share.")


class PathOut(BaseModel):
    x: list[Any]
    y: list[Any]
    loss: list[Any] = Field(description="The real loss at each step's weights.")
    plane_loss: list[Any] = Field(description="The loss at their projection on the plane.")
    hidden: list[int] = Field(description="Steps whose real loss the plane hides.")


class LandscapeRunOut(BaseModel):
    optimizer: str
    lr: float | None
    final_loss: float
    accuracy: float
    diverged: bool
    random: PlaneOut
    pca: PlaneOut
    path: PathOut
    alpha: list[Any]
    interpolation: list[Any]


class SharedPlaneOut(BaseModel):
    plane: PlaneOut
    paths: list[PathOut]


class LandscapeResponse(BaseModel):
    weights: int
    runs: list[LandscapeRunOut]
    shared: SharedPlaneOut | None


@dataclass(frozen=True, slots=True)
class Lesson:
    """A lesson of the training page: the function of gradient_lab.training that answers it,
    called with device= and its request's options(), what it reads and what it answers."""

    run: Callable[..., object]
    request: type[LessonRequest]
    reply: type[BaseModel]
    streamed: bool = False  # one reply per server-sent event (POST /api/training/run)

    @property
    def function(self) -> str:
        """`run` as the job gradient_lab.jobs.lesson finds it in a child: "module:name"."""
        return f"{self.run.__module__}:{self.run.__name__}"


# The training page's lessons by name, in the tutorial's order (the page's tabs): the one list
# of them. Each but the streamed training loop is served by POST /api/training/<name>
# (routes/training.py); the page's form defaults come from each one's request.
LESSONS: dict[str, Lesson] = {
    "flow": Lesson(gradient_flow, FlowRequest, FlowResponse),
    "train": Lesson(train, TrainRequest, TrainChunkOut, streamed=True),
    "accumulation": Lesson(accumulate, AccumulationRequest, AccumulationResponse),
    "precision": Lesson(compare_precision, PrecisionRequest, PrecisionResponse),
    "nan": Lesson(hunt_nan, NanRequest, NanResponse),
    "landscape": Lesson(map_landscape, LandscapeRequest, LandscapeResponse),
}
