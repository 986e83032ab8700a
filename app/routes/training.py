"""GET /training (the page) and POST /api/training/...: each lesson runs in a sandbox worker.

POST /api/training/run streams server-sent events, one per chunk of steps. Each chunk is its own
worker job; the state between chunks (state_dicts) lives only in this response's generator and
goes to the next job, so the server keeps nothing once the response ends or the client leaves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, StreamingResponse

from app import i18n, schemas, training
from app.deps import get_pool, job_body, job_device, templates
from app.errors import AppError
from app.optimizers import CLIPS, OPTIMIZERS, SCHEDULERS
from app.sandbox.workers import WorkerPool
from app.settings import Settings, get_settings

router = APIRouter()

# Chunks still running for clients that left: held only so the event loop does not drop them.
_FINISHING: set[asyncio.Future[Any]] = set()

SettingsDep = Annotated[Settings, Depends(get_settings)]
PoolDep = Annotated[WorkerPool, Depends(get_pool)]


@router.get("/training", response_class=HTMLResponse)
async def training_page(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "training.html", {"choices": _choices()})


# async: the lessons run in sandbox workers, and the event loop awaits their replies (as
# /api/graph does), so a waiting request holds no thread.
@router.post("/api/training/flow", response_model=schemas.FlowResponse)
async def flow(request: schemas.FlowRequest, settings: SettingsDep, pool: PoolDep) -> object:
    return job_body(await _job(pool, settings, "flow", request, job="training_json"))


@router.post("/api/training/accumulation", response_model=schemas.AccumulationResponse)
async def accumulation(request: schemas.AccumulationRequest, settings: SettingsDep,
                       pool: PoolDep) -> object:
    return job_body(await _job(pool, settings, "accumulation", request, job="training_json"))


@router.post("/api/training/precision", response_model=schemas.PrecisionResponse)
async def precision(request: schemas.PrecisionRequest, settings: SettingsDep,
                    pool: PoolDep) -> object:
    return job_body(await _job(pool, settings, "precision", request, job="training_json"))


@router.post("/api/training/nan", response_model=schemas.NanResponse)
async def nan(request: schemas.NanRequest, settings: SettingsDep, pool: PoolDep) -> object:
    return job_body(await _job(pool, settings, "nan", request, job="training_json"))


@router.post("/api/training/run", response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "One `data:` event per chunk (TrainChunkOut); "
                                             "an `error` event carries the error envelope."}})
async def run(request: schemas.TrainRequest, http: Request, settings: SettingsDep,
              pool: PoolDep) -> StreamingResponse:
    config = training.TrainConfig(**request.model_dump(exclude={"device"}))
    # The first chunk runs before the response starts, so a refused run gets its status code.
    first = await _job(pool, settings, "train", request, config=config, state=None)
    lang = i18n.pick_language(http.headers.get("accept-language"))
    return StreamingResponse(_events(pool, settings, request, config, first, lang),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _job(pool: WorkerPool, settings: Settings, lesson: str,
               request: schemas._TrainingRequest, job: str = "training",
               **options: object) -> Any:
    """The lesson's result from a sandbox worker (app.jobs.training, or training_json for its
    reply's JSON); `options` default to the request's fields."""
    device = job_device(settings, request.device)
    options = options or request.model_dump(exclude={"device"})
    return await pool.submit(f"app.jobs:{job}", wall_seconds=settings.wall_seconds,
                             cpu_seconds=settings.cpu_seconds,
                             queue_seconds=settings.queue_seconds,
                             lesson=lesson, device=device, **options)


async def _events(pool: WorkerPool, settings: Settings, request: schemas.TrainRequest,
                  config: training.TrainConfig,
                  first: tuple[training.TrainChunk, training.TrainState],
                  lang: str) -> AsyncIterator[str]:
    chunk, state = first
    while True:
        # from_attributes reads the dataclass as it is; asdict() would deep-copy every list.
        out = schemas.TrainChunkOut.model_validate(chunk, from_attributes=True)
        yield f"data: {out.model_dump_json()}\n\n"
        if chunk.diverged or state.step >= config.steps:
            return
        # Shielded: when the client leaves (the stop button), Starlette cancels this generator,
        # and a cancelled job would cost its worker (killed and replaced). The chunk is short;
        # let it finish and hand its worker back.
        job = asyncio.ensure_future(_job(pool, settings, "train", request, config=config,
                                         state=state))
        _FINISHING.add(job)
        job.add_done_callback(_FINISHING.discard)
        try:
            chunk, state = await asyncio.shield(job)
        except AppError as error:  # the status line has gone: the envelope goes in an event
            envelope = {**error.to_plain(), "hint": i18n.text(error.hint_key, lang)
                        if error.hint_key else None}
            yield f"event: error\ndata: {json.dumps({'error': envelope})}\n\n"
            return


def _choices() -> dict[str, object]:
    """The menus of the page, from the registries, and the presets that tell each story."""
    return {
        "datasets": list(get_args(training.DatasetName)),
        "activations": list(training.ACTIVATIONS), "inits": list(training.INITS),
        "optimizers": list(OPTIMIZERS), "schedulers": ["none", *SCHEDULERS],
        "clips": ["none", *CLIPS],
        "causes": list(training.CAUSES), "fixes": list(training.FIXES),
        "flow_presets": training.FLOW_PRESETS, "sizes": asdict(training.SIZES),
    }
