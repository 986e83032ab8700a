from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from helpers import assert_error
from pydantic import BaseModel

from gradient_lab import i18n
from gradient_lab.errors import ProgramError
from gradient_lab.main import create_app

ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


class _Echo(BaseModel):
    count: int


def _app_with_failing_routes() -> FastAPI:
    app = create_app()

    @app.get("/boom/program")
    def program() -> None:
        raise ProgramError("NameError: name 'torch' is not defined", line=3,
                           hint_key="hint.missing_import")

    @app.get("/boom/crash")
    def crash() -> None:
        raise RuntimeError("a bug")

    @app.post("/boom/echo")
    def echo(body: _Echo) -> _Echo:
        return body

    return app


@pytest.fixture(scope="module")
def boom() -> Iterator[TestClient]:
    # raise_server_exceptions=False: see the 500 a browser would get, not the traceback.
    with TestClient(_app_with_failing_routes(), raise_server_exceptions=False) as c:
        yield c


def test_404_uses_the_envelope(client: TestClient) -> None:
    error = assert_error(client.get("/missing"), 404, "not_found")
    assert error["hint"] is None


def test_405_uses_the_envelope_and_names_allowed_methods(client: TestClient) -> None:
    response = client.post("/healthz")
    assert_error(response, 405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


def test_app_error_keeps_its_status_type_line_and_hint_key(boom: TestClient) -> None:
    error = assert_error(boom.get("/boom/program"), 400, "program_error")
    assert error["message"] == "NameError: name 'torch' is not defined"
    assert error["line"] == 3
    assert error["hint_key"] == "hint.missing_import"


def test_app_error_hint_is_english_by_default(boom: TestClient) -> None:
    error = assert_error(boom.get("/boom/program"), 400, "program_error")
    assert error["hint"] == i18n.text("hint.missing_import", "en")
    assert "import torch" in str(error["hint"])


def test_app_error_hint_is_chinese_for_a_zh_cn_browser(boom: TestClient) -> None:
    error = assert_error(boom.get("/boom/program", headers=ZH), 400, "program_error")
    assert error["hint"] == i18n.text("hint.missing_import", "zh-CN")
    assert "导入" in str(error["hint"])


def test_invalid_body_gives_422_naming_the_field(boom: TestClient) -> None:
    error = assert_error(boom.post("/boom/echo", json={"count": "many"}), 422, "request_invalid")
    assert "count" in str(error["message"])
    assert error["hint"] == i18n.text("hint.request_invalid", "en")


def test_unexpected_exception_gives_a_generic_500(boom: TestClient) -> None:
    error = assert_error(boom.get("/boom/crash"), 500, "internal")
    assert "a bug" not in str(error["message"])
