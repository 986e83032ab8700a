"""Each reply's and each static file's gzip, made once per process for every screen that asks.

A class's fifty browsers all accept gzip, and the GZip middleware compressed each response on
its own: fifty compressions of the same 1 MB race took several times what its run did, and a
class opening the graph lab compressed its 700 KB of scripts fifty times. A gzip depends on the
bytes alone, so a reply's is kept by body, the least recently used going first, and a static
file's by its path and modification; both are written with mtime 0, as the same request must
give the same bytes.
"""

from __future__ import annotations

import gzip
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

# The middleware's level (main.py): on a classroom's LAN the server's CPU is what is scarce.
LEVEL = 1
MINIMUM_BYTES = 1000  # smaller bodies go as they are, as the middleware leaves them


class Gzipped:
    def __init__(self, budget_bytes: int) -> None:
        self._budget = budget_bytes  # bodies and their gzip, together
        self._held = 0
        self._kept: OrderedDict[bytes, bytes] = OrderedDict()  # body -> its gzip

    def of(self, body: bytes) -> bytes:
        """body's gzip: kept from an earlier reply of the same bytes, or made now and kept."""
        packed = self._kept.get(body)
        if packed is not None:
            self._kept.move_to_end(body)
            return packed
        packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
        cost = len(body) + len(packed)
        if cost <= self._budget:
            self._kept[body] = packed
            self._held += cost
            while self._held > self._budget:
                old, old_packed = self._kept.popitem(last=False)
                self._held -= len(old) + len(old_packed)
        return packed

    @property
    def held_bytes(self) -> int:
        return self._held


# What the static files hold that gzip shrinks (fonts and images are compressed already).
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")


@lru_cache(maxsize=512)  # /static holds a few hundred files of our own, 3 MB compressed
def static_file(path: str, mtime_ns: int, size: int) -> bytes:
    """The gzip of the static file at path, as it was at that modification time and size."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)
