"""GET / and GET /healthz."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.deps import templates

router = APIRouter()


# async: these touch no torch, and a health check must answer even while every
# threadpool thread waits on a sandbox worker.
@router.get("/healthz")
async def healthz(request: Request) -> dict[str, object]:
    health: dict[str, object] = {"status": "ok"}
    pool = getattr(request.app.state, "pool", None)
    if pool is not None:
        health["sandbox_workers"] = pool.size
    return health


@router.get("/", response_class=HTMLResponse)
async def index(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "index.html")
