"""What the labs' models share: the device names, the registries' names, and to_json."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from app.optimizers import CLIPS, OPTIMIZERS, SCHEDULERS
from app.surfaces import SURFACES

Device = Literal["auto", "cpu", "cuda"]

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

Model = BaseModel


def to_json(model: type[BaseModel], result: object) -> str:
    """`result` (a dataclass) as `model`'s JSON, reading its lists in place."""
    return model.model_validate(result, from_attributes=True).model_dump_json()
