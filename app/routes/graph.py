"""POST /api/graph: run a program in the sandbox and return what it built."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app import schemas
from app.deps import get_pool, job_body, job_device
from app.sandbox.workers import WorkerPool
from app.settings import Settings, get_settings

router = APIRouter()


# async: the program runs in a sandbox worker, and the event loop awaits its reply; a
# thread per waiting request would run out under load and cost two thread hops each.
@router.post("/api/graph", response_model=schemas.GraphResponse)
async def run_graph(
    request: schemas.GraphRequest,
    settings: Annotated[Settings, Depends(get_settings)],
    pool: Annotated[WorkerPool, Depends(get_pool)],
) -> object:
    device = job_device(settings, request.device)
    body = await pool.submit("app.jobs:graph_json", wall_seconds=settings.wall_seconds,
                             cpu_seconds=settings.cpu_seconds,
                             queue_seconds=settings.queue_seconds,
                             code=request.code, device=device, limits=settings.limits())
    return job_body(body)
