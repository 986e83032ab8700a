"""The smaller faults at the API's door, sent as an attacker would: text that is no text, and
a page whose name was re-pointed at the lab (DNS rebinding). Each is refused in the one
envelope before anything runs."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.settings import load_settings
from tests.helpers import assert_error
from tests.rooms.conftest import rooms_app

S2 = EXAMPLES["S2"].program
JSON = {"content-type": "application/json"}


@pytest.mark.parametrize("text", [r"\ud800", r"\udfff", r"\ud83d x", r"x\ude00",
                                  r"\\\ud800", r"\ud83d\ud83d\ude00"])
def test_half_a_surrogate_pair_in_program_text_is_a_422(client: TestClient, text: str) -> None:
    body = '{"code": "x = 1  # ' + text + '"}'
    error = assert_error(client.post("/api/graph", content=body, headers=JSON), 422,
                         "request_invalid")
    assert "surrogate" in str(error["message"])


@pytest.mark.parametrize("path", ["/api/descent", "/api/rooms/K7MXQ2PD/join"])
def test_half_a_surrogate_pair_anywhere_in_a_request_is_a_422(client: TestClient,
                                                              path: str) -> None:
    body = '{"surface": "\\udbff", "nickname": "\\udbff"}'
    assert_error(client.post(path, content=body, headers=JSON), 422, "request_invalid")


@pytest.mark.parametrize("text", [r"\ud83d\ude00", r"\\ud800", r"\u00e9"])
def test_whole_characters_and_escaped_backslashes_run(client: TestClient, text: str) -> None:
    body = '{"code": "' + S2.replace("\n", "\\n") + '\\nprint(\\"' + text + '\\")"}'
    response = client.post("/api/graph", content=body, headers=JSON)
    assert response.status_code == 200, response.text


def test_a_program_that_prints_half_a_pair_gets_its_output_with_a_stand_in(
        client: TestClient) -> None:
    # The program makes the character itself, at run time: no request holds it.
    response = client.post("/api/graph", json={"code": 'print("a" + chr(0xD800) + "b")'})
    assert response.status_code == 200, response.text
    assert response.json()["stdout"] == "a\ufffdb\n"


def test_a_program_that_raises_half_a_pair_gets_a_400_that_says_so(client: TestClient) -> None:
    response = client.post("/api/graph", json={"code": 'raise ValueError("x" + chr(0xDC00))'})
    assert "x\ufffd" in str(assert_error(response, 400, "program_error")["message"])


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "192.168.1.5.evil.example",
                                  "localhost.evil.example"])
def test_a_page_whose_name_was_re_pointed_at_the_lab_is_refused(client: TestClient,
                                                                host: str) -> None:
    # The browser sends its own name as both Origin and Host: the cross-site check is passed.
    same_site = {"host": host, "origin": f"http://{host}"}
    error = assert_error(client.post("/api/graph", json={"code": S2}, headers=same_site), 403,
                         "forbidden")
    assert error["hint_key"] == "hint.unknown_host"
    assert_error(client.post("/api/rooms", json={}, headers=same_site), 403, "forbidden")
    assert_error(client.get("/api/rooms/K7MXQ2PD/qr.svg", headers={"host": host}), 403,
                 "forbidden")


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "[::1]:8000", "10.0.4.2", "localhost:8000",
                                  "lab.localhost", socket.gethostname(),
                                  f"{socket.gethostname()}.local:8000", "testserver"])
def test_the_labs_own_names_and_any_address_are_served(client: TestClient, host: str) -> None:
    response = client.post("/api/rooms", json={}, headers={"host": host})
    assert response.status_code == 201, response.text
    assert response.json()["link"].startswith(f"http://{host.lower()}/")


def test_pages_are_served_under_any_name(client: TestClient) -> None:
    assert client.get("/", headers={"host": "evil.example"}).status_code == 200


def test_a_body_full_of_escapes_is_checked_in_linear_time(client: TestClient) -> None:
    pairs = "\\ud83d\\ude00" * 20_000  # 240 KB: within the request limit
    slashes = "\\\\" * 60_000 + "\\ud800"  # a long run of escaped backslashes, then a lone one
    for text, status in ((pairs, 422), (slashes, 422)):
        start = time.monotonic()
        response = client.post("/api/rooms/K7MXQ2PD/join",
                               content='{"nickname": "' + text + '"}', headers=JSON)
        assert response.status_code == status, response.text[:200]
        assert time.monotonic() - start < 1.0


def test_the_public_urls_name_is_one_of_the_labs(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("APP_PUBLIC_URL", "http://lab.school.example:8000")
    load_settings.cache_clear()
    try:
        with TestClient(rooms_app(str(tmp_path / "rooms.sqlite3"))) as lab:
            served = lab.post("/api/rooms", json={}, headers={"host": "lab.school.example"})
            assert served.status_code == 201, served.text
            assert_error(lab.post("/api/rooms", json={}, headers={"host": "evil.example"}),
                         403, "forbidden")
    finally:
        monkeypatch.undo()
        load_settings.cache_clear()
