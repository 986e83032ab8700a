"""Whether bytes a child sent are JSON, and of what shape: run in a process of its own when they
hold many values (frames.py), so that checking them never holds the server's event loop.

simdjson validates the whole document (structure, numbers, UTF-8) without building Python
objects: 900,000 empty lists in 10 ms where a full parse takes 380 ms (measured here).
"""

from __future__ import annotations

import simdjson

_parser = simdjson.Parser()  # one per process: it keeps its buffers between documents


def shape(body: bytes) -> str | None:
    """"object" for a JSON object, "value" for any other JSON, None for what is not JSON."""
    try:
        document = _parser.parse(body)
    except (ValueError, RuntimeError):  # bad structure, number or UTF-8; nested too deep
        return None
    found = "object" if isinstance(document, simdjson.Object) else "value"
    del document  # the parser's buffers are free for the next document only once it has gone
    return found
