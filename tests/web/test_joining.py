"""The join link a class is given: an address the students' devices can open, or why none."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from starlette.requests import Request

from gradient_lab.main import create_app
from gradient_lab.rooms.qr import qr_svg
from gradient_lab.settings import Settings, get_settings
from gradient_lab.web import joining
from gradient_lab.web.joining import JoinBase, join_base


def _opened(url: str) -> Request:
    """A request for `url`, as a browser that opened it sends it."""
    scheme, rest = url.split("://")
    host = rest.split("/")[0]
    return Request({"type": "http", "scheme": scheme, "method": "POST", "path": "/api/rooms",
                    "root_path": "", "query_string": b"", "server": None,
                    "headers": [(b"host", host.encode())]})


@pytest.fixture(autouse=True)
def outside_a_container(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(joining, "_CONTAINER_MARKS", ())
    monkeypatch.setattr(joining, "lan_addresses", lambda: ["192.168.1.20", "10.0.0.5"])


def test_a_laptop_listening_on_every_interface_gives_its_lan_address_for_loopback() -> None:
    for opened in ("http://127.0.0.1:8000/", "http://localhost:8000/", "http://[::1]:8000/"):
        assert join_base(_opened(opened), Settings(host="0.0.0.0")) == \
            JoinBase("http://192.168.1.20:8000/")


def test_a_server_listening_only_on_loopback_says_no_device_can_open_its_link() -> None:
    assert join_base(_opened("http://127.0.0.1:8000/"), Settings(host="127.0.0.1")) == \
        JoinBase("http://127.0.0.1:8000/", "loopback")


def test_a_machine_with_no_lan_says_so_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(joining, "lan_addresses", lambda: [])
    assert join_base(_opened("http://localhost:8000/"), Settings(host="0.0.0.0")).unreachable \
        == "loopback"


def test_an_address_the_teacher_opened_from_the_network_is_the_link() -> None:
    for opened in ("http://192.168.1.20:8000/", "https://lab.school.example/"):
        assert join_base(_opened(opened), Settings(host="0.0.0.0")) == JoinBase(opened)


def test_in_a_container_loopback_is_not_replaced_by_the_containers_own_address(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(joining, "_CONTAINER_MARKS", (__file__,))  # a file that exists
    assert join_base(_opened("http://localhost:8000/"), Settings(host="0.0.0.0")) == \
        JoinBase("http://localhost:8000/", "container")


def test_app_public_url_is_the_link_wherever_the_teacher_opened() -> None:
    settings = Settings(host="0.0.0.0", public_url="http://192.168.5.9:8000")
    assert join_base(_opened("http://localhost:8000/"), settings) == \
        JoinBase("http://192.168.5.9:8000/")


def test_the_room_and_its_qr_code_carry_the_lan_link_and_the_panel_hears_why_not() -> None:
    app = create_app()
    app.dependency_overrides[get_settings] = lambda: Settings(host="0.0.0.0")
    with TestClient(app, base_url="http://127.0.0.1:8000") as teacher:
        started = teacher.post("/api/rooms", json={}).json()
        code = started["code"]
        assert (started["link"], started["unreachable"]) == \
            (f"http://192.168.1.20:8000/?join={code}", None)
        qr = teacher.get(f"/api/rooms/{code}/qr.svg")
        assert qr.content == qr_svg(started["link"])
        app.dependency_overrides[get_settings] = lambda: Settings(host="127.0.0.1")
        alone = teacher.post("/api/rooms", json={}).json()
        assert (alone["link"], alone["unreachable"]) == \
            (f"http://127.0.0.1:8000/?join={alone['code']}", "loopback")
