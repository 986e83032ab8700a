"""`gradient-lab` (and `python -m gradient_lab`): serve the lab, or check the machine first.

    gradient-lab                      serve, as the APP_* variables say (README.md)
    gradient-lab serve --lan          serve the class: listen on every address, show the LAN's
    gradient-lab check                the walls, the device, torch: what /healthz would say
    gradient-lab --version

An option is its APP_* variable set for this start (`--port 9000` is APP_PORT=9000), so the
settings are read one way, by every uvicorn worker alike, and checked once, here: a setting
no server could start with ends the start with one sentence naming it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from gradient_lab import __version__
from gradient_lab.settings import Settings, SettingsError, load_settings, read_settings

_SETTINGS_EXIT = 2  # as argparse's for a bad option: the start was asked wrongly
_SERVE_OPTIONS = {"host": "APP_HOST", "port": "APP_PORT", "workers": "APP_WORKERS",
                  "device": "APP_DEVICE"}


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "check":
            return check(json_output=arguments.json)
        return serve(arguments)
    except SettingsError as error:
        print(error, file=sys.stderr)  # noqa: T201 (the one sentence, before any log exists)
        return _SETTINGS_EXIT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradient-lab",
        description="Gradient Lab: see how PyTorch computes gradients and how optimizers use "
                    "them. With no command, serve. Every setting is also an APP_* variable "
                    "(README.md lists them).")
    parser.add_argument("--version", action="version", version=f"gradient-lab {__version__}")
    parser.set_defaults(command="serve", lan=False, json=False,
                        **dict.fromkeys(_SERVE_OPTIONS))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="start the web server (the default)",
                                description="Start the web server.")
    where = serve.add_mutually_exclusive_group()
    where.add_argument("--host", help="address to listen on (APP_HOST; default 127.0.0.1, "
                                      "this machine only)")
    where.add_argument("--lan", action="store_true",
                       help="listen on every address (0.0.0.0) for a class on this network, "
                            "and show the addresses they open")
    serve.add_argument("--port", type=int, help="port to listen on (APP_PORT; default 8000)")
    serve.add_argument("--workers", type=int,
                       help="uvicorn processes that serve HTTP (APP_WORKERS; default 1)")
    serve.add_argument("--device", choices=("auto", "cpu", "cuda"),
                       help="where learners' tensors live (APP_DEVICE; default auto: CUDA "
                            "when there is a GPU)")
    check = commands.add_parser(
        "check", help="check the walls, the device and torch without serving",
        description="Start the runner once, run a program in a walled child, and say what "
                    "/healthz would: the walls, the device, torch's build. Exits 1 when "
                    "this server could not run learners' programs.")
    check.add_argument("--json", action="store_true", help="print /healthz's JSON instead")
    return parser


def serve(arguments: argparse.Namespace) -> int:
    """Start uvicorn with the settings, checked; returns when the server stops."""
    for option, variable in _SERVE_OPTIONS.items():
        value = getattr(arguments, option)
        if value is not None:
            os.environ[variable] = str(value)
    if arguments.lan:
        os.environ["APP_HOST"] = "0.0.0.0"
    settings = read_settings()
    load_settings.cache_clear()  # read again, with the options, by whoever reads it next
    _run_uvicorn(settings)
    return 0


def _run_uvicorn(settings: Settings) -> None:
    """The one call of uvicorn.run. An import string, not the app object: uvicorn needs it to
    start more than one worker, each of which builds the app from the same settings."""
    import uvicorn

    from gradient_lab.logs import uvicorn_log_config
    from gradient_lab.web.edge import uvicorn_options

    # host, port, workers and the HTTP edge's limits (timeouts, sizes, connections).
    uvicorn.run("gradient_lab.main:app", log_config=uvicorn_log_config(settings),
                **uvicorn_options(settings))


def check(json_output: bool = False) -> int:
    """Say what /healthz would, from a runner started for the purpose; 1 if not ready."""
    from gradient_lab.web.routes.health import health, not_ready

    settings = read_settings()
    pool = _start_pool(settings)
    try:
        ran = asyncio.run(_run_one(pool, settings))
        answer = health(pool)
        why = not_ready(pool) or ran
    finally:
        pool.close()
    if why is not None:
        answer.update(status="not ready", why=why)
    if json_output:
        print(json.dumps(answer, indent=2))  # noqa: T201
    else:
        for line in _describe(answer, settings):
            print(line)  # noqa: T201
    return 0 if why is None else 1


def _start_pool(settings: Settings) -> Any:  # noqa: ANN401 (a Pool; imported late: torch)
    from gradient_lab.main import pool_config
    from gradient_lab.runner.pool.pool import Pool

    pool = Pool(pool_config(settings, ready=1))
    pool.start()
    return pool


async def _run_one(pool: Any, settings: Settings) -> str | None:  # noqa: ANN401
    """Why a program could not run in a walled child, if it could not."""
    from gradient_lab.errors import AppError
    from gradient_lab.jobs import walls

    try:
        await pool.run(walls, wall_seconds=settings.wall_seconds,
                       cpu_seconds=settings.cpu_seconds, queue_seconds=settings.queue_seconds,
                       strangers_code=False)
    except AppError as error:
        return f"a program could not run in a walled child: {error}"
    return None


def _describe(answer: dict[str, Any], settings: Settings) -> list[str]:
    torch, runner = answer["torch"], answer["runner"]
    walls = runner["walls"]
    cuda = f"built with CUDA {torch['cuda']}" if torch["cuda"] else "a CPU build (no CUDA)"
    lines = [
        f"gradient-lab {answer['version']}",
        f"torch:   {torch['version']}, {cuda}; GPUs: {', '.join(torch['gpus']) or 'none'}",
        f"device:  {answer['device']} (APP_DEVICE={settings.device})",
        f"walls:   Landlock {'ABI ' + str(walls['landlock']) if walls['landlock'] else 'NO'}, "
        f"seccomp {'yes' if walls['seccomp'] else 'NO'}, user {walls['user']}, "
        f"rlimits {'yes' if walls['rlimits'] else 'no'}",
        f"runner:  {runner['started']} program run in a walled child, forked from the zygote",
    ]
    if answer.get("walls_missing"):
        weak = "APP_RUNNER_WEAK_WALLS=true runs them anyway" if not settings.runner_weak_walls \
            else "APP_RUNNER_WEAK_WALLS=true: programs run without them"
        lines.append(f"missing: {', '.join(answer['walls_missing'])} ({weak})")
    lines.append("ready: learners' programs can run" if answer["status"] == "ok"
                 else f"NOT READY: {answer['why']}")
    return lines
