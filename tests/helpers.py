"""The one check for the error envelope, used by every error case of every endpoint, and the
plain-Python oracle that runner tests compare a program's output with."""

from __future__ import annotations

import contextlib
import io

import httpx


def assert_error(response: httpx.Response, status: int, type: str) -> dict[str, object]:
    """Assert `response` is the canonical {"error": {...}} envelope; return the error object."""
    assert response.status_code == status, response.text
    body = response.json()
    # "partial" rides beside the envelope when a program failed after building a graph.
    assert set(body) <= {"error", "partial"}, body
    error = body["error"]
    assert error["type"] == type, error
    assert isinstance(error["message"], str) and error["message"], error
    assert "line" in error and "hint" in error, error
    return error


def plain_stdout(program: str) -> str:
    """What the program prints in a plain Python session: the oracle, not the app."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(program, "<p>", "exec"), {"__name__": "__main__"})  # as `python p.py`
    return out.getvalue()
