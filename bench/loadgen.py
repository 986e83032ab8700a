"""A cheap HTTP/1.1 load generator: raw keep-alive requests over asyncio streams.

The server under test shares this machine's cores with us, so every microsecond the client
spends is one the server does not get. httpx costs several times more CPU per request than
writing the request bytes by hand and reading Content-Length bytes back, so this does the latter.
It speaks only the little HTTP the bench needs: no chunked bodies, no redirects, no TLS.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str  # "benign" or the name of the hostile program
    status: int  # 0 when the connection failed
    seconds: float
    started: float  # time.monotonic() when the request was sent


class Connection:
    """One keep-alive connection to 127.0.0.1:port; reopened if the server closes it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.kept = ""  # the last reply's X-Kept: "ran", "shared" or "hit" (kept replies)

    async def request(self, method: str, path: str, body: bytes = b"",
                      headers: str = "") -> tuple[int, bytes]:
        """Send one request (`headers`: extra "Name: value\\r\\n" lines); its status and body.

        A chunked body (a stream, or a gzipped file) comes back as its chunks joined.
        """
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self._reader is not None
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        self._writer.write(head.encode() + body)
        try:
            header = await self._reader.readuntil(b"\r\n\r\n")
            status = int(header[9:12])
            length, close, chunked = None, False, False
            self.kept = ""
            for line in header.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and value.strip().lower() == b"close":
                    close = True
                elif name == b"transfer-encoding" and value.strip().lower() == b"chunked":
                    chunked = True
                elif name == b"x-kept":
                    self.kept = value.strip().decode()
            if chunked:
                payload = await self._read_chunks()
            elif length is None:
                raise ConnectionError("the response has no Content-Length")
            else:
                payload = await self._reader.readexactly(length)
        except BaseException:
            self.close()
            raise
        if close:
            self.close()
        return status, payload

    async def _read_chunks(self) -> bytes:
        assert self._reader is not None
        chunks = []
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._reader.readuntil(b"\r\n")  # no trailers: the final CRLF
                return b"".join(chunks)
            chunks.append(await self._reader.readexactly(size + 2))
            chunks[-1] = chunks[-1][:-2]

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


async def sequential(port: int, requests: list[tuple[str, str, bytes]],
                     rounds: int, must_run: bool = False) -> list[list[float]]:
    """Send the requests in turn, `rounds` times, on one connection; seconds taken by each.

    Interleaving the kinds makes machine noise hit them alike. `must_run`: a reply that did
    not run (X-Kept "hit" or "shared") is an error, for a bench that times runs.
    """
    conn = Connection(port)
    times: list[list[float]] = [[] for _ in requests]
    try:
        for _ in range(rounds):
            for i, (method, path, body) in enumerate(requests):
                start = time.perf_counter()
                status, payload = await conn.request(method, path, body)
                times[i].append(time.perf_counter() - start)
                if status != 200:
                    raise RuntimeError(f"{method} {path} answered {status}: {payload[:300]!r}")
                if must_run and conn.kept != "ran":
                    raise RuntimeError(f"{method} {path} was answered without a run (X-Kept: "
                                       f"{conn.kept or 'none'}): the bench would time no run")
    finally:
        conn.close()
    return times


async def load(port: int, clients: int, seconds: float,
               pick: Callable[[int], tuple[str, bytes]],
               timeout: float = 30.0) -> tuple[list[Outcome], float]:
    """`clients` connections POST /api/graph back to back for `seconds`.

    pick(n) gives the n-th request's (kind, body); n counts across all clients. Returns every
    outcome, including those still in flight at the end (they are awaited), and the deadline.
    """
    outcomes: list[Outcome] = []
    counter = iter(range(1 << 62))
    deadline = time.monotonic() + seconds

    async def client() -> None:
        conn = Connection(port)
        try:
            while time.monotonic() < deadline:
                kind, body = pick(next(counter))
                start = time.monotonic()
                try:
                    status, _ = await asyncio.wait_for(
                        conn.request("POST", "/api/graph", body), timeout)
                except (TimeoutError, OSError, asyncio.IncompleteReadError):
                    status = 0
                outcomes.append(Outcome(kind, status, time.monotonic() - start, start))
        finally:
            conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return outcomes, deadline


def body(code: str) -> bytes:
    return json.dumps({"code": code, "device": "cpu"}).encode()


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run on uvloop when it is installed (it comes with uvicorn[standard])."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)
