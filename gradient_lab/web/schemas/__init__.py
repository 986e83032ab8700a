"""Request and response models of /api/*: the contract, one module per lab.

Routes name them as schemas.X, so every model is imported here from its lab's module;
common.py holds what the labs share.
"""

from __future__ import annotations

from gradient_lab.web.schemas.common import (
    ClipKind,
    Device,
    OptimizerName,
    SchedulerKind,
    SurfaceName,
)
from gradient_lab.web.schemas.descent import (
    BasinsRequest,
    BasinsResponse,
    ClipIn,
    Coordinate,
    DescentRequest,
    DescentResponse,
    GridResponse,
    Number,
    OptimizerOut,
    Range,
    RunIn,
    SchedulerIn,
    SurfaceExpr,
    SurfaceOut,
    SurfaceRequest,
    SweepOut,
    TrajectoryOut,
)
from gradient_lab.web.schemas.graph import (
    BackwardOut,
    EdgeOut,
    GradcheckOut,
    GradInOut,
    GraphRequest,
    GraphResponse,
    NodeOut,
    NonfiniteOut,
    SavedOut,
    StepOut,
    VariableOut,
)
from gradient_lab.web.schemas.training import (
    LESSONS,
    LandscapeRequest,
    LessonRequest,
    ServedLesson,
    TrainChunkOut,
    TrainDataOut,
    TrainRequest,
)

__all__ = [
    # common
    "ClipKind", "Device", "OptimizerName", "SchedulerKind", "SurfaceName",
    # descent
    "BasinsRequest", "BasinsResponse", "ClipIn", "Coordinate", "DescentRequest", "DescentResponse",
    "GridResponse", "Number", "Range", "RunIn", "SchedulerIn", "SurfaceExpr", "SurfaceOut",
    "OptimizerOut", "SurfaceRequest", "SweepOut", "TrajectoryOut",
    # graph
    "BackwardOut", "EdgeOut", "GradInOut", "GradcheckOut", "GraphRequest", "GraphResponse",
    "NodeOut", "NonfiniteOut", "SavedOut", "StepOut", "VariableOut",
    # training
    "LESSONS", "LandscapeRequest", "LessonRequest", "ServedLesson", "TrainChunkOut",
    "TrainDataOut", "TrainRequest",
]
