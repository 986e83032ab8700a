"""`gradient-lab` as a teacher types it: --help, --version, check, a start with impossible
settings, and the first lines of a start that works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import IO

import pytest
import torch

from gradient_lab.lan import lan_addresses
from tests.browser.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def _env(**settings: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("APP_")}
    env.update(PYTHONPATH=str(ROOT), APP_KEPT_STORE="memory", APP_COMPUTE_AHEAD="false",
               APP_RUNNER_READY="1", **settings)
    return env


def _cli(*arguments: str, timeout: float = 120,
         **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradient_lab", *arguments],
                          capture_output=True, text=True, timeout=timeout, env=_env(**settings))


def test_help_names_the_commands_and_starts_nothing() -> None:
    started = time.monotonic()
    result = _cli("--help")
    assert result.returncode == 0, result.stderr
    for word in ("serve", "check", "--version"):
        assert word in result.stdout
    assert time.monotonic() - started < 10  # no server, no torch behind it
    serve = _cli("serve", "--help")
    for option in ("--host", "--lan", "--port", "--workers", "--device"):
        assert option in serve.stdout


def test_version_is_the_packages() -> None:
    result = _cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"gradient-lab {version('gradient-lab')}"


IMPOSSIBLE = [
    ({"APP_WORKERS": "0"}, "APP_WORKERS=0"),
    ({"APP_PORT": "eighty"}, "APP_PORT=eighty"),
    ({"APP_DEVICE": "gpu"}, "APP_DEVICE=gpu"),
    ({"APP_WALL_SECONDS": "-1"}, "APP_WALL_SECONDS=-1"),
    ({"APP_LOG_FORMAT": "xml"}, "APP_LOG_FORMAT=xml"),
]
if not torch.cuda.is_available():
    IMPOSSIBLE.append(({"APP_DEVICE": "cuda"}, "APP_DEVICE=cuda"))
if os.geteuid() == 0:
    IMPOSSIBLE.append(({"APP_RUNNER_USER": "no-such-user-here"}, "APP_RUNNER_USER"))


@pytest.mark.parametrize(("settings", "named"), IMPOSSIBLE, ids=[n for _, n in IMPOSSIBLE])
def test_an_impossible_setting_ends_the_start_with_one_sentence_naming_it(
        settings: dict[str, str], named: str) -> None:
    result = _cli(timeout=60, **settings)
    assert result.returncode == 2, result.stderr
    said = result.stderr.strip()
    assert "\n" not in said and "Traceback" not in said, said
    assert said.startswith("Gradient Lab cannot start") and said.endswith("."), said
    assert named in said


def test_cuda_without_cuda_says_what_to_set_instead() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = _cli("serve", "--device", "cuda", timeout=60)
    assert result.returncode == 2
    assert "APP_DEVICE=cpu" in result.stderr and torch.__version__ in result.stderr


def test_check_says_what_healthz_would_after_running_a_program_in_a_walled_child() -> None:
    result = _cli("check", "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["status"] == "ok" and answer["version"] == version("gradient-lab")
    assert answer["torch"]["version"] == torch.__version__
    assert answer["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert answer["walls_missing"] == [] and answer["runner"]["walls"]["seccomp"] is True
    assert answer["runner"]["started"] == 1  # the walls job ran in a child


def test_check_without_a_wall_it_needs_exits_1_and_says_why() -> None:
    # Landlock and seccomp turned off, as on a kernel without them (runner/child/lockin.Walls).
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from gradient_lab import cli; "
         "from gradient_lab.runner.child.lockin import Walls; import gradient_lab.main as m; "
         "config = m.pool_config; "
         "m.pool_config = lambda s, ready=None: __import__('dataclasses').replace("
         "config(s, ready), walls=Walls(landlock=False)); sys.exit(cli.main(['check']))"],
        capture_output=True, text=True, timeout=300, env=_env())
    assert result.returncode == 1, result.stderr
    assert "NOT READY" in result.stdout and "landlock" in result.stdout, result.stdout


@contextmanager
def _serving(arguments: list[str], **settings: str) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen([sys.executable, "-m", "gradient_lab", *arguments],
                          env=_env(**settings), stderr=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True) as server:
        try:
            yield server
        finally:
            server.terminate()
            server.wait(30)


def _lines_until(stream: IO[str], text: str, timeout: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    pytest.fail(f"no line with {text!r}; the server said:\n{''.join(lines)}")


def test_serve_lan_names_version_device_walls_and_the_lan_url_in_json_lines() -> None:
    port = free_port()
    with _serving(["serve", "--lan", "--port", str(port)], APP_LOG_FORMAT="json") as server:
        assert server.stderr is not None
        lines = [json.loads(line) for line in
                 _lines_until(server.stderr, "Uvicorn running", timeout=120)]
        ours = [line["message"] for line in lines if line["logger"].startswith("gradient_lab")]
        assert ours[0].startswith(f"Gradient Lab {version('gradient-lab')}, torch "), ours
        assert ours[1].startswith("Walls: Landlock ABI") and "seccomp" in ours[1], ours
        opened = ours[2]
        assert f"http://127.0.0.1:{port}/" in opened
        for address in lan_addresses():
            assert f"http://{address}:{port}/" in opened
        for path in ("/healthz", "/readyz", "/metrics", "/"):
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).close()
        access = json.loads(_lines_until(server.stderr, '"uvicorn.access"', timeout=30)[-1])
        assert (access["path"], access["status"]) == ("/", 200)  # the probes left no line


def test_the_apps_own_info_lines_appear_in_text() -> None:
    port = free_port()
    with _serving(["serve", "--port", str(port)], APP_LOG_LEVEL="info") as server:
        assert server.stderr is not None
        lines = _lines_until(server.stderr, "Uvicorn running", timeout=120)
        said = "".join(lines)
        assert " INFO    gradient_lab.main: Open http://127.0.0.1:" in said, said
        assert "a class on the same network" not in said  # 127.0.0.1 only: no LAN address


def test_plain_uvicorn_ends_an_impossible_start_with_the_same_sentence() -> None:
    result = subprocess.run([sys.executable, "-m", "uvicorn", "gradient_lab.main:app"],
                            capture_output=True, text=True, timeout=120,
                            env=_env(APP_WORKERS="0"))
    assert result.returncode != 0
    said = result.stderr.strip()
    assert said == "Gradient Lab cannot start with APP_WORKERS=0 (it must be greater than or " \
                   "equal to 1).", said


# A terminal's Ctrl+C signals its whole foreground process group (server, zygote, children);
# docker stop and systemd send SIGTERM to the server.
@pytest.mark.parametrize(("signum", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c", "sigterm"])
def test_a_stop_leaves_no_traceback_and_no_error(signum: int, group: bool) -> None:
    port = free_port()
    with subprocess.Popen([sys.executable, "-m", "gradient_lab", "serve", "--port", str(port)],
                          env=_env(), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          text=True, start_new_session=True) as server:
        assert server.stderr is not None
        try:
            _lines_until(server.stderr, "Uvicorn running", timeout=120)
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/graph", method="POST",
                data=json.dumps({"code": "import torch\nprint(torch.ones(2).sum())\n"}).encode(),
                headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=60).close()  # a child forked and reaped
            if group:
                os.killpg(server.pid, signum)
            else:
                server.send_signal(signum)
            _, said = server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
    assert "Traceback" not in said and " ERROR " not in said, said
    assert "Finished server process" in said, said
