"""The zygote, as the server sees it: the one process that has imported torch and the labs,
and forks every child.

The pool (pool.py) makes a `Zygote`, which starts the process as `python -m gradient_lab.jobs`
with a `ZygoteConfig` and one socket, in an environment that holds nothing of the server's but
the numeric libraries' kernel choices. "fork" goes out on the socket; each child's pid, pipes
and pidfd come back (children.py), and later how the child ended. A reader thread takes what
the zygote sends; the pool decides what to do with each child. What runs inside the zygote's
own process is forkserver.py.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from gradient_lab.runner.child.environment import numeric_environment
from gradient_lab.runner.child.lockin import Walls
from gradient_lab.runner.pool.children import Child

_log = logging.getLogger(__name__)
_START_SECONDS = 300.0  # importing torch and warming up, on a slow machine under load
_ENDINGS_KEPT = 4096  # how each recent child ended, for the pool to ask after a failure
# What the zygote's environment keeps of the server's, beside the numeric libraries' kernel
# choices (child/environment.py): where torch finds CUDA, nothing else.
_ENVIRONMENT = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                "PYTORCH_CUDA_ALLOC_CONF", "PATH")
_ROOT = Path(__file__).resolve().parents[3]  # the folder that holds the app package


@dataclass(frozen=True, slots=True)
class ZygoteConfig:
    """What the pool tells the zygote at its start (as JSON on its command line)."""

    socket_fd: int
    walls: Walls
    workdir: str  # the children's working directory: empty, the pool's to remove
    user: str  # who the children run as, when the zygote runs as root
    memory_mb: int  # per child: its address space beyond the zygote's (CPU), or GPU memory
    cpu_seconds: float  # the longest CPU time any job may take: the kernel's hard stop
    cuda: bool

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ZygoteConfig:
        fields = json.loads(text)
        return cls(**{**fields, "walls": Walls(**fields["walls"])})


class Zygote:
    """The zygote process, as the server sees it."""

    def __init__(self, config_of: Callable[[int], ZygoteConfig], entry: str,
                 on_forked: Callable[[Child], None], on_exited: Callable[[int], None],
                 on_lost: Callable[[], None], on_fork_failed: Callable[[str], None]) -> None:
        self._config_of = config_of  # the config, given the zygote's end of the socket
        self._entry = entry  # the module the zygote runs: it holds the jobs (gradient_lab.jobs)
        self._on_forked = on_forked
        self._on_exited = on_exited
        self._on_lost = on_lost
        self._on_fork_failed = on_fork_failed
        self._channel: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._send = threading.Lock()
        self._endings: OrderedDict[int, int] = OrderedDict()
        self._endings_lock = threading.Lock()
        self._closing = False
        self.walls: dict[str, object] = {}

    def start(self) -> dict[str, object]:
        """Start the zygote and wait until it is ready; return the walls its children put up."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        environment = {key: os.environ[key] for key in _ENVIRONMENT if key in os.environ}
        environment["PYTHONPATH"] = str(_ROOT)
        # Read once, when numpy and torch load their libraries: the kernels plain Python would
        # pick here, and one thread, as torch.set_num_threads(1) gives torch.
        environment.update(numeric_environment(os.environ))
        config = self._config_of(theirs.fileno())
        self._process = subprocess.Popen(
            [sys.executable, "-m", self._entry, config.to_json()], pass_fds=[theirs.fileno()],
            env=environment, cwd="/", stdin=subprocess.DEVNULL)
        theirs.close()
        ours.settimeout(_START_SECONDS)
        try:
            hello = json.loads(ours.recv(4096) or b"{}")
        except (TimeoutError, ValueError):
            hello = {}
        if "hello" not in hello:
            self._process.kill()
            raise RuntimeError(hello.get("refused") or
                               "the runner's zygote did not start (see its log above)")
        ours.settimeout(None)
        self._channel = ours
        self.walls = hello["hello"]
        threading.Thread(target=self._listen, name="runner-zygote", daemon=True).start()
        return self.walls

    def fork(self) -> None:
        """Ask for one more child; it arrives through `on_forked`."""
        if self._channel is not None:
            with self._send, contextlib.suppress(OSError):
                self._channel.send(b"fork")

    def ending(self, pid: int) -> int | None:
        """How child `pid` ended (a wait status), once the zygote has reaped it."""
        with self._endings_lock:
            return self._endings.get(pid)

    def close(self) -> None:
        self._closing = True
        channel, self._channel = self._channel, None
        if channel is not None:
            with contextlib.suppress(OSError):
                channel.shutdown(socket.SHUT_RDWR)
            channel.close()
        if self._process is not None:
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def _listen(self) -> None:
        channel = self._channel
        assert channel is not None  # start() set it before starting this thread
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(channel, 4096, 3)
            except OSError:
                data, fds = b"", []
            if not data:
                break
            message = json.loads(data)
            if "forked" in message and len(fds) == 3:
                self._on_forked(Child(int(message["forked"]), fds[0], fds[1], fds[2]))
            elif "exited" in message:
                with self._endings_lock:
                    self._endings[int(message["exited"])] = int(message["status"])
                    while len(self._endings) > _ENDINGS_KEPT:
                        self._endings.popitem(last=False)
                self._on_exited(int(message["exited"]))
            elif "fork_failed" in message:
                self._on_fork_failed(str(message["fork_failed"])[:200])
            else:
                for fd in fds:
                    os.close(fd)
        if not self._closing:
            _log.error("the runner's zygote has gone (exit code %s)",
                       self._process.wait() if self._process else None)
            self._channel = None
            channel.close()
            self._on_lost()
