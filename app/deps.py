"""What routes depend on: the sandbox pool and the page templates."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, cast

from fastapi import Request, Response
from fastapi.templating import Jinja2Templates

from app import i18n
from app.errors import ProgramError
from app.settings import Settings, get_settings

if TYPE_CHECKING:
    # Only the type: the pool itself is built once, in main.py's lifespan.
    from app.sandbox.workers import WorkerPool

ROOT = Path(__file__).resolve().parent.parent


async def get_pool(request: Request) -> WorkerPool:  # async: no thread hop
    return pool_of(request)


def pool_of(request: Request) -> WorkerPool:
    """The sandbox pool, for a route that takes it without a dependency (POST /api/graph)."""
    pool: WorkerPool = request.app.state.pool
    return pool


async def settings_of(request: Request) -> Settings:
    """get_settings, for a route that takes them without a dependency (POST /api/graph).

    A test's `app.dependency_overrides[get_settings]` applies here as it does to a dependency.
    """
    provide = request.app.dependency_overrides.get(get_settings, get_settings)
    settings = provide()
    if inspect.isawaitable(settings):
        settings = await settings
    return cast(Settings, settings)


def job_device(settings: Settings, requested: str) -> str:
    """Where a job runs: the device the request names, or for "auto" the server's setting.

    A server set to the CPU runs nothing on a GPU it may have: its workers keep an address-space
    limit, under which CUDA cannot even start.
    """
    if requested == "auto":
        return settings.device
    if requested == "cuda" and settings.device == "cpu":
        raise ProgramError("CUDA was asked for, but this server is set to use only the CPU",
                           hint_key="hint.no_cuda")
    return requested


def job_body(body: object) -> Response:
    """A reply whose JSON a sandbox job wrote (app.wire), for a route whose response_model
    documents it: the server passes the bytes through rather than unpickling the result and
    encoding it on the event loop. Tests check each body against its model, field for field.
    """
    return Response(cast(bytes, body), media_type="application/json")


def page_choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    """A page setting from ?name=, else from the cookie main.py sets when a link chose it."""
    for value in (request.query_params.get(name), request.cookies.get(name)):
        if value in allowed:
            return value
    return None


def _page_context(request: Request) -> dict[str, object]:
    # A link may pin the language (?lang=zh-CN), and the choice is remembered in a cookie;
    # otherwise the browser's preference decides.
    lang = page_choice(request, "lang", i18n.LANGUAGES) or i18n.pick_language(
        request.headers.get("accept-language"))
    other = next(code for code in i18n.LANGUAGES if code != lang)
    present = page_choice(request, "present", ("0", "1")) == "1"
    return {"lang": lang, "strings": i18n.strings(lang), "other_lang": other, "present": present}


templates = Jinja2Templates(directory=ROOT / "templates", context_processors=[_page_context])
