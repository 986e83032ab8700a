"""The built-in lessons, computed ahead: every request the pages and /lessons send for the
tutorial's examples, the descent lab's stories and the training lab's lessons, run once at
start-up on otherwise idle CPU, so the first student to open one gets a kept reply.

Each request is built as the page builds it (static/descent/setup.js, static/training.js)
and goes through the route's own function, so it is kept under the very key the page's
request will ask for; tests/browser/test_ahead.py checks that every one of them is a hit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gradient_lab.descent.presets import PRESETS
from gradient_lab.descent.surfaces import SURFACES
from gradient_lab.errors import AppError
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.training import FIXES, FLOW_PRESETS
from gradient_lab.web import schemas
from gradient_lab.web.deps import ClientJobs
from gradient_lab.web.routes import descent, graph, training

_log = logging.getLogger(__name__)
_IDLE_POLL_SECONDS = 0.05
Ask = Callable[[ClientJobs], Awaitable[object]]


@dataclass(slots=True)
class Ahead:
    """How far the computing ahead has come (/readyz reports it)."""

    total: int = 0
    done: int = 0

    @property
    def finished(self) -> bool:
        return self.done >= self.total


def requests() -> Iterator[Ask]:
    """Each built-in request, as a call of its route's function."""
    for example in EXAMPLES.values():
        yield _ask(graph.run_graph, schemas.GraphRequest.model_validate({"code": example.program}))
    for preset in PRESETS:
        yield from _story(preset)
    for name, lesson in schemas.LESSONS.items():  # each lesson as its tab opens
        if not lesson.streamed:  # the training loop: its whole stream, last
            yield _lesson(name, {})
    for preset in FLOW_PRESETS.values():
        # The page's preset buttons clear these three before they set the preset's own.
        yield _lesson("flow", {"batchnorm": False, "residual": False, "init": "default", **preset})
    for fix in FIXES:
        if fix != "none":  # the lesson opens with no fix, above
            yield _lesson("nan", {"fix": fix})
    yield _whole_stream(schemas.TrainRequest.model_validate({}))


async def compute_ahead(client_jobs: ClientJobs, progress: Ahead) -> None:
    """Run every built-in request, one at a time, each when the pool has nothing to do."""
    asks = list(requests())
    progress.total = len(asks)
    for ask in asks:
        await _idle(client_jobs)
        try:
            await ask(client_jobs)
        except AppError as error:  # a story whose point is an error, or a busy moment
            _log.debug("computing ahead: %s", error.message)
        progress.done += 1
    _log.info("the %d built-in lessons are computed and kept", progress.total)


def _story(preset: dict[str, Any]) -> Iterator[Ask]:
    """A descent story as static/descent/setup.js sends it: its grid, then its race."""
    surface = SURFACES[preset["surface"]]
    on = {"surface": preset["surface"], "params": preset.get("params", {})}
    yield _ask(descent.surface, schemas.SurfaceRequest.model_validate(
        {**on, "x_range": surface.x_range, "y_range": surface.y_range, "resolution": 100}))
    yield _ask(descent.descent, schemas.DescentRequest.model_validate(
        {**on, "start": preset["start"], "steps": preset["steps"], "runs": preset["runs"],
         "noise": preset.get("noise", 0), "sweep": False}))


def _ask(route: Callable[..., Awaitable[object]], request: object) -> Ask:
    return lambda client_jobs: route(request, client_jobs)


def _lesson(name: str, fields: dict[str, object]) -> Ask:
    request = schemas.LESSONS[name].request.model_validate(fields)
    return lambda client_jobs: training.run_lesson(name, request, client_jobs)


def _whole_stream(request: schemas.TrainRequest) -> Ask:
    async def ask(client_jobs: ClientJobs) -> None:
        async for _ in training.reading_of(request, client_jobs):
            pass
    return ask


async def _idle(client_jobs: ClientJobs) -> None:
    """Until no program runs or waits: the lessons never take a learner's place."""
    while True:
        counts = client_jobs.pool.health()
        if not counts["running"] and not counts["waiting"] and not counts["aside"]:
            return
        await asyncio.sleep(_IDLE_POLL_SECONDS)
