"""GET /healthz, /readyz and /metrics: what the server is, and whether it can run programs.

`health()` is also what `gradient-lab check` prints, from a runner it starts for the purpose.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from gradient_lab import __version__
from gradient_lab.runner.pool.pool import Pool
from gradient_lab.web import metrics

router = APIRouter()


def torch_build() -> dict[str, object]:
    """Which torch this is: its version, the CUDA it was built with, the GPUs it can see."""
    import torch

    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \
        if torch.cuda.is_available() else []
    return {"version": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus}


def health(pool: Pool | None, state: Any = None) -> dict[str, object]:
    """The server's state: its version, device and torch; its runner's walls, children and
    trouble; its kept replies and lessons computed ahead (from the app's `state`)."""
    answer: dict[str, object] = {"status": "ok", "version": __version__, "torch": torch_build()}
    if pool is not None:
        answer["device"] = pool.config.device
        answer["runner"] = pool.health()
        answer["walls_missing"] = pool.missing_walls()
        answer["trouble"] = pool.trouble()
    kept, ahead = getattr(state, "kept", None), getattr(state, "ahead", None)
    if kept is not None:
        answer["kept"] = dict(kept.counts)  # replies run, shared by identical requests, kept
    if ahead is not None:  # the built-in lessons computed at start-up (web/ahead.py)
        answer["ahead"] = {"done": ahead.done, "total": ahead.total}
    return answer


def not_ready(pool: Pool | None) -> str | None:
    """Why this server cannot run learners' programs now, if it cannot."""
    if pool is None:
        return "the runner has not started"
    missing = pool.missing_walls()
    if missing and not pool.config.weak_walls:
        return (f"the kernel lacks {', '.join(missing)}, and APP_RUNNER_WEAK_WALLS does not "
                "accept running programs without it")
    return pool.trouble()


@router.get("/healthz")
async def healthz(request: Request) -> dict[str, object]:
    """The server's version, device and torch build; the runner's walls (and any the kernel
    lacks), its ready children, and any trouble keeping them alive. 200 while the process runs."""
    return health(getattr(request.app.state, "pool", None), request.app.state)


@router.get("/readyz", responses={
    200: {"description": "Ready: /healthz's answer."},
    503: {"description": "Not ready: /healthz's answer, its `status` \"not ready\" and `why`."}})
async def readyz(request: Request) -> JSONResponse:
    """/healthz's answer, as a 503 while this server cannot run learners' programs: no runner
    yet, a wall missing that APP_RUNNER_WEAK_WALLS does not accept, or children that end
    before a program reaches them. For a load balancer's or Kubernetes' readiness check;
    /healthz stays 200, so a liveness check does not restart, again and again, a server whose
    kernel will never have the wall."""
    pool = getattr(request.app.state, "pool", None)
    answer = health(pool, request.app.state)
    why = not_ready(pool)
    if why is not None:
        answer.update(status="not ready", why=why)
    return JSONResponse(answer, status_code=200 if why is None else 503)


# Prometheus' text format, not JSON: out of the API schema.
@router.get("/metrics", include_in_schema=False)
async def metrics_text(request: Request) -> Response:
    body, content_type = metrics.exposition(request.app, request.headers.get("accept", ""))
    return Response(body, media_type=content_type)
