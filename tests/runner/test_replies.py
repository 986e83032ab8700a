"""A child's reply as a program that found its reply pipe writes it (tests/runner/test_pool.py
has the rest): a header no JSON reader can take apart, and a reply of nothing. Each is the same
clean 502 as garbage, never a 500 or an empty 200."""

from __future__ import annotations

import asyncio
import threading

import pytest

from gradient_lab.errors import RunnerFailed
from gradient_lab.runner import frames
from gradient_lab.runner.pool.pool import Pool
from tests.runner.test_pool import _OPEN, REPLY_PIPE, _fails, _whole_again
from tests.runner.test_pool import pool as pool  # noqa: F401 - the module's fixture

# The program says its own reply and ends before the lab can: the reply is what it wrote.
_THEN_QUIT = "os._exit(0)\n"


@pytest.mark.parametrize("nested", [b"[" * 10_000, b'{"kind": ' + b"[" * 10_000])
def test_a_header_nested_past_the_recursion_limit_is_a_clean_502(pool: Pool,  # noqa: F811
                                                                  nested: bytes) -> None:
    error = _fails(pool, _OPEN + REPLY_PIPE + f"os.write(reply, {nested!r} + b'\\n')\n"
                   + _THEN_QUIT, RunnerFailed)
    assert error.status == 502 and "header" in error.message
    _whole_again(pool)


def test_an_empty_reply_is_a_502_not_an_empty_200(pool: Pool) -> None:  # noqa: F811
    frames = b'{"kind": "data", "bytes": 0}\n{"kind": "end", "bytes": 0}\n'
    error = _fails(pool, _OPEN + REPLY_PIPE + f"os.write(reply, {frames!r})\n" + _THEN_QUIT,
                   RunnerFailed)
    assert error.status == 502 and "empty" in error.message
    _whole_again(pool)


def test_a_reply_of_millions_of_tiny_values_is_checked_off_the_event_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Within the byte limit, [[],[],...] costs seconds and a gigabyte to parse: the server's
    # one event loop must not do it (every other request would wait), and a small reply,
    # most of them, is not worth a thread.
    parsed_on: list[tuple[int, str]] = []
    check = frames._frame

    def watched(header: dict[str, object], body: bytes) -> frames.Frame:
        parsed_on.append((len(body), threading.current_thread().name))
        return check(header, body)

    monkeypatch.setattr(frames, "_frame", watched)
    large = b"[" + b"[]," * 2_000_000 + b"[]]"
    small = b'{"nodes": []}'
    reader = frames.FrameReader(32 << 20, RunnerFailed("too large"))
    stream = b"".join(b'{"kind": "data", "bytes": %d}\n%s' % (len(body), body)
                      for body in (large, small))

    async def read() -> list[bytes]:
        return [(await frames.checked(header, body)).body for header, body in
                reader.feed(stream)]

    assert asyncio.run(read()) == [large, small]
    loop_thread = threading.current_thread().name
    assert [(size, thread == loop_thread) for size, thread in parsed_on] == \
        [(len(large), False), (len(small), True)]
