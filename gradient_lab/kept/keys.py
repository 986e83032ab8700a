"""What a kept reply is kept under: a hash of everything the reply depends on, and whether a
stranger's program names a source that differs from run to run."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import platform
import re
import sys
import tokenize
from collections.abc import Iterator
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import orjson

from gradient_lab.runner.child.environment import numeric_environment

# Names through which a program reads the clock or the system's randomness (time.time(),
# datetime.now(), os.urandom(), uuid4(), np.random.default_rng(), random.SystemRandom, ...):
# a reply that prints them would be stale if served again. Matched as names in the program
# (a comment's "each time" is not one); a false alarm costs only a run.
VOLATILE_NAMES = frozenset({
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
    "process_time", "thread_time", "clock_gettime", "localtime", "gmtime", "ctime",
    "strftime", "datetime", "now", "today", "utcnow", "timeit", "default_timer", "Timer",
    "urandom", "getrandom", "randbytes", "SystemRandom", "secrets", "uuid1", "uuid4",
    "default_rng", "SeedSequence", "getpid",
})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key(*parts: object) -> str:
    """The hex digest of `parts` (plain values and dataclasses), written canonically."""
    try:
        text = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer past 64 bits, which a schema with no upper bound lets in
        text = json.dumps(parts, sort_keys=True, default=_fields).encode()
    return hashlib.sha256(text).hexdigest()


def _fields(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not plain data")


@lru_cache
def fingerprint() -> dict[str, object]:
    """What every reply depends on beside its request: this code, torch's and NumPy's builds,
    Python, the processor's architecture and the numeric libraries' kernel choices."""
    return {"code": _source_digest(), "torch": _version("torch"), "numpy": _version("numpy"),
            "python": sys.version, "machine": platform.machine(),
            "kernels": numeric_environment(os.environ)}


def names_the_clock_or_chance(texts: Iterator[str]) -> bool:
    """Whether any text, read as Python, names one of VOLATILE_NAMES."""
    return any(not VOLATILE_NAMES.isdisjoint(_names(text)) for text in texts)


def _names(text: str) -> set[str]:
    """The names in a program; every word of it where it does not tokenize (a syntax error,
    which the child reports as it is)."""
    try:
        return {token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
                if token.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError):
        return set(_NAME.findall(text))


def texts_of(value: object) -> Iterator[str]:
    """Every string inside a request's arguments (a program, a typed surface's formula)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts_of(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from texts_of(item)


def _source_digest() -> str:
    """The package's Python files, hashed: a changed lab is a new lab, whatever its version."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "none"
