"""GET /training (the page) and POST /api/training/...: each lesson runs in a walled child.

POST /api/training/run streams server-sent events, one per chunk of steps, as one child trains
the model: the response ends when the run does, when the client leaves (the child is killed),
or at stream_seconds.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import asdict
from typing import get_args

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse

from gradient_lab import i18n, jobs, training
from gradient_lab.errors import AppError, envelope
from gradient_lab.kept import Reading
from gradient_lab.optimizers import CLIPS, OPTIMIZERS, SCHEDULERS
from gradient_lab.web import schemas
from gradient_lab.web.deps import ClientJobsDep
from gradient_lab.web.pages import templates
from gradient_lab.web.schemas.common import Device

router = APIRouter()
TABS = tuple(schemas.LESSONS)  # the page's tabs, in the tutorial's order


@router.get("/training", response_class=HTMLResponse)
async def training_page(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "training.html", {"choices": _choices()})


async def run_lesson(name: str, request: schemas.LessonRequest,
                     client_jobs: ClientJobsDep) -> Response:
    """The lesson `name`, run in a child, its reply passed through."""
    function = schemas.LESSONS[name].function
    return await client_jobs.reply(jobs.lesson, strangers_code=False, function=function,
                                   device=client_jobs.device(request.device),
                                   options=request.options())


def _lesson_route(name: str, lesson_of: schemas.ServedLesson) -> None:
    """POST /api/training/<name>, for a lesson of schemas.LESSONS."""
    async def lesson(request: schemas.LessonRequest, client_jobs: ClientJobsDep) -> Response:
        return await run_lesson(name, request, client_jobs)

    lesson.__annotations__["request"] = lesson_of.request  # the body FastAPI reads, validates
    router.add_api_route(f"/api/training/{name}", lesson, methods=["POST"], name=name,
                         response_model=lesson_of.reply)


for _name, _lesson in schemas.LESSONS.items():
    if not _lesson.streamed:  # the training loop streams: POST /api/training/run, below
        _lesson_route(_name, _lesson)


@router.post("/api/training/run", response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "One `data:` event per chunk (TrainChunkOut); "
                                             "an `error` event carries the error envelope."}})
async def run(request: schemas.TrainRequest, http: Request,
              client_jobs: ClientJobsDep) -> StreamingResponse:
    reading = reading_of(request, client_jobs)
    chunks = aiter(reading)
    # The first chunk comes before the response starts, so a refused run gets its status code.
    first = await anext(chunks)
    lang = i18n.pick_language(http.headers.get("accept-language"))
    return StreamingResponse(_events(first, chunks, lang), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no",
                                      "X-Kept": reading.outcome})


def reading_of(request: schemas.TrainRequest, client_jobs: ClientJobsDep) -> Reading:
    """The training run's chunks: its own, or those of the same run already under way."""
    config = training.TrainConfig(**request.model_dump(exclude={"device"}))
    return client_jobs.stream(jobs.training_run, config=config,
                              device=client_jobs.device(request.device),
                              limits=client_jobs.settings.limits())


async def _events(first: bytes, chunks: AsyncGenerator[bytes, None],
                  lang: str) -> AsyncIterator[bytes]:
    yield b"data: " + first + b"\n\n"
    try:
        async with aclosing(chunks):  # a client that leaves ends the run: its child is killed
            async for chunk in chunks:
                yield b"data: " + chunk + b"\n\n"
    except AppError as error:  # the status line has gone: the envelope goes in an event
        yield f"event: error\ndata: {json.dumps(envelope(error, lang))}\n\n".encode()


def _choices() -> dict[str, object]:
    """The menus of the page, from the registries, and the presets that tell each story."""
    return {
        "lessons": list(TABS), "devices": list(get_args(Device)),
        "datasets": list(get_args(training.DatasetName)),
        "activations": list(training.ACTIVATIONS), "inits": list(training.INITS),
        "optimizers": list(OPTIMIZERS), "schedulers": ["none", *SCHEDULERS],
        # Each optimizer's name in each language, as its one entry in OPTIMIZERS gives it.
        "optimizer_labels": {name: kind.labels for name, kind in OPTIMIZERS.items()},
        "clips": ["none", *CLIPS],
        "causes": list(training.CAUSES), "fixes": list(training.FIXES),
        "flow_presets": training.FLOW_PRESETS, "sizes": asdict(training.SIZES),
        # Each lesson's request as its schema fills it in: the page's form starts from these,
        # so the page asks what the schema (and the lessons computed ahead) mean by default.
        "defaults": {name: lesson.request.model_validate({}).model_dump(exclude={"seed"})
                     for name, lesson in schemas.LESSONS.items()},
    }
