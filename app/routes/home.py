"""GET / (the graph lab, the app's front door), GET /healthz, and plotly.js from its package."""

from __future__ import annotations

from dataclasses import asdict
from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse

from app.deps import templates
from app.lessons import LESSONS

router = APIRouter()

# plotly.js as the pinned `plotly` wheel ships it (v4.1.1 in plotly 7.1.0): served from our own
# origin because classrooms and tests are offline.
PLOTLY_JS = files("plotly") / "package_data" / "plotly.min.js"


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
async def graph_lab(request: Request) -> HTMLResponse:
    programs = {lesson.id: asdict(lesson) for lesson in LESSONS.values()}
    return templates.TemplateResponse(
        request, "graph.html", {"lessons": list(LESSONS.values()), "programs": programs}
    )


@router.get("/graph", include_in_schema=False)
async def graph_alias(request: Request) -> RedirectResponse:
    query = request.url.query
    return RedirectResponse("/?" + query if query else "/", status_code=308)


@router.get("/vendor/plotly.min.js", name="plotly_js", include_in_schema=False)
async def plotly_js() -> FileResponse:
    return FileResponse(
        str(PLOTLY_JS),
        media_type="text/javascript",
        headers={"Cache-Control": "public, max-age=604800"},
    )
