"""The training-dynamics lessons (tutorial §4.1, §5): plain functions over torch.nn that return
frozen dataclasses of plain values, each called with device= and its keywords.
Each module declares its lessons beside their functions (LESSONS, lessons.py); the web layer
builds their requests and replies from the functions' signatures (web/schemas/training.py),
routes/training.py serves them, and gradient_lab.jobs.lesson runs them in a child.

    flow.py       gradient_flow: per-layer weight-gradient norms, over the first steps too
    loop.py       train: the training loop on a 2-D data set, one chunk of steps per call
    precision.py  accumulate (gradient accumulation) and compare_precision (autocast vs float32)
    nan.py        hunt_nan: the first non-finite step, and the layer and op it came from
    landscape.py  map_landscape: the loss around each optimizer's final weights, its path on PCA
    planes.py     ... the planes it draws on (filter-normalized, PCA) and the batched loss
    models.py     the MLP, the data sets and the size limits they share
    lessons.py    Lesson: a tab of the training page, as a module declares it
"""

from __future__ import annotations

from gradient_lab.training.flow import FLOW_PRESETS, GradientFlow, gradient_flow
from gradient_lab.training.landscape import Landscape, map_landscape
from gradient_lab.training.loop import TrainChunk, TrainConfig, train
from gradient_lab.training.models import ACTIVATIONS, INITS, SIZES, DatasetName, Sizes
from gradient_lab.training.nan import CAUSES, FIXES, NanHunt, hunt_nan
from gradient_lab.training.precision import Accumulation, Precision, accumulate, compare_precision

__all__ = [
    "ACTIVATIONS", "CAUSES", "DatasetName", "FIXES", "FLOW_PRESETS", "INITS",
    "SIZES", "Accumulation", "GradientFlow", "Landscape", "NanHunt", "Precision",
    "Sizes",
    "TrainChunk", "TrainConfig", "accumulate", "compare_precision",
    "gradient_flow", "hunt_nan", "map_landscape", "train",
]
