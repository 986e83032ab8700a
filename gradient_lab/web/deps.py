"""What routes depend on: the settings, and ClientJobs, which runs their jobs for the client
who asks, through the runner's pool (and keeps what they answer: gradient_lab.kept)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request, Response

from gradient_lab.errors import AppError, ProgramError, TooMany
from gradient_lab.kept import Keeper, Reading
from gradient_lab.kept.keys import fingerprint, key, names_the_clock_or_chance, texts_of
from gradient_lab.runner.pool.pool import Pool
from gradient_lab.settings import Settings, get_settings
from gradient_lab.web.client import client_of
from gradient_lab.web.gzipped import MINIMUM_BYTES, Gzipped

# A stranger's program that names the clock or randomness answers differently each run: its
# reply is shared only by the identical requests of one moment (a class following its teacher).
VOLATILE_SECONDS = 5.0
_GRACE_SECONDS = 5.0  # beyond a job's queue and run time, before another process may take it


@dataclass(frozen=True, slots=True)
class ClientJobs:
    """How a route runs a job for one client: once per distinct request, in a fresh walled
    child of the pool, within the settings' limits and the client's cap on programs. (The
    lessons computed ahead run as client "", the server's own.)"""

    pool: Pool
    keeper: Keeper
    settings: Settings
    client: str = ""  # who asks (web/client.py), for the cap on one client's programs
    programs: Counter[str] = field(default_factory=Counter)  # runs in flight, by client
    gzipped: Gzipped | None = None  # the process's gzip of replies, if the client takes gzip

    async def reply(self, job: Callable[..., Any], *, strangers_code: bool,
                    **args: object) -> Response:
        """job(**args)'s reply body as the response: JSON a child wrote, passed through."""
        reading = self._open(job, strangers_code, args, stream=False)
        try:
            bodies = [body async for body in reading]  # one: a job that does not stream
        except AppError as error:
            # Every reader of one run shares its error: each answer gets a copy of its own,
            # which says how it came (main.py puts it in X-Kept).
            answered = copy.copy(error)
            answered.kept = reading.outcome
            raise answered from None
        body, headers = bodies[-1], {"X-Kept": reading.outcome}
        if self.gzipped is not None and len(body) >= MINIMUM_BYTES:
            # Compressed once for every screen: the GZip middleware passes it by, encoded.
            body = self.gzipped.of(body)
            headers |= {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return Response(body, media_type="application/json", headers=headers)

    def stream(self, job: Callable[..., Any], **args: object) -> Reading:
        """Each reply body of a job that streams (a training run), within stream_seconds."""
        return self._open(job, False, args, stream=True)

    def _open(self, job: Callable[..., Any], strangers_code: bool, args: dict[str, object],
              stream: bool) -> Reading:
        settings = self.settings
        wall = settings.stream_seconds if stream else settings.wall_seconds
        cpu = settings.stream_seconds if stream else settings.cpu_seconds

        def run() -> AsyncGenerator[bytes, None]:
            return self.pool.stream(job, wall_seconds=wall, cpu_seconds=cpu,
                                    queue_seconds=settings.queue_seconds,
                                    strangers_code=strangers_code, client=self.client, **args)

        lifetime: float | None = None  # the lab's own lessons: kept until evicted
        if strangers_code:
            lifetime = VOLATILE_SECONDS if names_the_clock_or_chance(texts_of(args)) \
                else settings.kept_program_seconds
        kept_under = key(job.__name__, args, settings.limits(), wall, cpu, settings.device,
                         fingerprint())
        landed = None
        if strangers_code and not self.keeper.flying(kept_under):
            landed = self._count_a_program()
        return self.keeper.open(kept_under, run, lifetime=lifetime, stream=stream,
                                claim_seconds=settings.queue_seconds + wall + _GRACE_SECONDS,
                                landed=landed)

    def _count_a_program(self) -> Callable[[], None]:
        """Count a learner's program that starts a run for this client, until its run ends
        (a request the browser gave up on still counts: its run goes on, to be kept); past
        the cap, TooMany. A request that joins a run in flight costs nothing, and counts not."""
        programs, client = self.programs, self.client
        if programs[client] >= self.settings.client_programs:
            raise TooMany(f"{programs[client]} of your programs are still running or waiting; "
                          "the next can start when one of them ends", hint_key="hint.too_many")
        programs[client] += 1

        def landed() -> None:
            programs[client] -= 1
            if programs[client] <= 0:
                del programs[client]
        return landed

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


async def get_client_jobs(request: Request,
                          settings: Annotated[Settings, Depends(get_settings)]) -> ClientJobs:
    state = request.app.state
    takes_gzip = "gzip" in request.headers.get("accept-encoding", "")  # as the middleware reads it
    return ClientJobs(state.pool, state.kept, settings, client_of(request, settings),
                      state.programs, state.gzipped if takes_gzip else None)


ClientJobsDep = Annotated[ClientJobs, Depends(get_client_jobs)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
