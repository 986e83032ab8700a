"""The one check for the error envelope, used by every error case of every endpoint."""

from __future__ import annotations

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
