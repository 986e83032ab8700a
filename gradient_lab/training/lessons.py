"""The training page's lessons: each is one declaration in its own module of
gradient_lab.training, beside its function: `LESSONS = (Lesson(...),)`.

The web layer (web/schemas/training.py) finds every module's LESSONS, and builds each lesson's
request from its function's keyword parameters (their types, `Annotated` bounds, `Doc` and
defaults) and its reply from the dataclass the function returns. The zygote loads every module
of this package before it forks, so a child finds the function by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lesson:
    name: str  # its tab, its route (POST /api/training/<name>), its panel and its drawing
    run: Callable[..., object]  # called with device= and its request's keywords
    tab: int  # its place among the page's tabs, smallest first
    streamed: bool = False  # one reply per chunk of steps (POST /api/training/run)

    @property
    def function(self) -> str:
        """`run` as gradient_lab.jobs.lesson finds it in a child: "module:name"."""
        return f"{self.run.__module__}:{self.run.__name__}"
