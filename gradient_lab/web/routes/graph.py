"""POST /api/graph: run a program in a walled child and return the graph it built."""

from __future__ import annotations

from fastapi import APIRouter, Response

from gradient_lab import jobs
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.web import schemas
from gradient_lab.web.deps import ClientJobsDep

router = APIRouter()
_OWN_PROGRAMS = frozenset(example.program for example in EXAMPLES.values())


@router.post("/api/graph", response_model=schemas.GraphResponse)
async def run_graph(request: schemas.GraphRequest, client_jobs: ClientJobsDep) -> Response:
    return await client_jobs.reply(jobs.graph, strangers_code=request.code not in _OWN_PROGRAMS,
                                   code=request.code, device=client_jobs.device(request.device),
                                   limits=client_jobs.settings.limits())
