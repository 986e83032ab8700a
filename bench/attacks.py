"""A class beside its worst student: `python bench/attacks.py [--seconds 20] [--students 10]`.

Starts the real server behind a stand-in for the shipped proxy (APP_TRUSTED_PROXIES=127.0.0.1:
each simulated student sends its own X-Forwarded-For, as Caddy and nginx do), and measures the
students' p50/p99 and failures, calm and then while one attacker does each of issue 26's
faults 1, 5 and 6:

- sleepers: the attacker keeps programs that sleep in flight, as many as it is let (fault 1);
- tiny values: programs whose reply, within the byte limit, is 900,000 empty lists (the most
  values the server takes), which cost a parser most for their bytes (fault 5);
- connections: 1,100 idle connections from another address (127.0.0.2), held open (fault 6).

A student presses Run on the tutorial's first example with numbers of its own, thinks a
fifth of a second, and again. Target: each attack's benign p99 within 2x the calm one, and no
benign failure. Only loopback is contacted; every loop ends by its deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import loadgen  # noqa: E402
from server import free_port, quantile, start_server, stop  # noqa: E402

from gradient_lab.graph.examples import EXAMPLES  # noqa: E402

S2 = EXAMPLES["S2"].program
_numbers = itertools.count(int(time.time()) % 100_000 * 1000)
SLEEPER = "import time\ntime.sleep(4)\n"
# The program finds its reply pipe and writes a reply of 900,000 empty lists, then ends.
TINY_VALUES = """import os, fcntl
def _open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
reply = next(fd for fd in range(3, 64) if _open(fd) and
             fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY)
body = b'[' + b'[],' * 900_000 + b'[]]'
os.write(reply, b'{"kind": "data", "bytes": %d}\\n' % len(body) + body
         + b'{"kind": "end", "bytes": 0}\\n')
os._exit(0)
"""


def _forwarded(address: str) -> str:
    return f"X-Forwarded-For: {address}\r\n"


async def _student(port: int, address: str, until: float, seen: list[tuple[int, float]]) -> None:
    conn = loadgen.Connection(port)
    try:
        while time.monotonic() < until:
            n = next(_numbers)
            code = S2.replace("[2.0]", f"[{2 + n % 97 / 100:.2f}]").replace("[3.0]", f"[{n}.0]")
            start = time.perf_counter()
            try:
                status, _ = await asyncio.wait_for(conn.request(
                    "POST", "/api/graph", json.dumps({"code": code}).encode(),
                    _forwarded(address)), 30)
            except (TimeoutError, OSError, asyncio.IncompleteReadError):
                status = 0
                conn.close()
            seen.append((status, time.perf_counter() - start))
            await asyncio.sleep(0.2)
    finally:
        conn.close()


async def _programs(port: int, code: str, until: float, at_once: int) -> None:
    """An attacker at 10.66.6.6 keeping `at_once` of its programs in flight."""
    async def one() -> None:
        conn = loadgen.Connection(port)
        try:
            while time.monotonic() < until:
                body = json.dumps({"code": f"# {next(_numbers)}\n{code}"}).encode()
                try:
                    status, _ = await asyncio.wait_for(conn.request(
                        "POST", "/api/graph", body, _forwarded("10.66.6.6")), 30)
                except (TimeoutError, OSError, asyncio.IncompleteReadError):
                    conn.close()
                    status = 0
                if status in (0, 429, 503):
                    await asyncio.sleep(0.05)
        finally:
            conn.close()
    await asyncio.gather(*(one() for _ in range(at_once)))


async def _connections(port: int, until: float, count: int = 1_100) -> None:
    """Idle connections from 127.0.0.2, reopened as the server closes them."""
    held: list[asyncio.StreamWriter] = []
    while time.monotonic() < until:
        held = [w for w in held if not w.is_closing()]
        for _ in range(min(100, count - len(held))):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port,
                                                          local_addr=("127.0.0.2", 0))
                held.append(writer)
            except OSError:
                break
        await asyncio.sleep(0.2)
    for writer in held:
        writer.close()


Attack = Callable[[int, float], Awaitable[None]]
ATTACKS: dict[str, Attack | None] = {
    "calm": None,
    "sleepers": lambda port, until: _programs(port, SLEEPER, until, 8),
    "tiny values": lambda port, until: _programs(port, TINY_VALUES, until, 4),
    "connections": _connections,
}


async def _round(port: int, students: int, seconds: float, attack: Attack | None
                 ) -> list[tuple[int, float]]:
    until = time.monotonic() + seconds
    seen: list[tuple[int, float]] = []
    attacker = asyncio.create_task(attack(port, until + 1)) if attack else None
    if attacker:
        await asyncio.sleep(1)  # the attack is under way before the class measures
    await asyncio.gather(*(_student(port, f"192.168.7.{10 + i}", until, seen)
                           for i in range(students)))
    if attacker:
        await attacker
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--students", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile("w+") as log:
        port = free_port()
        server = start_server(port, log, {
            "APP_TRUSTED_PROXIES": "127.0.0.1", "APP_ROOM_STORE": f"{folder}/rooms.sqlite3",
            "APP_COMPUTE_AHEAD": "false"})
        try:
            print(f"{args.students} students, {args.seconds:g} s a round; "
                  "S2 with numbers of their own, 0.2 s between presses\n")
            print(f"{'while':<14} {'presses':>7} {'p50 ms':>7} {'p99 ms':>7} {'× calm':>7}  "
                  "benign failures")
            calm_p99, ok = 0.0, True
            for name, attack in ATTACKS.items():
                seen = asyncio.run(_round(port, args.students, args.seconds, attack))
                seconds = [s for status, s in seen if status == 200]
                failed = sum(status != 200 for status, _ in seen)
                p50, p99 = quantile(seconds, 0.5), quantile(seconds, 0.99)
                calm_p99 = calm_p99 or p99
                ratio = p99 / calm_p99
                passed = failed == 0 and ratio <= 2.0
                ok &= passed
                print(f"{name:<14} {len(seen):>7} {p50 * 1000:7.0f} {p99 * 1000:7.0f} "
                      f"{ratio:7.2f}  {failed:<4} {'PASS' if passed else 'MISS'}")
        finally:
            stop(server)
    print("\nPASS" if ok else "\nMISS")


if __name__ == "__main__":
    main()
