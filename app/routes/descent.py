"""The descent lab: GET /descent, the surface catalogue, grids, races and basins.

Every POST runs in a sandbox worker, built-in surfaces too: a race is a Python loop of up to
thousands of steps, and in the server it would hold the GIL while every other request waited;
in a worker it runs under the same CPU and wall-clock limits as any program, and the routes
are async because the event loop only awaits the worker's reply.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from app import schemas
from app.deps import get_pool, job_body, templates
from app.presets import PRESETS
from app.sandbox.workers import WorkerPool
from app.settings import Settings, get_settings
from app.surfaces import SURFACES

router = APIRouter()
SettingsDep = Annotated[Settings, Depends(get_settings)]
PoolDep = Annotated[WorkerPool, Depends(get_pool)]


async def _run(pool: WorkerPool, settings: Settings, job: str, **kwargs: object) -> object:
    return await pool.submit(f"app.jobs:{job}", wall_seconds=settings.wall_seconds,
                             cpu_seconds=settings.cpu_seconds,
                             queue_seconds=settings.queue_seconds, limits=settings.limits(),
                             **kwargs)


@router.get("/descent", response_class=HTMLResponse)
async def descent_page(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "descent.html", {
        "surfaces": [schemas.SurfaceOut.model_validate(s, from_attributes=True).model_dump()
                     for s in SURFACES.values()],
        "presets": PRESETS})


@router.get("/api/surfaces", response_model=list[schemas.SurfaceOut])
async def surfaces() -> object:
    return [schemas.SurfaceOut.model_validate(s, from_attributes=True) for s in SURFACES.values()]


@router.post("/api/surface", response_model=schemas.GridResponse)
async def surface(request: schemas.SurfaceRequest, settings: SettingsDep, pool: PoolDep) -> object:
    grid = await _run(pool, settings, "surface", **request.spec(), x_range=request.x_range,
                      y_range=request.y_range, resolution=request.resolution)
    return job_body(grid)


@router.post("/api/descent", response_model=schemas.DescentResponse)
async def descent(request: schemas.DescentRequest, settings: SettingsDep, pool: PoolDep) -> object:
    race = await _run(pool, settings, "descent", **request.spec(), start=request.start,
                      steps=request.steps, runs=[run.to_run() for run in request.runs],
                      noise=request.noise, seed=request.seed, sweep=request.sweep)
    return job_body(race)


@router.post("/api/basins", response_model=schemas.BasinsResponse)
async def basins(request: schemas.BasinsRequest, settings: SettingsDep, pool: PoolDep) -> object:
    result = await _run(pool, settings, "basins", **request.spec(), run=request.run.to_run(),
                        x_range=request.x_range, y_range=request.y_range,
                        resolution=request.resolution, steps=request.steps)
    return job_body(result)
