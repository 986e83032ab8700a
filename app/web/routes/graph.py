"""POST /api/graph: run a program in a walled child and return the graph it built."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app import jobs
from app.graph.examples import EXAMPLES
from app.web import schemas
from app.web.deps import RunnerDep

router = APIRouter()
_OWN_PROGRAMS = frozenset(example.program for example in EXAMPLES.values())


@router.post("/api/graph", response_model=schemas.GraphResponse)
async def run_graph(request: schemas.GraphRequest, runner: RunnerDep) -> Response:
    return await runner.reply(jobs.graph, strangers_code=request.code not in _OWN_PROGRAMS,
                              code=request.code, device=runner.device(request.device),
                              limits=runner.settings.limits())
