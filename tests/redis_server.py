"""A real redis-server on a free loopback port, for the tests of the stores that live in
Redis (class mode's rooms, kept replies)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server_binary() -> str | None:
    for candidate in (os.environ.get("REDIS_SERVER"), "/usr/bin/redis-server",
                      shutil.which("redis-server")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class RedisServer:
    """Debian's redis-server on a loopback port, in memory only, for one test session."""

    def __init__(self) -> None:
        binary = redis_server_binary()
        if binary is None:
            pytest.skip("REDIS TESTS NOT RUN: no redis-server at /usr/bin/redis-server or on "
                        "PATH (apt-get install redis-server; scripts/test.sh does this when it "
                        "can)")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no"],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self._log.seek(0)
        self.stop()
        pytest.fail(f"redis-server did not start: {self._log.read().decode(errors='replace')}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self._log.close()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    server = RedisServer()
    try:
        yield server.url
    finally:
        server.stop()


def flush(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(16).startswith(b"+OK")


