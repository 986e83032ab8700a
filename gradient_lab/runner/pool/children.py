"""The server's handle on each child the zygote forks (zygote.py): its pid, its two pipes and
the pidfd that kills it. The pool (pool.py) decides what to do with each child."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass, field


@dataclass(eq=False, slots=True)
class Child:
    """A forked, walled child waiting for its job: write the job to `job_fd`, read the reply
    from `reply_fd`, kill it by `pidfd` (which, unlike a pid, can never name another process)."""

    pid: int
    job_fd: int
    reply_fd: int
    pidfd: int
    killed: bool = False
    closed: bool = field(default=False, repr=False)
    resumed: bool = False  # continued after being moved aside, since the watch last looked

    def signal(self, number: int) -> None:
        """Send it a signal (SIGSTOP, SIGALRM: the pool's, never the program's to choose)."""
        if not self.killed and not self.closed:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.pidfd, number)

    def resume(self) -> None:
        """Continue it where it was stopped: a place has come back to it."""
        self.resumed = True
        self.signal(signal.SIGCONT)

    def kill(self) -> None:
        if not self.killed and not self.closed:
            self.killed = True
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def close(self) -> None:
        """Kill it if it still runs, and let go of its descriptors."""
        self.kill()
        if not self.closed:
            self.closed = True
            for fd in (self.job_fd, self.reply_fd, self.pidfd):
                if fd >= 0:
                    os.close(fd)
