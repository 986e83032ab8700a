"""The server's settings, read from APP_* environment variables. Routes get them through Depends."""

from __future__ import annotations

import ipaddress
import os
import tempfile
from dataclasses import fields
from functools import lru_cache
from typing import Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gradient_lab.runner.limits import Limits

# The runner's per-program defaults are written once, on the dataclass; the settings expose them.
_LIMITS = Limits()


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def _memory_mb() -> int:
    """The memory this server may use, in MiB: its container's limit (cgroup v2), else the
    machine's, less half a GiB for the server and its zygote."""
    try:
        with open("/sys/fs/cgroup/memory.max") as limit:
            text = limit.read().strip()
        container = None if text == "max" else int(text) >> 20
    except (OSError, ValueError):
        container = None
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    return max(512, min(machine, container or machine) - 512)


def _default_room_store() -> str:
    # The temporary folder: a container's only writable one; one per user, since the file
    # must be writable by every process of this server and no one else's.
    return os.path.join(tempfile.gettempdir(), f"gradient-lab-{os.getuid()}", "rooms.sqlite3")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="APP_", frozen=True)

    # The server.
    host: str = Field(default="127.0.0.1", description="Address the web server listens on.")
    port: int = Field(default=8000, ge=0, le=65535, description="Port the web server listens on.")
    workers: int = Field(default=1, ge=1, description="Uvicorn processes that serve HTTP.")
    public_url: str = Field(
        default="", description="The address students open to join a class (e.g. "
                                "http://192.168.1.20:8000), where the server cannot tell it: "
                                "in a container, or behind a proxy whose name it does not see.")
    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto",
        description="Where tensors live: auto (CUDA when available, else CPU), cpu or cuda.")

    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info",
        description="The least important log lines shown (the app's and uvicorn's).")
    log_format: Literal["text", "json"] = Field(
        default="text", description="Log lines as text for a person, or one JSON object a line "
                                    "for a log collector.")

    # The runner: children forked from the zygote, one per program.
    runner_ready: int = Field(
        default=4, ge=1,
        description="Children forked and walled in ahead of time, waiting for a program "
                    "(each holds a CUDA context on a GPU).")
    client_programs: int = Field(
        default=3, ge=1,
        description="Learners' programs one client (an address, or the real client behind "
                    "APP_TRUSTED_PROXIES) may have running or waiting at once; past it, 429. "
                    "A class following its teacher shares one run and counts once. Each "
                    "server process counts its own: with APP_WORKERS or replicas behind a "
                    "proxy, a client may have this many on each.")
    runner_jobs: int = Field(
        default_factory=lambda: max(2, _cpus()), ge=1,
        description="Programs that run at once at full priority; more wait in line.")
    runner_long_jobs: int = Field(
        default=16, ge=0,
        description="Programs that may be moved aside (stopped, to continue later) while "
                    "others run, beyond runner_jobs.")
    runner_memory_mb: int = Field(
        default_factory=lambda: _memory_mb(), gt=0,
        description="Memory all programs in flight may hold together, in MiB (each counts "
                    "memory_mb); more wait in line. Default: the machine's or container's.")
    runner_user: str = Field(
        default="nobody",
        description="The unprivileged user children run as when the server runs as root.")
    runner_weak_walls: bool = Field(
        default=False,
        description="Run learners' programs even on a kernel without Landlock or seccomp "
                    "(for a container that holds nothing else).")
    request_bytes: int = Field(
        default=262_144, gt=0,
        description="Largest request body the API reads, in bytes; larger ones get a 413 "
                    "before they are read.")
    allowed_origins: str = Field(
        default="",
        description="Sites besides the server's own whose pages may call the API, "
                    "comma-separated (https://lab.example.org), for a proxy that changes Host.")
    queue_seconds: float = Field(
        default=10.0, gt=0,
        description="How long a request may wait for its turn before a 503.")

    # One program: one field per field of Limits, same name, same default.
    program_bytes: int = Field(default=_LIMITS.program_bytes, gt=0,
                               description="Longest program text accepted, in bytes.")
    graph_nodes: int = Field(default=_LIMITS.graph_nodes, gt=0,
                             description="Most autograd graph nodes traced for one program.")
    stdout_bytes: int = Field(default=_LIMITS.stdout_bytes, gt=0,
                              description="Most printed output kept from one program, in bytes.")
    wall_seconds: float = Field(default=_LIMITS.wall_seconds, gt=0,
                                description="Wall-clock seconds one program may run.")
    cpu_seconds: float = Field(default=_LIMITS.cpu_seconds, gt=0,
                               description="CPU seconds one program may use.")
    memory_mb: int = Field(default=_LIMITS.memory_mb, gt=0,
                           description="Memory one program may add, in MiB (on CUDA, of GPU "
                                       "memory too).")
    race_steps: int = Field(default=_LIMITS.race_steps, gt=0,
                            description="Optimizer steps one race may take: runs x steps, "
                                        "an lr sweep's steps included.")
    basins_steps: int = Field(default=_LIMITS.basins_steps, gt=0,
                              description="A basins map's starts x steps.")
    stream_chunks: int = Field(default=_LIMITS.stream_chunks, gt=0,
                               description="Events one training run may stream; a longer run "
                                           "sends more steps in each.")
    stream_seconds: float = Field(default=60.0, gt=0,
                                  description="Wall-clock seconds one training run may stream.")
    reply_bytes: int = Field(default=32 << 20, gt=0,
                             description="Largest reply one program may send, in bytes.")

    # Class mode: rooms a teacher leads (gradient_lab/rooms).
    room_store: str = Field(
        default_factory=_default_room_store,
        description="Where class rooms live: a SQLite file shared by this machine's server "
                    "processes, or a redis:// URL shared by replicas on several machines.")
    rooms_max: int = Field(default=200, gt=0,
                           description="Class rooms open at once; one more gets a 409.")
    room_students_max: int = Field(default=200, gt=0,
                                   description="Students in one room; one more gets a 409.")
    room_idle_minutes: float = Field(
        default=60.0, gt=0,
        description="A room with nothing happening (no teacher's page open, no answer, no "
                    "join) for this long ends.")
    room_message_bytes: int = Field(
        default=16384, gt=0,
        description="Largest address or question a teacher's page may send to a room, in "
                    "bytes; larger ones get a 413.")

    # Kept replies (gradient_lab/kept): one run per distinct request.
    kept_store: str = Field(
        default="",
        description="Where kept replies live: empty for beside the rooms (the same Redis, or "
                    "kept.sqlite3 in the rooms' folder), `memory` for this process alone, a "
                    "SQLite file's path, or a redis:// URL.")
    kept_bytes: int = Field(default=256 << 20, gt=0,
                            description="Bytes of replies kept; past it the least recently "
                                        "used go.")
    kept_program_seconds: float = Field(
        default=600.0, ge=0,
        description="How long a learner's program's reply stays kept (the built-in lessons' "
                    "stay until evicted); one that names the clock or randomness, 5 s.")

    compute_ahead: bool = Field(
        default=True,
        description="Compute the built-in lessons at start-up, on idle CPU, so that the first "
                    "student to open one gets a kept reply.")

    # The HTTP edge: who the client is, which names reach the API, what one client may hold
    # (gradient_lab/web/client.py, edge.py).
    trusted_proxies: str = Field(
        default="",
        description="Reverse proxies whose X-Forwarded-For names the client, comma-separated "
                    "addresses or networks (172.16.0.0/12); none: the peer is the client.")
    allowed_hosts: str = Field(
        default="",
        description="Names besides this machine's by which browsers reach the API, "
                    "comma-separated (lab.school.example); addresses and localhost always "
                    "work, * allows any.")
    header_bytes: int = Field(
        default=32768, gt=0,
        description="Longest request line and headers a client may send, in bytes; longer "
                    "ones get a 400.")
    header_seconds: float = Field(
        default=10.0, gt=0,
        description="Seconds a connection has to send each request's line and headers; "
                    "past them it is closed (a 408 if it had begun).")
    body_seconds: float = Field(
        default=30.0, gt=0,
        description="Seconds a client has to send an API request's body; past them a 408.")
    connections_max: int = Field(
        default=4096, gt=0,
        description="Connections one server process serves at once (and at most what its "
                    "descriptor limit allows); past it a 503.")
    connections_per_client: int = Field(
        default=256, gt=0,
        description="Connections one client address may hold open (a trusted proxy's are "
                    "not counted); past it new ones are closed.")
    room_streams_per_client: int = Field(
        default=64, gt=0,
        description="Class-mode event streams one client may hold open in a server process "
                    "(a room holds at most twice its students); past it a 429.")
    room_starts_per_hour: int = Field(
        default=10, gt=0, description="Class rooms one client may start in an hour; one more "
                                      "gets a 429.")
    room_unattended_minutes: float = Field(
        default=10.0, gt=0,
        description="When every room is taken, rooms whose teacher's page has not been open "
                    "for this long end, to make room for a new one.")

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: str) -> str:
        for item in value.split(","):
            if item.strip():
                ipaddress.ip_network(item.strip(), strict=False)  # a ValueError names it
        return value

    def kept_store_setting(self) -> str:
        """APP_KEPT_STORE, with its default worked out from the rooms' store."""
        if self.kept_store:
            return self.kept_store
        if self.room_store.startswith(("redis://", "rediss://", "unix://")):
            return self.room_store
        return os.path.join(os.path.dirname(self.room_store), "kept.sqlite3")

    def limits(self) -> Limits:
        """The per-program limits, as the plain dataclass that crosses into a child."""
        return Limits(**{f.name: getattr(self, f.name) for f in fields(Limits)})


