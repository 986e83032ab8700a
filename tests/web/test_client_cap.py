"""One client has a cap on programs in flight; other clients and a class sharing one run are
not touched by it (issue 26 item 1: a student who keeps six sleeping programs blocked a class)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from gradient_lab.main import create_app
from gradient_lab.settings import Settings, get_settings
from tests.helpers import assert_error

SLEEPER = "import time\ntime.sleep(1.5)\nprint('woke')\n"


@pytest.fixture(scope="module")
def proxy() -> Iterator[TestClient]:
    """The server behind the shipped proxy (10.0.0.254), which says who each student is."""
    app = create_app()
    app.dependency_overrides[get_settings] = lambda: Settings(client_programs=3,
                                                              trusted_proxies="10.0.0.254")
    with TestClient(app, client=("10.0.0.254", 40000)) as client:
        yield client


class Student:
    def __init__(self, proxy: TestClient, address: str) -> None:
        self.proxy, self.address = proxy, address

    def post(self, path: str, json: dict[str, object]) -> httpx.Response:
        return self.proxy.post(path, json=json, headers={"X-Forwarded-For": self.address})


def _sleeping(student: Student, code: str, replies: list[httpx.Response]) -> threading.Thread:
    thread = threading.Thread(target=lambda: replies.append(
        student.post("/api/graph", json={"code": code})))
    thread.start()
    return thread


def test_a_clients_fourth_program_in_flight_is_a_429_and_others_run_meanwhile(
        proxy: TestClient) -> None:
    greedy, other = Student(proxy, "192.168.1.31"), Student(proxy, "192.168.1.32")
    codes = [f"# {uuid.uuid4().hex}\n{SLEEPER}" for _ in range(3)]
    replies: list[httpx.Response] = []
    threads = [_sleeping(greedy, code, replies) for code in codes]
    try:
        threading.Event().wait(0.5)  # all three are in flight
        fourth = greedy.post("/api/graph", json={"code": f"# {uuid.uuid4().hex}\nx = 1\n"})
        assert_error(fourth, 429, "too_many_programs")
        assert fourth.headers["retry-after"] == "2"
        # Someone else is not held back; the greedy one asking for a run it already has in
        # flight joins it (as a class following its teacher does) instead of being refused.
        assert other.post("/api/graph", json={"code": "x = 2\nprint(x)\n"}).status_code == 200
        joined = greedy.post("/api/graph", json={"code": codes[0]})
        assert (joined.status_code, joined.headers["x-kept"]) == (200, "shared")
    finally:
        for thread in threads:
            thread.join()
    assert [r.status_code for r in replies] == [200] * 3
    # Their runs over, the client may run again.
    again = greedy.post("/api/graph", json={"code": f"# {uuid.uuid4().hex}\nx = 3\n"})
    assert again.status_code == 200
