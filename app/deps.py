"""What routes depend on: the runner that runs their jobs, and the page templates."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.templating import Jinja2Templates

from app import i18n
from app.errors import ProgramError
from app.runner.pool.pool import Pool
from app.settings import Settings, get_settings

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Runner:
    """How a route runs a job: in a fresh walled child, within the settings' limits."""

    pool: Pool
    settings: Settings

    async def reply(self, job: Callable[..., Any], *, strangers_code: bool,
                    **args: object) -> Response:
        """job(**args)'s reply body as the response: JSON the child wrote, passed through."""
        settings = self.settings
        body = await self.pool.run(job, wall_seconds=settings.wall_seconds,
                                   cpu_seconds=settings.cpu_seconds,
                                   queue_seconds=settings.queue_seconds,
                                   strangers_code=strangers_code, **args)
        return Response(body, media_type="application/json")

    def stream(self, job: Callable[..., Any], **args: object) -> AsyncGenerator[bytes, None]:
        """Each reply body of a job that streams (a training run), within stream_seconds."""
        settings = self.settings
        return self.pool.stream(job, wall_seconds=settings.stream_seconds,
                                cpu_seconds=settings.stream_seconds,
                                queue_seconds=settings.queue_seconds, strangers_code=False,
                                **args)

    def device(self, requested: str) -> str:
        """Where a job runs: the device the request names, or for "auto" the server's setting.

        A server set to the CPU runs nothing on a GPU it may have: its children keep an
        address-space limit, under which CUDA cannot even start.
        """
        if requested == "auto":
            return self.settings.device
        if requested == "cuda" and self.settings.device == "cpu":
            raise ProgramError("CUDA was asked for, but this server is set to use only the CPU",
                               hint_key="hint.no_cuda")
        return requested


async def get_runner(request: Request,
                     settings: Annotated[Settings, Depends(get_settings)]) -> Runner:
    return Runner(request.app.state.pool, settings)


RunnerDep = Annotated[Runner, Depends(get_runner)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


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
