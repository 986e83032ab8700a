"""The real server as a subprocess on a free port, which a test may stop, crash or freeze and
start again; and the route that keeps a browser offline."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_server(url: str, process: subprocess.Popen[bytes], stderr: IO[bytes],
                    timeout: float = 90.0) -> None:
    """Poll url until it answers 200; fail with the server's stderr if it dies or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    stderr.seek(0)
    log = stderr.read().decode(errors="replace")[-4000:]
    state = f"exited with {process.returncode}" if process.poll() is not None else "never answered"
    pytest.fail(f"the server at {url} {state}; its stderr:\n{log}")


class ServerProcess:
    """`python -m gradient_lab` on one port, which a test may stop (or crash, or freeze) and
    start again.

    The server runs in a process group of its own, so that a crash takes its runner's children
    with it, as a real one would.
    """

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "APP_HOST": "127.0.0.1", "APP_PORT": str(self.port),
               "APP_SANDBOX_WORKERS": "2"}
        with tempfile.TemporaryFile() as stderr:
            self.process = subprocess.Popen([sys.executable, "-m", "gradient_lab"], cwd=ROOT,
                                            env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                                            start_new_session=True)
            try:
                wait_for_server(f"{self.url}/healthz", self.process, stderr)
            except BaseException:
                self.stop(crash=True)
                raise

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, crash: bool = False) -> None:
        """Shut the server down (SIGTERM), or crash it: SIGKILL to its whole process group."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGCONT)  # a frozen server could not shut down
        if not crash:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        # Whatever of the group is left (all of it, for a crash) goes, so nothing holds the port.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()

    def freeze(self, frozen: bool = True) -> None:
        """Stop (SIGSTOP) or continue (SIGCONT) the server's process group: it keeps its
        connections open and answers nothing."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

