"""The server's log lines: uvicorn's access line for a probe is dropped and any other kept;
JSON lines carry an access line's parts; a plain `uvicorn gradient_lab.main:app` (no
uvicorn_log_config) still gets the app's own lines."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from gradient_lab.logs import JsonLines, LeaveOutProbes, attach
from gradient_lab.settings import Settings


def _access(path: str, status: int = 200) -> logging.LogRecord:
    # As uvicorn's httptools and h11 protocols log each request (uvicorn/protocols/http).
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                             '%s - "%s %s HTTP/%s" %d',
                             ("127.0.0.1:5000", "GET", path, "1.1", status), None)


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics", "/healthz?x=1"])
def test_a_probe_leaves_no_access_line(path: str) -> None:
    assert LeaveOutProbes().filter(_access(path)) is False


@pytest.mark.parametrize("path", ["/", "/api/graph", "/healthzz", "/static/healthz"])
def test_every_other_request_does(path: str) -> None:
    assert LeaveOutProbes().filter(_access(path)) is True


def test_a_json_line_carries_the_access_lines_parts() -> None:
    line = json.loads(JsonLines().format(_access("/descent?x=1", 404)))
    assert line["logger"] == "uvicorn.access" and line["level"] == "info"
    assert (line["method"], line["path"], line["status"]) == ("GET", "/descent?x=1", 404)
    assert line["message"] == '127.0.0.1:5000 - "GET /descent?x=1 HTTP/1.1" 404'
    assert line["time"].endswith("Z")


def test_a_json_line_keeps_a_traceback_and_chinese_as_it_is() -> None:
    try:
        raise ValueError("梯度")
    except ValueError:
        record = logging.getLogger("gradient_lab.x").makeRecord(
            "gradient_lab.x", logging.ERROR, __file__, 1, "失败 %s", ("一",), None)
        record.exc_info = sys.exc_info()
    line = json.loads(JsonLines().format(record))
    assert line["message"] == "失败 一" and "ValueError: 梯度" in line["error"]


def test_attach_gives_the_apps_loggers_a_handler_at_the_level_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = logging.getLogger("gradient_lab")
    monkeypatch.setattr(app, "handlers", [])
    monkeypatch.setattr(app, "level", logging.NOTSET)
    monkeypatch.setattr(app, "propagate", True)
    access = logging.getLogger("uvicorn.access")
    monkeypatch.setattr(access, "filters", [])
    attach(Settings(log_level="warning", log_format="json"))
    assert len(app.handlers) == 1 and isinstance(app.handlers[0].formatter, JsonLines)
    assert app.level == logging.WARNING
    assert any(isinstance(f, LeaveOutProbes) for f in access.filters)
    attach(Settings())  # a second app in the same process adds nothing
    assert len(app.handlers) == 1 and len(access.filters) == 1
