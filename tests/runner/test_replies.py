"""A child's reply as a program that found its reply pipe writes it (tests/runner/test_pool.py
has the rest): a header no JSON reader can take apart, and a reply of nothing. Each is the same
clean 502 as garbage, never a 500 or an empty 200."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, Future

import pytest

from gradient_lab.errors import RunnerFailed, TooLarge
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


def test_a_reply_of_many_tiny_values_is_checked_in_another_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # [[],[],...] costs a checker most for its bytes: past the values the loop checks in a few
    # ms, the server's one event loop must not do it (every other request would wait), nor its
    # threads (the checker holds the GIL); a small reply, most of them, is checked where it is.
    sent_away: list[int] = []
    checker = frames._checker()

    class Recording(Executor):
        def submit(self, fn: Callable[..., object], /, *args: object,
                   **kwargs: object) -> Future[object]:
            sent_away.append(len(args[0]))  # type: ignore[arg-type]
            return checker.submit(fn, *args, **kwargs)

    monkeypatch.setattr(frames, "_checker", Recording)
    large = b"[" + b"[]," * (frames._VALUES_ON_THE_LOOP // 2) + b"[]]"  # two values each
    small = b'{"nodes": []}'
    stream = b"".join(b'{"kind": "data", "bytes": %d}\n%s' % (len(body), body)
                      for body in (large, small, large[:-1]))

    async def read() -> list[bytes]:
        reader = frames.FrameReader(32 << 20, RunnerFailed("too large"))
        return [(await frames.checked(header, body)).body for header, body in
                reader.feed(stream)]

    with pytest.raises(RunnerFailed, match="not JSON"):  # the third, cut short
        asyncio.run(read())
    assert sent_away == [len(large), len(large) - 1]  # the small one was checked here


def test_a_reply_of_more_values_than_any_lesson_holds_is_refused_uncounted_by_a_parser(
        ) -> None:
    reader = frames.FrameReader(32 << 20, RunnerFailed("too large"))
    body = b"[" + b"[]," * 2_000_000 + b"[]]"  # 6 MB, seconds and a gigabyte to parse
    ((header, checked),) = reader.feed(b'{"kind": "data", "bytes": %d}\n%s' % (len(body), body))
    with pytest.raises(TooLarge, match="more than 2,000,000 values"):
        asyncio.run(frames.checked(header, checked))
