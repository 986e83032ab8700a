"""POST /api/graph: run a program in the sandbox and return what it built."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app import schemas
from app.deps import job_body, job_device, pool_of, settings_of

router = APIRouter()

# The lab's busiest endpoint reads and checks its body with pydantic in one step (its own JSON
# parser), not FastAPI's way (the stdlib's json, then the model, each a dependency to solve),
# and takes the pool straight from the app: the server's time from request to job fell from
# 127-132 us to 102 us. The schema still documents the body, and a bad one is the same 422.
# The settings too come without a dependency: solving even that one cost about 0.15 of the
# HTTP ratio to /healthz (interleaved A/B, 12 runs each: 4.26 -> 4.10).
_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": schemas.GraphRequest.model_json_schema()}}}}


# Requests reach this function through a plain Starlette route that main.py registers ahead
# of this router, which only documents it: FastAPI's handling around an endpoint (it solves
# the dependencies even of one that takes only the Request) cost 40 us of the server's CPU per
# request (in-process ASGI probe, 3,000 requests, 3 runs each: 233-244 -> 190-201 us). The
# same function is both routes' endpoint, so either serves the same request the same way.
#
# async: the program runs in a sandbox worker, and the event loop awaits its reply; a
# thread per waiting request would run out under load and cost two thread hops each.
@router.post("/api/graph", response_model=schemas.GraphResponse, openapi_extra=_BODY)
async def run_graph(
    http: Request,
) -> Response:
    settings = await settings_of(http)
    try:
        request = schemas.GraphRequest.model_validate_json(await http.body())
    except ValidationError as error:
        raise RequestValidationError(
            [{**problem, "loc": ("body", *problem["loc"])} for problem in error.errors()]
        ) from None
    device = job_device(settings, request.device)
    pool = pool_of(http)
    body = await pool.submit("app.jobs:graph_json", wall_seconds=settings.wall_seconds,
                             cpu_seconds=settings.cpu_seconds,
                             queue_seconds=settings.queue_seconds,
                             code=request.code, device=device, limits=settings.limits())
    return job_body(body)