class SettingsError(Exception):
    """A setting the server cannot start with; its message is one sentence naming the variable."""


def read_settings() -> Settings:
    """The settings from the environment, checked: a SettingsError names each impossible one."""
    try:
        settings = Settings()
    except ValidationError as error:
        problems = [f"{_variable(problem['loc'])}={problem['input']} "
                    f"({problem['msg'].replace('Input should be', 'it must be')})"
                    for problem in error.errors()]
        raise SettingsError(f"Gradient Lab cannot start with {', '.join(problems)}.") from None
    problem = _impossible(settings)
    if problem:
        raise SettingsError(f"Gradient Lab cannot start: {problem}.")
    return settings


def _variable(loc: tuple[int | str, ...]) -> str:
    return "APP_" + str(loc[0]).upper() if loc else "an APP_* variable"


def _impossible(settings: Settings) -> str | None:
    """What no server could do with these settings, however the pages are used."""
    if settings.device == "cuda":
        import torch

        if torch.version.cuda is None:
            return (f"APP_DEVICE=cuda, but this torch ({torch.__version__}) was built without "
                    "CUDA; set APP_DEVICE=cpu or auto, or install a CUDA build of torch")
        if not torch.cuda.is_available():
            return (f"APP_DEVICE=cuda, but torch {torch.__version__} finds no CUDA GPU on this "
                    "machine (no device, or no driver); set APP_DEVICE=cpu or auto")
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam(settings.runner_user)
        except KeyError:
            return (f"APP_RUNNER_USER={settings.runner_user!r} is no user on this machine; the "
                    "server runs as root, and learners' programs run as that user")
    return None


@lru_cache
def load_settings() -> Settings:
    """The settings, read from the environment once and checked: for code that starts the
    server. Raises SettingsError."""
    return read_settings()


async def get_settings() -> Settings:
    """The settings for routes, as `Depends(get_settings)`; tests override this one."""
    return load_settings()
