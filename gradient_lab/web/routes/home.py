"""GET / (the graph lab, the app's front door), and plotly.js from its package."""

from __future__ import annotations

import gzip
import threading
from dataclasses import asdict
from functools import cache
from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.web.pages import templates

router = APIRouter()

# plotly.js as the pinned `plotly` wheel ships it (v4.1.1 in plotly 7.1.0): served from our own
# origin because classrooms and tests are offline.
PLOTLY_JS = files("plotly") / "package_data" / "plotly.min.js"


@router.get("/", response_class=HTMLResponse)
async def graph_lab(request: Request) -> HTMLResponse:
    programs = {example.id: asdict(example) for example in EXAMPLES.values()}
    return templates.TemplateResponse(
        request, "graph.html", {"examples": list(EXAMPLES.values()), "programs": programs}
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
