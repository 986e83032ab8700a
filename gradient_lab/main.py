"""create_app(): routers, /static, the runner's pool, and the one error envelope for failures."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from gradient_lab import __version__, i18n, logs
from gradient_lab.assets import assets
from gradient_lab.errors import AppError, HttpError, RequestInvalid, envelope
from gradient_lab.kept import open_keeper
from gradient_lab.lan import urls
from gradient_lab.rooms.service import open_rooms
from gradient_lab.runner.pool.pool import Pool, PoolConfig
from gradient_lab.settings import Settings, SettingsError, load_settings
from gradient_lab.web import gzipped, metrics
from gradient_lab.web.ahead import Ahead, compute_ahead
from gradient_lab.web.deps import ClientJobs
from gradient_lab.web.edge import allowed_hosts
from gradient_lab.web.gzipped import Gzipped
from gradient_lab.web.middleware import GuardApi, RememberPageChoices
from gradient_lab.web.routes import descent, docs, graph, health, home, lessons, rooms, training

logger = logging.getLogger(__name__)

_HTTP_TYPES = {404: "not_found", 405: "method_not_allowed"}
# The gzip of recent replies, bodies included: a class's last few moves, however large.
GZIPPED_BYTES = 64 << 20


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Here, not at import: the runner's zygote exists only while the server runs.
    settings = load_settings()
    pool = Pool(pool_config(settings))
    pool.start()
    app.state.pool = pool
    app.state.programs = Counter()  # learners' runs in flight, by client (web/deps.py)
    app.state.gzipped = Gzipped(GZIPPED_BYTES)  # replies' gzip, made once (web/gzipped.py)
    _say_how_it_started(settings.host, settings.port, pool)
    try:
        async with open_rooms(settings.room_store) as app.state.rooms, \
                open_keeper(settings.kept_store_setting(), settings.kept_bytes) as app.state.kept:
            ahead = None
            if settings.compute_ahead:
                app.state.ahead = Ahead()
                ahead = asyncio.create_task(compute_ahead(
                    ClientJobs(pool, app.state.kept, settings), app.state.ahead))
            _set_aside_what_start_up_made()
            try:
                yield
            finally:
                if ahead is not None:
                    ahead.cancel()
    finally:
        pool.close()


def _set_aside_what_start_up_made() -> None:
    """Keep the garbage collector from walking what start-up made (imports, routes, schemas):
    it lives as long as the server. Else the first full collection comes during a class's first
    burst of requests and holds all of them (120 ms here; bench/class_follows.py)."""
    gc.collect()
    gc.freeze()


def pool_config(settings: Settings, ready: int | None = None) -> PoolConfig:
    """The runner's pool as the settings make it (`ready` children, if given)."""
    return PoolConfig(
        device=_device(settings.device),
        ready=settings.runner_ready if ready is None else ready,
        jobs=settings.runner_jobs, long_jobs=settings.runner_long_jobs,
        memory_mb=settings.memory_mb, memory_budget_mb=settings.runner_memory_mb,
        max_cpu_seconds=max(settings.cpu_seconds, settings.stream_seconds),
        reply_bytes=settings.reply_bytes, user=settings.runner_user,
        weak_walls=settings.runner_weak_walls)


def _say_how_it_started(host: str, port: int, pool: Pool) -> None:
    """The first lines a teacher reads: what runs, where programs run, and the address to open."""
    torch = health.torch_build()
    missing = pool.missing_walls()
    walls = pool.walls
    up = [f"Landlock ABI {walls['landlock']}" if walls.get("landlock") else "",
          "seccomp" if walls.get("seccomp") else "", f"user {walls.get('user')}",
          "rlimits" if walls.get("rlimits") else ""]
    logger.info("Gradient Lab %s, torch %s, learners' programs on %s", __version__,
                torch["version"], pool.config.device)
    logger.log(logging.WARNING if missing else logging.INFO, "Walls: %s%s",
               ", ".join(wall for wall in up if wall),
               f"; MISSING: {', '.join(missing)}" if missing else "")
    here, *lan = urls(host, port)
    logger.info("Open %s on this machine%s", here,
                f"; a class on the same network opens {' or '.join(lan)}" if lan else "")
    if not lan and host in ("0.0.0.0", "::"):
        logger.warning("Listening on every address, but this machine has none that another "
                       "machine can reach: join a network for a class to open the lab")


