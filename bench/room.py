"""A class in one room: `python bench/room.py [--students 50] [--workers 2] [--store URL]`.

Starts `python -m gradient_lab` on a free port of 127.0.0.1 with APP_WORKERS uvicorn processes
sharing one room store (a fresh SQLite file, or --store redis://...), starts a room as its teacher,
and lets `--students` students join it, each with its own event stream (what a page's EventSource
reads) and its own connection for answers. Then:

1. Follow: the teacher moves `--moves` times (POST /address, as a page stepping through backward
   does, a few a second); for each move, the time until the LAST student's stream carried it.
   The students' streams land on both processes, so most changes cross from one to the other.
2. Answers: for each of `--questions` questions, every student answers `--repeats` times at once
   (a repeat replaces the answer before). Answers per second the room takes, and a check that
   none was lost or counted twice: the store's answers must be exactly each student's last one,
   and the teacher's stream must say every student answered.

Prints p50/p99 of the last student's delay beside its target (p99 <= 1 s), the answers per
second, and PASS or MISS for each. Only 127.0.0.1 is contacted; every wait has a deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import loadgen  # noqa: E402
from server import free_port, quantile, start_server, stop  # noqa: E402

from gradient_lab.rooms.service import open_rooms  # noqa: E402

DEADLINE = 10.0  # seconds a move or a round of answers may take before the run gives up


class Stream:
    """One screen's event stream, read on a raw connection; notes when each event arrived."""

    def __init__(self, port: int, code: str, cookie: str = "") -> None:
        self.port, self.code, self.cookie = port, code, cookie
        self.addresses: dict[str, float] = {}  # address -> when it arrived
        self.crowd: dict[str, Any] = {}
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        cookie = f"Cookie: room_teacher={self.cookie}\r\n" if self.cookie else ""
        writer.write(f"GET /api/rooms/{self.code}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"Accept: text/event-stream\r\n{cookie}\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the event stream answered {head[:40]!r}")
        self._writer = writer
        self._task = asyncio.create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        buffer = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                return
            buffer += (await reader.readexactly(size + 2))[:-2]
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                self._take(event.decode(), time.perf_counter())

    def _take(self, event: str, now: float) -> None:
        fields = dict(line.split(": ", 1) for line in event.split("\n") if ": " in line)
        if fields.get("event") == "room":
            self.addresses.setdefault(json.loads(fields["data"])["address"], now)
        elif fields.get("event") == "crowd":
            self.crowd = json.loads(fields["data"])

    def close(self) -> None:
        if self._task:
            self._task.cancel()
        self._writer.close()


def _start_room(port: int) -> tuple[str, str]:
    """Start a room as its teacher: its code and the teacher's token (from the cookie)."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/rooms", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        code = json.load(response)["code"]
        token = response.headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    return code, token


async def _post(conn: loadgen.Connection, path: str, body: object, token: str = "") -> bytes:
    cookie = f"Cookie: room_teacher={token}\r\n" if token else ""
    status, payload = await asyncio.wait_for(
        conn.request("POST", path, json.dumps(body).encode(), cookie), DEADLINE)
    if status not in (200, 201):
        raise RuntimeError(f"POST {path} answered {status}: {payload[:300]!r}")
    return payload


async def _wait(condition: Callable[[], bool], what: str) -> None:
    """Until `condition` holds (the streams note arrival times themselves, so polling for it
    every 5 ms does not add to the delays measured)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not every stream got it within {DEADLINE} s")
        await asyncio.sleep(0.005)


async def _follow(port: int, code: str, token: str, streams: list[Stream],
                  moves: int) -> list[float]:
    """The last student's delay for each of the teacher's moves."""
    teacher = loadgen.Connection(port)
    delays = []
    try:
        for n in range(moves):
            address = f"/#ex=S2&step={n}&bench={time.time_ns()}"
            sent = time.perf_counter()
            await _post(teacher, f"/api/rooms/{code}/address", {"address": address}, token)
            await _wait(lambda a=address: all(a in s.addresses for s in streams), f"move {n}")
            delays.append(max(s.addresses[address] for s in streams) - sent)
            await asyncio.sleep(0.25)  # a teacher steps a few times a second, not back to back
    finally:
        teacher.close()
    return delays


async def _answers(port: int, code: str, token: str, students: list[str], lead: Stream,
                   store: str, questions: int, repeats: int) -> tuple[int, float, list[str]]:
    """(answers sent, seconds they took, problems found) over every question."""
    teacher = loadgen.Connection(port)
    conns = [loadgen.Connection(port) for _ in students]
    sent, seconds, problems = 0, 0.0, []
    try:
        async with open_rooms(store) as rooms:
            for q in range(questions):
                asked = await _post(teacher, f"/api/rooms/{code}/question", {
                    "kind": "number", "prompt": "room.q.grad", "params": {"label": "∂L/∂a"},
                    "answer": 14}, token)
                qid = json.loads(asked)["id"]

                async def student(n: int, sid: str, qid: str = qid) -> None:
                    for r in range(repeats):
                        await _post(conns[n], f"/api/rooms/{code}/answer",
                                    {"student": sid, "question": qid, "value": f"{n}.{r}"})

                start = time.perf_counter()
                await asyncio.gather(*(student(n, sid) for n, sid in enumerate(students)))
                seconds += time.perf_counter() - start
                sent += len(students) * repeats
                room = await rooms.store.get(code, time.time())
                last = {sid: repr(float(f"{n}.{repeats - 1}")) for n, sid in enumerate(students)}
                if room is None or room.answers != last:
                    held = len(room.answers) if room else 0
                    problems.append(f"question {q}: the store holds {held} answers, not each "
                                    f"student's last of {len(students)}")
                await _wait(lambda: _tallied(lead.crowd) == len(students), f"question {q}'s tally")
    finally:
        teacher.close()
        for conn in conns:
            conn.close()
    return sent, seconds, problems


def _tallied(crowd: dict[str, Any]) -> int:
    """How many answers the teacher's stream says there are: answered, if its bars agree."""
    bars = sum(bar["count"] for bar in crowd.get("bars") or [])
    return int(crowd.get("answered", -1)) if bars == crowd.get("answered") else -1


async def _class(port: int, store: str, args: argparse.Namespace) -> bool:
    code, token = _start_room(port)
    joiner = loadgen.Connection(port)
    students = [json.loads(await _post(joiner, f"/api/rooms/{code}/join", {}))["student"]
                for _ in range(args.students)]
    joiner.close()
    streams = [Stream(port, code) for _ in students]
    lead = Stream(port, code, token)
    for stream in [*streams, lead]:
        await stream.open()
    await _wait(lambda: all("" in s.addresses for s in streams), "the first event")
    print(f"room {code}: {args.students} students joined, each with an event stream", flush=True)

    delays = await _follow(port, code, token, streams, args.moves)
    sent, seconds, problems = await _answers(port, code, token, students, lead, store,
                                             args.questions, args.repeats)
    for stream in [*streams, lead]:
        stream.close()

    p50, p99 = quantile(delays, 0.5), quantile(delays, 0.99)
    rate = sent / seconds
    print(f"\n  follow: {len(delays)} moves, last of {args.students} students: p50 "
          f"{p50 * 1e3:.0f} ms, p99 {p99 * 1e3:.0f} ms, max {max(delays) * 1e3:.0f} ms")
    print(f"  answers: {sent} in {seconds:.2f} s = {rate:.0f}/s "
          f"({args.questions} questions x {args.students} students x {args.repeats} each)")
    for problem in problems:
        print(f"  lost or doubled: {problem}")
    checks = [(p99 <= 1.0, f"last student's p99 {p99 * 1e3:.0f} ms (target <= 1000)"),
              (not problems, f"every answer counted once: {args.questions - len(problems)} of "
                             f"{args.questions} questions exact (target all)")]
    print()
    for ok, text in checks:
        print(f"  {'PASS' if ok else 'MISS'}  {text}")
    return all(ok for ok, _ in checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn processes (default 2)")
    parser.add_argument("--store", default="", help="APP_ROOM_STORE (default: a fresh SQLite "
                                                    "file); e.g. redis://127.0.0.1:6379/0")
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile("w+") as log:
        store = args.store or str(Path(folder) / "rooms.sqlite3")
        port = free_port()
        server = start_server(port, log, {"APP_ROOM_STORE": store,
                                          "APP_WORKERS": str(args.workers),
                                          "APP_ROOM_STUDENTS_MAX": str(max(200, args.students))})
        print(f"server on 127.0.0.1:{port}, {args.workers} processes, store {store}", flush=True)
        try:
            ok = loadgen.run(_class(port, store, args))
        except BaseException:
            log.seek(0)
            print(f"--- server output ---\n{log.read()[-5000:]}", file=sys.stderr)
            raise
        finally:
            stop(server)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
