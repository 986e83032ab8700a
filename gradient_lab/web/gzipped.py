"""Each reply's gzip, made once per process for every screen that asks.

A class's fifty browsers all accept gzip, and the GZip middleware compressed each response on
its own: fifty compressions of the same 1 MB race took several times what its run did. A gzip
depends on the body's bytes alone, so it is kept by body, the least recently used going first,
and written with mtime 0, as the same request must give the same bytes.
"""

from __future__ import annotations

import gzip
from collections import OrderedDict

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
