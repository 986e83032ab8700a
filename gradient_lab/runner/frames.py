"""What a child sends back, and how the server reads it: frames of plain bytes, never pickles.

A frame is one line of JSON, the header, then the body it announces:

    {"kind": "data", "bytes": 812}\\n{...812 bytes of the reply's JSON...}
    {"kind": "error", "bytes": 0, "error": {"type": "program_error", "message": "...",
                                             "line": 9, "hint_key": "hint.no_grad_fn"}}\\n

A job answers with one frame, a stream (a training run) with one per chunk, and either ends
with {"kind": "end"} (or with its error): a child that dies before that has not answered. The
child writes frames (`write`, `end`); the server reads them with `FrameReader` as data from a
stranger: a bounded header, a bounded body that must parse as JSON, an error only of a kind
the server knows, with the status the server gives that kind. A child that sends anything
else has failed its own request, and nothing more.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import multiprocessing
import os
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import orjson

from gradient_lab.errors import ERRORS, AppError, RunnerFailed, TooLarge
from gradient_lab.runner import jsoncheck

_log = logging.getLogger(__name__)
_HEADER_BYTES = 16 << 10
_VALUES_ON_THE_LOOP = 200_000  # jsoncheck checks this many in ~2 ms at worst (here)
# Four times the largest corpus program's reply (makemore part 3: 520,000, 9 MB); the
# built-in lessons' hold under 7,000.
_VALUES_MAX = 2_000_000
_MESSAGE_CHARS = 4_000
_HINT_KEY = re.compile(r"hint\.[a-z0-9_]{1,60}")


@dataclass(frozen=True, slots=True)
class Frame:
    body: bytes  # JSON: the reply, or with an error the partial graph (or nothing)
    error: AppError | None = None
    end: bool = False  # the child has said all it will


# --- the child's side ------------------------------------------------------------------------

def write(fd: int, body: bytes = b"", error: AppError | None = None) -> None:
    """Write one frame to fd: the body, or an error with what it built before failing."""
    header: dict[str, object] = {"kind": "data" if error is None else "error",
                                 "bytes": len(body)}
    if error is not None:
        header["error"] = {"type": error.type, "message": error.message[:_MESSAGE_CHARS],
                           "line": error.line, "hint_key": error.hint_key,
                           "repeatable": error.repeatable}
    _write_all(fd, json.dumps(header).encode() + b"\n" + body)


def end(fd: int) -> None:
    """Say that the reply is complete."""
    _write_all(fd, b'{"kind": "end", "bytes": 0}\n')


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# --- the server's side -----------------------------------------------------------------------

class FrameReader:
    """Frames from a child's bytes, fed as they arrive; raises RunnerFailed on anything else.

    `max_body` bounds each body: past it, `TooLarge` names the limit (the reply would be too
    big for the page too).
    """

    def __init__(self, max_body: int, too_large: AppError) -> None:
        self._buffer = bytearray()
        self._max_body = max_body
        self._too_large = too_large
        self._header: dict[str, object] | None = None

    def feed(self, data: bytes) -> Iterator[tuple[dict[str, object], bytes]]:
        """Each whole frame's checked header and its body, not yet checked (`checked`)."""
        self._buffer += data
        while True:
            if self._header is None:
                end = self._buffer.find(b"\n", 0, _HEADER_BYTES + 1)
                if end < 0:
                    if len(self._buffer) > _HEADER_BYTES:
                        raise RunnerFailed("the child's reply has no valid header")
                    return
                self._header = _header(bytes(self._buffer[:end]), self._max_body,
                                       self._too_large)
                del self._buffer[:end + 1]
            size = self._header["bytes"]
            assert isinstance(size, int)
            if len(self._buffer) < size:
                return
            body = bytes(self._buffer[:size])
            del self._buffer[:size]
            header, self._header = self._header, None
            yield header, body

    @property
    def pending(self) -> bool:
        """Bytes of an unfinished frame are waiting: the child stopped mid-reply."""
        return bool(self._buffer) or self._header is not None


async def checked(header: dict[str, object], body: bytes) -> Frame:
    """The frame, its body checked as JSON. A body of few values is checked here; one of many
    in a process of its own, one at a time: within the byte limit, millions of tiny values cost
    tens of milliseconds to check (simdjson holds the GIL, so a thread would not free the
    event loop), and two such replies must not add up."""
    values = _values(body)
    if values > _VALUES_MAX:
        raise TooLarge(f"the reply holds more than {_VALUES_MAX:,} values",
                       hint_key="hint.reply_too_large")
    if values <= _VALUES_ON_THE_LOOP:
        return _frame(header, body, jsoncheck.shape(body) if body else None)
    loop = asyncio.get_running_loop()
    try:
        shape = await loop.run_in_executor(_checker(), jsoncheck.shape, body)
    except BrokenProcessPool:  # the checker died (killed, out of memory): a new one next time
        _log.warning("the reply checker's process ended; checking this reply on a thread")
        _checker.cache_clear()
        shape = await asyncio.to_thread(jsoncheck.shape, body)
    return _frame(header, body, shape)


def _values(body: bytes) -> int:
    """At least the number of values in a JSON body (up to twice it), at memory speed."""
    return body.count(b",") + body.count(b"[") + body.count(b"{")


@functools.cache
def _checker() -> ProcessPoolExecutor:
    # forkserver: a clean process, not a fork of this one and its threads.
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))


def _header(line: bytes, max_body: int, too_large: AppError) -> dict[str, object]:
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):  # nested past Python's limit: 16 KiB of "["
        raise RunnerFailed("the child's reply has no valid header") from None
    if not isinstance(header, dict) or header.get("kind") not in ("data", "error", "end") or \
            type(header.get("bytes")) is not int or header["bytes"] < 0:
        raise RunnerFailed("the child's reply has no valid header")
    if header["bytes"] > max_body:
        raise too_large
    return header


def _frame(header: dict[str, object], body: bytes, shape: str | None) -> Frame:
    """The frame of a header and its body, whose shape jsoncheck.shape gave."""
    if header["kind"] == "end":
        return Frame(b"", end=True)
    if body and shape is None:
        raise RunnerFailed("the child's reply is not JSON")
    if header["kind"] == "data":
        if not body:  # JSON is never empty: a reply of nothing would reach the page as a 200
            raise RunnerFailed("the child's reply is empty")
        return Frame(body)
    error = _error(header.get("error"))
    if shape == "object":  # checked: it goes into the envelope as it came, not re-encoded
        error.partial = orjson.Fragment(body)
    return Frame(b"", error)


def _error(fields: object) -> AppError:
    """The error a child reports, rebuilt from checked fields as one of the server's kinds."""
    if not isinstance(fields, dict) or fields.get("type") not in ERRORS:
        raise RunnerFailed("the child reported an error of no known kind")
    message, line, hint = fields.get("message"), fields.get("line"), fields.get("hint_key")
    if not isinstance(message, str) or not message:
        raise RunnerFailed("the child reported an error with no message")
    if not (line is None or (type(line) is int and 1 <= line <= 1_000_000)):
        line = None
    if not (isinstance(hint, str) and _HINT_KEY.fullmatch(hint)):
        hint = None
    # A child may only say that its error would not come again (memory ran out); whether a
    # kind may be kept at all is the server's to say.
    repeatable = fields.get("repeatable") is not False
    return ERRORS[fields["type"]](message[:_MESSAGE_CHARS], line=line, hint_key=hint,
                                  repeatable=repeatable)
