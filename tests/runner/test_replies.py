"""A child's reply as a program that found its reply pipe writes it (tests/runner/test_pool.py
has the rest): a header no JSON reader can take apart, and a reply of nothing. Each is the same
clean 502 as garbage, never a 500 or an empty 200."""

from __future__ import annotations

import pytest

from gradient_lab.errors import RunnerFailed
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
