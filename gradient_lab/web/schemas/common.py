"""What the labs' models share: the device names and the registries' names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from gradient_lab.descent.surfaces import SURFACES
from gradient_lab.optimizers import CLIPS, OPTIMIZERS, SCHEDULERS

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
