"""A job's result as the JSON body the server sends: written in the child, once.

The child sends these bytes, so the server's event loop neither decodes the result nor encodes
it again: it checks the body is JSON and passes it through, and the encoding runs in the
children, in parallel. orjson writes dataclasses, lists and NumPy arrays in one pass of C.

The descent lab's replies are mostly float32 numbers (a 7-run race is 10^5 of them). Written
as the doubles Python holds them in, each takes 18-20 characters (-1.3450000286102295); as
float32's shortest decimal that reads back as the same float32, 6-10 (-1.345). Same values,
half the bytes, half the time to gzip and to parse in the browser: the fields named in
`float32` are written that way. (The graph lab's values keep their doubles' digits, as a
learner's tensor.tolist() shows them.)
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Collection
from typing import Any

import numpy as np
import orjson


def dumps(value: object, float32: Collection[str] = ()) -> bytes:
    """value (dataclasses, dicts, lists, numbers, strings) as JSON.

    The fields named in `float32` (at any depth) hold float32 tensors' values, as lists or a
    dict of lists: they are written as float32s. A list holding a spelled-out NaN or
    infinity ("NaN", "Infinity", "-Infinity", as gradient_lab.tensors.to_plain writes them) is
    written as it is, since JSON has no such numbers.
    """
    # With no float32 fields there is nothing to prepare: orjson walks the dataclasses itself.
    prepared = _prepare(value, frozenset(float32)) if float32 else value
    try:
        return orjson.dumps(prepared, option=orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError:  # an int past 64 bits, or half a surrogate pair: rare
        return mend(json.dumps(_prepare(value, frozenset(float32)), default=_plain,
                               ensure_ascii=False, separators=(",", ":"))).encode()


# Half a UTF-16 surrogate pair (a program's print("\\ud800")): Python holds it, UTF-8 cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


def mend(text: str) -> str:
    """`text` with each half of a surrogate pair as U+FFFD, the character for one unknown."""
    return _SURROGATE.sub("\ufffd", text)


def _plain(value: object) -> object:
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _prepare(value: Any, float32: frozenset[str]) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _f32(getattr(value, f.name)) if f.name in float32
                else _prepare(getattr(value, f.name), float32)
                for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _f32(v) if k in float32 else _prepare(v, float32) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_prepare(v, float32) for v in value]
    return value


def _f32(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _f32(v) for k, v in value.items()}
    if not isinstance(value, list) or not value:
        return value
    try:
        array = np.asarray(value, dtype=np.float32)
    except (ValueError, TypeError):  # ragged, or not numbers
        return value
    # NumPy reads "NaN" and "Infinity" as numbers, and orjson would write them as null: a
    # list with one keeps its spelled-out form.
    return array if np.isfinite(array).all() else value
