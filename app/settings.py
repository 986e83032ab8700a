"""The server's settings, read from APP_* environment variables. Routes get them through Depends."""

from __future__ import annotations

import os
from dataclasses import fields
from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.sandbox.limits import Limits

# The runner's defaults are written once, on the dataclass; the settings only expose them.
_LIMITS = Limits()


def _default_sandbox_workers() -> int:
    # One per CPU, and two spare: a program past 5 ms of CPU on a crowded pool is moved aside
    # and another worker takes its place, and a spare keeps quick programs from queueing while
    # one starts. On this 2-core machine, with 10% of requests hostile, the benign p99 was 2.1x
    # the calm one with 2 workers, 1.9x with 3, 1.5x with 4 (bench/runner.py, an earlier pool);
    # calm throughput did not change. With today's pool, 6 did no better than 4.
    return (os.cpu_count() or 2) + 2


class Settings(BaseSettings):
    # Frozen: a changed copy (model_copy(update=...)) is a new object, so limits() may keep
    # what it made for this one.
    model_config = SettingsConfigDict(env_prefix="APP_", frozen=True)

    # The server.
    host: str = Field(
        default="127.0.0.1",
        description="Address the web server listens on.",
    )
    port: int = Field(
        default=8000,
        ge=0,
        le=65535,
        description="Port the web server listens on.",
    )
    workers: int = Field(
        default=1,
        ge=1,
        description="Uvicorn processes that serve HTTP.",
    )
    sandbox_workers: int = Field(
        default_factory=_default_sandbox_workers,
        ge=1,
        description="Warm processes that run learners' programs, in each uvicorn process.",
    )
    sandbox_long_jobs: int = Field(
        default=48,
        ge=0,
        description="Programs past 5 ms of CPU that may run on at once, at low priority, "
                    "in extra sandbox processes, so quick programs keep the workers.",
    )
    sandbox_standby: int = Field(
        default=16,
        ge=0,
        description="Warm sandbox processes kept aside to take a long program's place at once, "
                    "without a fork (CPU only).",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto",
        description="Where tensors live: auto (CUDA when available, else CPU), cpu or cuda.",
    )
    queue_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How long a request may wait for a free sandbox worker before a 503.",
    )

    # The runner: one field per field of Limits, same name, same default.
    program_bytes: int = Field(
        default=_LIMITS.program_bytes,
        gt=0,
        description="Longest program text accepted, in bytes.",
    )
    steps: int = Field(
        default=_LIMITS.steps,
        gt=0,
        description="Interpreter steps one program may take.",
    )
    tensor_numel: int = Field(
        default=_LIMITS.tensor_numel,
        gt=0,
        description="Most elements one tensor may have.",
    )
    tensor_memory_bytes: int = Field(
        default=_LIMITS.tensor_memory_bytes,
        gt=0,
        description="Most tensor memory one program may use, in bytes.",
    )
    int_bits: int = Field(
        default=_LIMITS.int_bits,
        gt=0,
        description="Largest Python integer a program may build, in bits.",
    )
    sequence_len: int = Field(
        default=_LIMITS.sequence_len,
        gt=0,
        description="Longest list, tuple, string or range a program may build.",
    )
    recursion: int = Field(
        default=_LIMITS.recursion,
        gt=0,
        description="Deepest nesting of function calls in a program.",
    )
    graph_nodes: int = Field(
        default=_LIMITS.graph_nodes,
        gt=0,
        description="Most autograd graph nodes traced for one program.",
    )
    stdout_bytes: int = Field(
        default=_LIMITS.stdout_bytes,
        gt=0,
        description="Most printed output kept from one program, in bytes.",
    )
    wall_seconds: float = Field(
        default=_LIMITS.wall_seconds,
        gt=0,
        description="Wall-clock seconds one program may run.",
    )
    cpu_seconds: float = Field(
        default=_LIMITS.cpu_seconds,
        gt=0,
        description="CPU seconds one program may use.",
    )
    worker_memory_mb: int = Field(
        default=_LIMITS.worker_memory_mb,
        gt=0,
        description="Memory cap of each sandbox process, in MiB (on CUDA, of GPU memory too).",
    )

    def limits(self) -> Limits:
        """The runner's limits, as the plain dataclass that crosses into worker processes.

        Made once per Settings: every job's request takes them, and building them (12 fields
        read, a frozen dataclass set up) cost 8 us on a request whose caches had gone cold.
        """
        global _limits_of
        settings, limits = _limits_of
        if settings is not self:
            limits = Limits(**{f.name: getattr(self, f.name) for f in fields(Limits)})
            _limits_of = self, limits  # one tuple, so a reader on another thread sees a pair
        return limits


_limits_of: tuple[Settings | None, Limits] = (None, _LIMITS)


@lru_cache
def load_settings() -> Settings:
    """The settings, read from the environment once: for code that starts the server."""
    return Settings()


async def get_settings() -> Settings:
    """The settings for routes, as `Depends(get_settings)`; tests override this one.

    async because FastAPI runs a plain-def dependency in its threadpool: a thread hop
    that cost more than the /healthz request itself.
    """
    return load_settings()
