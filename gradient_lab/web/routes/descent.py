"""The descent lab: GET /descent, the surface catalogue, grids, races and basins.

Every POST runs in a walled child, built-in surfaces too: a race is a Python loop of up to
thousands of steps, which in the server would hold the event loop while every other request
waited; a learner's typed surface is their own code.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from gradient_lab import jobs
from gradient_lab.descent.presets import PRESETS
from gradient_lab.descent.surfaces import SURFACES
from gradient_lab.optimizers import CLIPS, OPTIMIZER_OPTIONS, OPTIMIZERS, SCHEDULERS
from gradient_lab.web import schemas
from gradient_lab.web.deps import ClientJobsDep
from gradient_lab.web.pages import templates

router = APIRouter()


@router.get("/descent", response_class=HTMLResponse)
async def descent_page(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "descent.html", {
        "surfaces": [schemas.SurfaceOut.model_validate(s, from_attributes=True).model_dump()
                     for s in SURFACES.values()],
        "presets": PRESETS, "options": _options(), "optimizers": _optimizers()})


def _optimizers() -> dict[str, object]:
    """Each optimizer's labels, colour, marker and dash, from its one entry in OPTIMIZERS."""
    return {name: schemas.OptimizerOut(name=name, options=list(kind.options), labels=kind.labels,
                                       defaults=kind.defaults(),
                                       color=kind.color, symbol=kind.symbol,
                                       dash=kind.dash).model_dump()
            for name, kind in OPTIMIZERS.items()}


def _options() -> dict[str, object]:
    """The run editor's menus, from the registries: the page writes none of them itself."""
    return {"optimizers": list(OPTIMIZERS), "schedulers": list(SCHEDULERS), "clips": list(CLIPS),
            "optimizer_options": {name: list(options)
                                  for name, options in OPTIMIZER_OPTIONS.items()}}


@router.get("/api/surfaces", response_model=list[schemas.SurfaceOut])
async def surfaces() -> object:
    return [schemas.SurfaceOut.model_validate(s, from_attributes=True) for s in SURFACES.values()]


@router.post("/api/surface", response_model=schemas.GridResponse)
async def surface(request: schemas.SurfaceRequest, client_jobs: ClientJobsDep) -> Response:
    spec = request.spec()
    return await client_jobs.reply(jobs.surface, strangers_code=spec["expr"] is not None, **spec,
                                   x_range=request.x_range, y_range=request.y_range,
                                   resolution=request.resolution,
                                   limits=client_jobs.settings.limits())


@router.post("/api/descent", response_model=schemas.DescentResponse)
async def descent(request: schemas.DescentRequest, client_jobs: ClientJobsDep) -> Response:
    spec = request.spec()
    return await client_jobs.reply(jobs.descent, strangers_code=spec["expr"] is not None, **spec,
                                   start=request.start, steps=request.steps,
                                   runs=[run.to_run() for run in request.runs],
                                   noise=request.noise, seed=request.seed, sweep=request.sweep,
                                   limits=client_jobs.settings.limits())


@router.post("/api/basins", response_model=schemas.BasinsResponse)
async def basins(request: schemas.BasinsRequest, client_jobs: ClientJobsDep) -> Response:
    spec = request.spec()
    return await client_jobs.reply(jobs.basins, strangers_code=spec["expr"] is not None, **spec,
                                   run=request.run.to_run(), x_range=request.x_range,
                                   y_range=request.y_range, resolution=request.resolution,
                                   steps=request.steps, limits=client_jobs.settings.limits())
