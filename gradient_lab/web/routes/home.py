"""GET / (the graph lab, the app's front door), GET /healthz and /readyz, and plotly.js from its
package."""

from __future__ import annotations

import gzip
import threading
from dataclasses import asdict
from functools import cache
from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.web.pages import templates

router = APIRouter()

# plotly.js as the pinned `plotly` wheel ships it (v4.1.1 in plotly 7.1.0): served from our own
# origin because classrooms and tests are offline.
PLOTLY_JS = files("plotly") / "package_data" / "plotly.min.js"


@router.get("/healthz")
async def healthz(request: Request) -> dict[str, object]:
    """The runner's state: its walls (and any the kernel lacks), its ready children."""
    health: dict[str, object] = {"status": "ok"}
    pool = getattr(request.app.state, "pool", None)
    if pool is not None:
        health["runner"] = pool.health()
        health["walls_missing"] = pool.missing_walls()
    state = request.app.state
    kept, ahead = getattr(state, "kept", None), getattr(state, "ahead", None)
    if kept is not None:
        health["kept"] = dict(kept.counts)  # replies run, shared by identical requests, kept
    if ahead is not None:  # the built-in lessons computed at start-up (web/ahead.py)
        health["ahead"] = {"done": ahead.done, "total": ahead.total}
    return health


# Out of the API schema: a probe's 503 is its point, which the schema fuzzing would flag.
@router.get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> JSONResponse:
    """/healthz's answer, as a 503 while this server cannot run learners' programs: no runner
    yet, or a wall missing that APP_RUNNER_WEAK_WALLS does not accept. For a load balancer's or
    Kubernetes' readiness check; /healthz stays 200, so a liveness check does not restart, again
    and again, a server whose kernel will never have the wall."""
    health = await healthz(request)
    pool = getattr(request.app.state, "pool", None)
    ready = pool is not None and (not pool.missing_walls() or pool.config.weak_walls)
    if not ready:
        health["status"] = "not ready"
    return JSONResponse(health, status_code=200 if ready else 503)


@router.get("/", response_class=HTMLResponse)
async def graph_lab(request: Request) -> HTMLResponse:
    programs = {lesson.id: asdict(lesson) for lesson in EXAMPLES.values()}
    return templates.TemplateResponse(
        request, "graph.html", {"lessons": list(EXAMPLES.values()), "programs": programs}
    )


@router.get("/graph", include_in_schema=False)
async def graph_alias(request: Request) -> RedirectResponse:
    query = request.url.query
    return RedirectResponse("/?" + query if query else "/", status_code=308)


@router.get("/vendor/plotly.min.js", name="plotly_js", include_in_schema=False)
async def plotly_js(request: Request) -> Response:
    headers = {"Cache-Control": "public, max-age=604800", "Vary": "Accept-Encoding"}
    if "gzip" not in request.headers.get("accept-encoding", ""):
        return FileResponse(str(PLOTLY_JS), media_type="text/javascript", headers=headers)
    body = await run_in_threadpool(_plotly_gzip)
    return Response(body, media_type="text/javascript",
                    headers={**headers, "Content-Encoding": "gzip"})


_PLOTLY_LOCK = threading.Lock()


def _plotly_gzip() -> bytes:
    """plotly.js gzipped once per process, not per request (GZipMiddleware leaves it alone).

    .. note:: 4.7 MB at gzip level 9 costs about 0.7 s of CPU: per request, a class of 50
       opening the lab at once kept both cores busy for half a minute.
    """
    with _PLOTLY_LOCK:  # the first burst of requests waits for one compression, not fifty
        return _compress_plotly()


@cache
def _compress_plotly() -> bytes:
    return gzip.compress(PLOTLY_JS.read_bytes(), compresslevel=9, mtime=0)
