"""What one program may use. Plain values, so they cross into worker processes as they are."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Limits:
    program_bytes: int = 20_000
    steps: int = 200_000
    tensor_numel: int = 10_000_000
    tensor_memory_bytes: int = 1 << 30
    int_bits: int = 4_096
    sequence_len: int = 100_000
    recursion: int = 50
    graph_nodes: int = 2_000
    stdout_bytes: int = 64_000
    wall_seconds: float = 5.0
    cpu_seconds: float = 5.0
    worker_memory_mb: int = 2_048

    # Every job's request carries the limits into its worker. Pickled as a dataclass (its
    # __getstate__ and __setstate__ walk fields() in Python) they added 35 us to a no-op job's
    # round trip, once the caches had gone cold between requests; as a tuple read in C, and a
    # worker's copy kept per set of values, 20 us (1,800 round trips each, twice).
    def __reduce__(self) -> tuple[Callable[[tuple[Any, ...]], Limits], tuple[tuple[Any, ...]]]:
        return _limits, (_values(self),)


_values = operator.attrgetter(*(f.name for f in fields(Limits)))


@functools.lru_cache(maxsize=8)
def _limits(values: tuple[Any, ...]) -> Limits:
    return Limits(*values)
