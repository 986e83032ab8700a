"""A brake on guessing codes: an address whose codes named no room too often must wait.

Counted per process and per client address, in memory (a guesser spread over several
processes or replicas gets a few times the budget, which 40-bit codes can afford). Behind a
proxy every student shares its address, so the budget is a class's worth of typos.
"""

from __future__ import annotations

from collections import OrderedDict, deque

from gradient_lab.rooms.errors import TooManyAttempts


class Attempts:
    def __init__(self, limit: int = 30, window: float = 60.0, addresses: int = 10_000) -> None:
        self.limit = limit
        self.window = window
        self.addresses = addresses
        self._misses: OrderedDict[str, deque[float]] = OrderedDict()

    def check(self, address: str, now: float) -> None:
        """Raise TooManyAttempts while `address` has used up its misses for the window."""
        misses = self._misses.get(address)
        if misses is None:
            return
        while misses and misses[0] <= now - self.window:
            misses.popleft()
        if len(misses) >= self.limit:
            wait = misses[0] + self.window - now
            raise TooManyAttempts(
                f"{self.limit} room codes from this address named no room within "
                f"{self.window:.0f} s; try again in {wait:.0f} s",
                hint_key="hint.room_too_many_attempts")

    def missed(self, address: str, now: float) -> None:
        misses = self._misses.setdefault(address, deque(maxlen=self.limit))
        misses.append(now)
        self._misses.move_to_end(address)
        if len(self._misses) > self.addresses:  # the least recent address goes first
            self._misses.popitem(last=False)
