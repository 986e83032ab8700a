"""What the benchmarks share: the real server as a subprocess on a free loopback port, and
the memory and latency figures read about it.

The server is `python -m gradient_lab` with the default settings unless APP_* variables say
otherwise; it leads its own session, so its process tree (forkserver, sandbox workers) is the
session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, log: IO[str], env: dict[str, str] | None = None,
                 ) -> subprocess.Popen[bytes]:
    """Start `python -m gradient_lab` on 127.0.0.1:port and wait for /healthz; exit with its
    log if not."""
    env = {**os.environ, **(env or {}), "APP_HOST": "127.0.0.1", "APP_PORT": str(port)}
    server = subprocess.Popen([sys.executable, "-m", "gradient_lab"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return server
        except OSError:
            pass
        time.sleep(0.2)
    stop(server)
    log.seek(0)
    sys.exit(f"the server did not answer /healthz; its output:\n{log.read()}")


def stop(server: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGINT)
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def session_pids(leader: int) -> list[int]:
    """The processes of the session `leader` leads: the server and everything it started."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it exited meanwhile
        if int(fields[3]) == leader:
            pids.append(int(entry))
    return pids


def session_cpu(server: int) -> tuple[float, float]:
    """CPU seconds of the server process, and of the rest of its session (the sandbox).

    Workers that have exited count through their parent's cutime/cstime once it reaped them.
    """
    own = rest = 0.0
    for pid in session_pids(server):
        try:
            with open(f"/proc/{pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it exited meanwhile
        utime, stime, cutime, cstime = (int(f) / _TICK for f in fields[11:15])
        if pid == server:
            own += utime + stime
        else:
            rest += utime + stime + cutime + cstime
    return own, rest


def session_rss(leader: int) -> tuple[int, int]:
    """Resident bytes summed over the session's processes, and how many processes there are.

    Pages the forked workers share with their forkserver count once per process, as RSS does.
    """
    total, count = 0, 0
    for pid in session_pids(leader):
        try:
            with open(f"/proc/{pid}/statm") as file:
                total += int(file.read().split()[1]) * _PAGE
            count += 1
        except OSError:
            continue
    return total, count


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")
