"""GET /api/rooms/{code}/events on a real HTTP server: what each screen is sent, and when.

Two uvicorn servers share one store, as two processes (SQLite) or two replicas (Redis) would.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from gradient_lab.web.routes import rooms as routes
from tests.browser.servers import free_port
from tests.helpers import assert_error
from tests.rooms.conftest import rooms_app

ASK = {"kind": "choice", "prompt": "room.q.first", "params": {}, "choices": ["SGD", "Adam"],
       "answer": "Adam"}


class Server:
    """The rooms app under uvicorn, in a thread of this process."""

    def __init__(self, setting: str, **settings: object) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(rooms_app(setting, **settings),
                                                    host="127.0.0.1", port=port,
                                                    log_level="warning", proxy_headers=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def servers(store_setting: str) -> Iterator[tuple[str, str]]:
    one, two = Server(store_setting), Server(store_setting)
    try:
        yield one.url, two.url
    finally:
        one.stop()
        two.stop()


class Events:
    """One screen's event stream, read event by event with a deadline."""

    def __init__(self, client: httpx.Client, url: str, **headers: str) -> None:
        self._context = client.stream("GET", url, headers=headers,
                                      timeout=httpx.Timeout(5.0, read=5.0))
        self.response = self._context.__enter__()
        self._lines = self.response.iter_lines()

    def next(self) -> tuple[str, Any]:
        """The next event: (name, data), or ("ping", None) for a comment."""
        fields: dict[str, str] = {}
        for line in self._lines:
            if line.startswith(":"):
                return "ping", None
            if not line:
                if "event" in fields:
                    return fields["event"], json.loads(fields["data"])
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        return "closed", None

    def until(self, name: str, seconds: float = 3.0, **where: object) -> tuple[Any, float]:
        """The first `name` event whose data has `where`, and how long it took to come."""
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            got, data = self.next()
            if got == name and all(data.get(k) == v for k, v in where.items()):
                return data, time.monotonic() - start
            if got == "closed":
                break
        pytest.fail(f"no {name} event with {where} within {seconds} s")

    def close(self) -> None:
        self._context.__exit__(None, None, None)


def _start(client: httpx.Client, base: str) -> str:
    response = client.post(f"{base}/api/rooms", json={})
    assert response.status_code == 201, response.text
    code: str = response.json()["code"]
    return code


def test_a_stream_starts_with_the_room_and_is_not_held_back_by_gzip(
        servers: tuple[str, str]) -> None:
    base, _ = servers
    with httpx.Client() as teacher:
        code = _start(teacher, base)
        events = Events(teacher, f"{base}/api/rooms/{code}/events", **{"Accept-Encoding": "gzip"})
        headers = events.response.headers
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["cache-control"] == "no-cache" and headers["x-accel-buffering"] == "no"
        assert "content-encoding" not in headers
        room, seconds = events.until("room")
        assert room["code"] == code and room["question"] is None and seconds < 1
        assert events.next() == ("crowd", {"students": 0, "answered": 0, "right": None,
                                           "bars": None, "taps": None, "nicknames": []})
        events.close()


def test_students_on_another_server_follow_the_teacher_within_a_second(
        servers: tuple[str, str]) -> None:
    here, there = servers
    with httpx.Client() as teacher, httpx.Client() as student:
        code = _start(teacher, here)
        student.post(f"{there}/api/rooms/{code}/join", json={})
        events = Events(student, f"{there}/api/rooms/{code}/events")
        events.until("room")
        for step in range(1, 6):
            address = f"/#ex=S2&step={step}"
            assert teacher.post(f"{here}/api/rooms/{code}/address",
                                json={"address": address}).status_code == 200
            _, seconds = events.until("room", address=address)
            assert seconds < 1.0
        events.close()


def test_only_the_teacher_sees_answers_and_names_before_the_reveal(
        servers: tuple[str, str]) -> None:
    here, there = servers
    with httpx.Client() as teacher, httpx.Client() as student:
        code = _start(teacher, here)
        sid = student.post(f"{there}/api/rooms/{code}/join",
                           json={"nickname": "<img src=x onerror=f()>"}).json()["student"]
        qid = teacher.post(f"{here}/api/rooms/{code}/question", json=ASK).json()["id"]
        lead = Events(teacher, f"{there}/api/rooms/{code}/events")
        seen = Events(student, f"{here}/api/rooms/{code}/events")
        question = seen.until("room")[0]["question"]
        assert question == {"id": qid, "kind": "choice", "prompt": "room.q.first", "params": {},
                            "choices": ["SGD", "Adam"], "revealed": False, "answer": None,
                            "low": None, "high": None, "x_range": None, "y_range": None}
        student.post(f"{there}/api/rooms/{code}/answer",
                     json={"student": sid, "question": qid, "value": "SGD"})
        crowd = lead.until("crowd", answered=1)[0]
        assert crowd["nicknames"] == ["<img src=x onerror=f()>"]
        assert [(b["label"], b["count"]) for b in crowd["bars"]] == [("SGD", 1), ("Adam", 0)]
        assert seen.until("crowd", answered=1)[0] == {
            "students": 1, "answered": 1, "right": None, "bars": None, "taps": None,
            "nicknames": None}
        teacher.post(f"{here}/api/rooms/{code}/reveal", json={})
        revealed = seen.until("room")[0]["question"]
        assert (revealed["revealed"], revealed["answer"]) == (True, "Adam")
        after = seen.until("crowd")[0]
        assert after["right"] == 0 and [b["right"] for b in after["bars"]] == [False, True]
        lead.close()
        seen.close()


def test_ending_the_room_ends_every_stream(servers: tuple[str, str]) -> None:
    here, there = servers
    with httpx.Client() as teacher, httpx.Client() as student:
        code = _start(teacher, here)
        events = Events(student, f"{there}/api/rooms/{code}/events")
        events.until("room")
        teacher.post(f"{here}/api/rooms/{code}/end", json={})
        events.until("ended")
        assert events.next() == ("closed", None)
        events.close()
        # A screen that connects after the end (on any replica) hears that it ended.
        assert_error(student.get(f"{there}/api/rooms/{code}/events"), 410, "room_ended")


def test_a_quiet_stream_is_kept_open_with_a_comment(servers: tuple[str, str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "PING_SECONDS", 0.3)
    base, _ = servers
    with httpx.Client() as teacher:
        code = _start(teacher, base)
        events = Events(teacher, f"{base}/api/rooms/{code}/events")
        events.until("crowd")
        start = time.monotonic()
        assert events.next() == ("ping", None)
        assert 0.2 < time.monotonic() - start < 2
        events.close()


def test_a_stream_ends_after_a_while_and_the_next_starts_with_the_whole_room(
        servers: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "STREAM_SECONDS", 0.5)
    base, _ = servers
    with httpx.Client() as teacher:
        code = _start(teacher, base)
        teacher.post(f"{base}/api/rooms/{code}/address", json={"address": "/descent"})
        first = Events(teacher, f"{base}/api/rooms/{code}/events")
        assert first.until("room")[0]["address"] == "/descent"
        first.until("crowd")
        start = time.monotonic()
        assert first.next() == ("ping", None)  # the last word before the stream ends
        assert first.next() == ("closed", None) and time.monotonic() - start < 2
        first.close()
        again = Events(teacher, f"{base}/api/rooms/{code}/events")
        assert again.until("room")[0]["address"] == "/descent"
        again.close()