def _device(setting: str) -> str:
    """The children's device: "auto" is CUDA when this machine has a GPU."""
    if setting != "auto":
        return setting
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def create_app() -> FastAPI:
    settings = load_settings()
    logs.attach(settings)
    app = FastAPI(
        title="Gradient Lab",
        version=__version__,
        lifespan=_lifespan,
        docs_url=None,  # served from the package's own files: routes/docs.py
        redoc_url=None,
        exception_handlers={
            AppError: _app_error,
            RequestValidationError: _request_invalid,
            StarletteHTTPException: _http_error,  # FastAPI's HTTPException is a subclass
            Exception: _internal,
        },
    )
    # Level 1, not Starlette's 9: on a classroom's LAN the server's CPU, not the bytes, is
    # scarce (plotly.js is compressed once, at level 9, in routes/home.py).
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=1)
    app.add_middleware(RememberPageChoices)
    origins = frozenset(o.strip() for o in settings.allowed_origins.split(",") if o.strip())
    app.add_middleware(GuardApi, request_bytes=settings.request_bytes, origins=origins,
                       hosts=allowed_hosts(settings), body_seconds=settings.body_seconds)
    metrics.instrument(app)  # outermost: it counts what GuardApi refuses too
    app.include_router(graph.router)
    app.include_router(health.router)
    app.include_router(docs.router)
    app.include_router(home.router)
    app.include_router(lessons.router)
    app.include_router(descent.router)
    app.include_router(training.router)
    app.include_router(rooms.router)
    app.mount("/static", _CachedStaticFiles(directory=assets("static")), name="static")
    return app


class _CachedStaticFiles(StaticFiles):
    """/static, cacheable for an hour (a lesson): the names carry no hash, so not for a year.
    Past the hour a browser revalidates with the ETag and gets a 304. A browser that takes gzip
    gets the file's gzip, made once per process (web/gzipped.py)."""

    def file_response(self, full_path: Any, stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.setdefault("Cache-Control", "public, max-age=3600")
        request = Headers(scope=scope)
        if (isinstance(response, FileResponse) and response.status_code == 200
                and "gzip" in request.get("accept-encoding", "") and "range" not in request
                and stat_result.st_size >= gzipped.MINIMUM_BYTES
                and (response.media_type or "").startswith(gzipped.COMPRESSIBLE)):
            body = gzipped.static_file(str(full_path), stat_result.st_mtime_ns,
                                       stat_result.st_size)
            headers = {k: v for k, v in response.headers.items() if k != "content-length"}
            return Response(body, status_code=200, headers={
                **headers, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        return response


def _answer(request: Request, error: AppError,
            headers: Mapping[str, str] | None = None) -> Response:
    lang = i18n.pick_language(request.headers.get("accept-language"))
    # orjson, in C: a failed program's partial graph can be megabytes of values.
    return Response(orjson.dumps(envelope(error, lang)), status_code=error.status,
                    headers=headers, media_type="application/json")


# A refusal that is the server's load, not the request's: when to try again (the pages retry
# once by themselves, after this).
_RETRY_AFTER_SECONDS = "2"


async def _app_error(request: Request, exc: AppError) -> Response:
    headers = {"Retry-After": _RETRY_AFTER_SECONDS} if exc.status in (429, 503) else {}
    if exc.kept is not None:
        headers["X-Kept"] = exc.kept
    return _answer(request, exc, headers)


async def _request_invalid(request: Request, exc: RequestValidationError) -> Response:
    problems = "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
        for error in exc.errors()
    )
    return _answer(request, RequestInvalid(f"Invalid request: {problems}",
                                           hint_key="hint.request_invalid"))


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
        # FastAPI's json.loads gave up on a body nested past Python's recursion limit and
        # answered a bare 400; it is a malformed request, a 422.
        return _answer(request, RequestInvalid(
            "Invalid request: body: the JSON is nested too deeply",
            hint_key="hint.request_invalid"))
    error = HttpError(exc.status_code, _HTTP_TYPES.get(exc.status_code, "http_error"),
                      str(exc.detail))
    return _answer(request, error, exc.headers)


async def _internal(request: Request, exc: Exception) -> Response:
    logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _answer(request, HttpError(500, "internal", "Something went wrong on the server."))


try:
    app = create_app()
except SettingsError as error:  # `uvicorn gradient_lab.main:app`, not gradient-lab: the
    raise SystemExit(str(error)) from None  # same one sentence, and no traceback
