"""Places: which jobs run, and in what order the others wait.

`places` jobs run at full speed at once (one a core, by default); every other job waits and
uses no CPU, so that a job's wall limit is met by the jobs that run rather than shared by a
crowd that all miss it. A new job waits in line for a place and for its share of the memory
budget. A running job that has had its slice while others wait (CPU for one that computes,
two polls found asleep for one that sleeps or waits on an event) is moved aside: its process
is stopped (the pool's watch does it) and its place passes on. A freed place goes to the line
first, so quick programs never wait behind long ones, and within the line to the job whose
client holds the fewest places (a student behind one who keeps three programs in flight),
then to the jobs moved aside, oldest first, which continue where they stopped. At most
`aside` jobs are moved aside at once; past that a job keeps its place. A job's memory is
held from its start to its end, aside or not.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from gradient_lab.runner.pool.waiting import Waiter, wait


@dataclass(eq=False, slots=True)
class Ticket:
    """One job's standing: whether it holds a place, and how to wake it when aside."""

    placed: bool = False
    aside: bool = False
    resume: Callable[[], None] | None = None
    client: str = ""  # who asked (web/client.py): places go round the clients in line


class Places:
    def __init__(self, places: int, aside: int, memory_mb: int, budget_mb: int) -> None:
        self.places, self.aside_max = places, aside
        self.memory_mb, self.budget_mb = memory_mb, budget_mb
        self._lock = threading.Lock()
        self._free = places
        self._memory = 0  # MiB held by jobs between enter() and leave()
        self._line: deque[Waiter[None]] = deque()
        self._waiting: dict[Waiter[None], str] = {}  # each waiter in line: its client
        self._placed: Counter[str] = Counter()  # places held, by client
        self._aside: deque[Ticket] = deque()

    async def enter(self, ticket: Ticket, deadline: float,
                    too_late: Callable[[], BaseException]) -> None:
        """Wait for a place (and the job's memory) until `deadline`, else too_late()."""
        with self._lock:
            if not self._line and self._free and self._fits():
                self._free -= 1
                self._memory += self.memory_mb
                self._placed[ticket.client] += 1
                ticket.placed = True
                return
            waiter: Waiter[None] = Waiter()
            self._line.append(waiter)
            self._waiting[waiter] = ticket.client
        try:
            await wait(waiter, self._line, self._lock, deadline,
                       lambda _: self._hand_back(ticket), too_late)
        finally:
            with self._lock:
                self._waiting.pop(waiter, None)  # handed over, or given up
        ticket.placed = True  # the place and the memory were handed over together

    def leave(self, ticket: Ticket) -> None:
        """The job has ended: its place and memory pass on."""
        with self._lock:
            self._memory -= self.memory_mb
            if ticket.aside:
                self._aside.remove(ticket)
            if ticket.placed:
                self._free += 1
                self._release(ticket.client)
            ticket.placed = ticket.aside = False
            woken = self._pass_on()
        _wake(woken)

    def _hand_back(self, ticket: Ticket) -> None:
        """A place handed to a job whose request had already gone."""
        ticket.placed = True
        self.leave(ticket)

    def crowded(self) -> bool:
        """Whether a new job waits in line for a place."""
        with self._lock:
            return bool(self._line)

    def step_aside(self, ticket: Ticket, resume: Callable[[], None]) -> bool:
        """Give up the place (the caller stops the job) unless `aside` jobs are aside already;
        `resume` continues it when a place comes back to it."""
        with self._lock:
            if not ticket.placed or len(self._aside) >= self.aside_max:
                return False
            ticket.placed, ticket.aside, ticket.resume = False, True, resume
            self._aside.append(ticket)
            self._free += 1
            self._release(ticket.client)
            woken = self._pass_on()
        _wake(woken)
        return True

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"running": self.places - self._free, "aside": len(self._aside),
                    "waiting": len(self._line), "memory_mb": self._memory}

    def _release(self, client: str) -> None:
        self._placed[client] -= 1
        if self._placed[client] <= 0:
            del self._placed[client]

    def _fits(self) -> bool:
        return self._memory + self.memory_mb <= self.budget_mb

    def _pass_on(self) -> Waiter[None] | Ticket | None:
        """Under the lock: who gets a free place (the line first, if memory allows)."""
        if not self._free:
            return None
        if self._line and self._fits():
            self._free -= 1
            self._memory += self.memory_mb
            # The first in line of the clients holding the fewest places.
            waiter = min(self._line, key=lambda w: self._placed[self._waiting.get(w, "")])
            self._line.remove(waiter)
            self._placed[self._waiting.get(waiter, "")] += 1
            return waiter
        if self._aside:
            self._free -= 1
            ticket = self._aside.popleft()
            ticket.placed, ticket.aside = True, False
            self._placed[ticket.client] += 1
            return ticket
        return None


def _wake(woken: Waiter[None] | Ticket | None) -> None:
    if isinstance(woken, Waiter):
        woken.give(None)
    elif woken is not None and woken.resume is not None:
        woken.resume()
