"""The training lab's models (/api/training/...)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import asdict, dataclass
from typing import Any, Literal, Self, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from typing_extensions import Doc

from gradient_lab import training
from gradient_lab.optimizers import Context, optimizer_conflicts, scheduler_conflicts
from gradient_lab.training import landscape
from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import Activation, DatasetName
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


@dataclass(frozen=True, slots=True)
class ServedLesson:
    """A lesson of gradient_lab.training as the web layer serves it: what it reads and answers."""

    lesson: Lesson
    request: type[LessonRequest]
    reply: Any  # the dataclass its function returns (a chunk of them, streamed), for OpenAPI

    @property
    def function(self) -> str:
        return self.lesson.function

    @property
    def streamed(self) -> bool:
        return self.lesson.streamed


# The requests whose rules go across fields, or that take the descent lab's runs; every other
# lesson's request is its function's keyword parameters.
RULED: dict[str, type[LessonRequest]] = {"train": TrainRequest, "landscape": LandscapeRequest}


def _request_of(lesson: Lesson) -> type[LessonRequest]:
    """The lesson's request: each keyword of its function but device and seed (LessonRequest's),
    with its type, its bounds and Doc (Annotated) and its default (none: the field is required)."""
    if lesson.name in RULED:
        return RULED[lesson.name]
    hints = get_type_hints(lesson.run, include_extras=True)
    fields: dict[str, Any] = {}
    for name, parameter in inspect.signature(lesson.run).parameters.items():
        if name in LessonRequest.model_fields:
            continue
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (hints[name], Field(default, description=_doc(hints[name])))
    title = lesson.name.title().replace("_", "") + "Request"
    return create_model(title, __base__=LessonRequest, **fields)


def _doc(hint: Any) -> str | None:
    """What Annotated[..., Doc("...")] says of a parameter."""
    docs = [m.documentation for m in getattr(hint, "__metadata__", ()) if isinstance(m, Doc)]
    return docs[0] if docs else None


def _reply_of(lesson: Lesson) -> Any:
    return TrainChunkOut if lesson.streamed else get_type_hints(lesson.run)["return"]


def _declared() -> dict[str, Lesson]:
    """Every lesson a module of gradient_lab.training declares (its LESSONS), in tab order."""
    found = [lesson
             for module in pkgutil.iter_modules(training.__path__, "gradient_lab.training.")
             for lesson in getattr(importlib.import_module(module.name), "LESSONS", ())]
    found.sort(key=lambda lesson: lesson.tab)
    declared = [(lesson.name, lesson.tab) for lesson in found]
    if any(len(set(column)) < len(found) for column in zip(*declared, strict=True)):
        raise ValueError(f"two lessons share a name or a tab: {declared}")
    return {lesson.name: lesson for lesson in found}


# The training page's lessons by name, in tab order: every module of gradient_lab.training that
# declares LESSONS (gradient_lab.training.lessons). Each but the streamed training loop is served
# by POST /api/training/<name> (routes/training.py); the page's form defaults come from each
# one's request.
LESSONS: dict[str, ServedLesson] = {
    name: ServedLesson(lesson, _request_of(lesson), _reply_of(lesson))
    for name, lesson in _declared().items()}
