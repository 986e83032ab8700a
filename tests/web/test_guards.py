"""The API's door: JSON only, bounded, and from the lab's own pages (issue 17).

Any page a student opens could make their browser post to a lab on their laptop or classroom
network: a form or text/plain body needs no preflight, and a cross-site request carries its
site's Origin. Each is refused before anything runs: no child is forked for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.main import create_app
from gradient_lab.settings import load_settings
from tests.helpers import assert_error

S2 = EXAMPLES["S2"].program


def _forked(client: TestClient) -> int:
    """Children forked so far, once the ready ones the server keeps are all there."""
    deadline = time.monotonic() + 10
    while True:
        runner = client.get("/healthz").json()["runner"]
        if runner["ready"] >= load_settings().runner_ready or time.monotonic() > deadline:
            return int(runner["forked"])
        time.sleep(0.05)


@pytest.mark.parametrize(("content", "kind"), [
    (b"code=import+torch", "application/x-www-form-urlencoded"),
    (S2.encode(), "text/plain"),
    (b'{"code": "import torch"}', "multipart/form-data; boundary=x"),
    (b'{"code": "import torch"}', None),
])
def test_a_body_that_is_not_json_is_a_415_and_runs_nothing(client: TestClient, content: bytes,
                                                           kind: str | None) -> None:
    before = _forked(client)
    headers = {} if kind is None else {"content-type": kind}
    assert_error(client.post("/api/graph", content=content, headers=headers), 415,
                 "unsupported_media_type")
    assert _forked(client) == before


def test_a_request_from_another_sites_page_is_a_403_and_runs_nothing(client: TestClient) -> None:
    before = _forked(client)
    response = client.post("/api/graph", json={"code": S2},
                           headers={"origin": "https://evil.example"})
    error = assert_error(response, 403, "forbidden")
    assert error["hint_key"] == "hint.cross_site"
    assert _forked(client) == before


def test_a_request_from_the_labs_own_page_runs(client: TestClient) -> None:
    response = client.post("/api/graph", json={"code": S2},
                           headers={"origin": "http://testserver"})
    assert response.status_code == 200, response.text


@pytest.fixture
def behind_a_proxy() -> Iterator[TestClient]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("APP_ALLOWED_ORIGINS", "https://lab.school.example, https://other.example")
        patch.setenv("APP_REQUEST_BYTES", "4096")
        load_settings.cache_clear()
        try:
            with TestClient(create_app()) as client:
                yield client
        finally:
            load_settings.cache_clear()


def test_an_origin_the_operator_lists_is_served(behind_a_proxy: TestClient) -> None:
    response = behind_a_proxy.post("/api/graph", json={"code": S2},
                                   headers={"origin": "https://lab.school.example"})
    assert response.status_code == 200, response.text
    assert_error(behind_a_proxy.post("/api/graph", json={"code": S2},
                                     headers={"origin": "https://lab.school.example.evil"}),
                 403, "forbidden")


def test_a_body_past_the_limit_is_a_413_before_it_is_read(behind_a_proxy: TestClient) -> None:
    big = {"code": "x = 1\n" * 2_000}
    error = assert_error(behind_a_proxy.post("/api/graph", json=big), 413, "too_large")
    assert "4,096 bytes" in str(error["message"])


def test_a_chunked_body_past_the_limit_is_a_413(behind_a_proxy: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"code": "'
        for _ in range(100):
            yield b"x = 1\\n" * 10
        yield b'"}'

    response = behind_a_proxy.post("/api/graph", content=chunks(),
                                   headers={"content-type": "application/json"})
    assert_error(response, 413, "too_large")


def test_pages_and_health_are_not_behind_the_door(client: TestClient) -> None:
    assert client.get("/", headers={"origin": "https://evil.example"}).status_code == 200
    assert client.get("/healthz").status_code == 200
