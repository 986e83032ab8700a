"""What routes depend on: the settings, and the runner that runs their jobs."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request, Response

from gradient_lab.errors import ProgramError
from gradient_lab.runner.pool.pool import Pool
from gradient_lab.settings import Settings, get_settings


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
