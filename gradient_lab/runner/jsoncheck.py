"""Whether bytes a child sent are JSON, and of what shape: run in a process of its own when they
hold many values (frames.py), so that parsing them never holds the server's event loop."""

from __future__ import annotations

import orjson


def shape(body: bytes) -> str | None:
    """"object" for a JSON object, "value" for any other JSON, None for what is not JSON."""
    try:
        value = orjson.loads(body)
    except (orjson.JSONDecodeError, RecursionError):
        return None
    return "object" if isinstance(value, dict) else "value"
