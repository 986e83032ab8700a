"""Pool: each job gets a fresh walled child, its limits watched, its reply read as bytes.

The zygote keeps `ready` children forked and locked in, so a request does not wait for a fork.
A job takes one, writes its arguments down the child's pipe and reads its frames back
(frames.py) until the child says it is done: one child, one job, then the child is gone.

Which jobs run is places.py's: `jobs` at once at full speed, the rest waiting without using
the CPU (a job moved aside is stopped, and continues later where it stopped), so a job's wall
limit counts only the time it ran: a crowd waits in line rather than all missing their
limits together. A job that cannot run within `queue_seconds` more than its limit gets a 503.

Awaited from any event loop (uvicorn's, or a TestClient's): what the loops share is under one
lock, and each waiter is woken on its own loop.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from gradient_lab.errors import AppError, Busy, ProgramError, RunnerFailed, Timeout, TooLarge
from gradient_lab.runner.child.lockin import Walls
from gradient_lab.runner.frames import Frame, FrameReader, checked
from gradient_lab.runner.pool.children import Child
from gradient_lab.runner.pool.places import Places, Ticket
from gradient_lab.runner.pool.waiting import Waiter, wait
from gradient_lab.runner.pool.zygote import Zygote, ZygoteConfig

_log = logging.getLogger(__name__)
_POLL_SECONDS = 0.025  # how often a running job's CPU (and, on CUDA, its memory) is read
# A job found waiting this many polls in a row gives up its place to one in line: a place is
# a core, and a job that sleeps or waits on an event leaves its core idle (issue 26 item 1).
_IDLE_POLLS = 2
_KILL_GRACE_SECONDS = 0.5  # past its wall limit, this long for a child to end itself first
_ENDING_SECONDS = 1.0  # how long to wait for the zygote's word on how a child ended
# After the zygote is lost: the first wait before starting another, doubling to the last.
_RESTART_FIRST_SECONDS, _RESTART_LAST_SECONDS = 0.5, 30.0
# Ready children that end before any program reached them, this many within this long: the
# runner cannot keep children alive (a device they cannot open, a limit they start past), and
# /readyz says so rather than the pool forking in a loop behind a healthy face.
_EARLY_ENDS, _EARLY_ENDS_SECONDS = 5, 10.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_T = TypeVar("_T")


def _request(message: dict[str, object]) -> bytes:
    """A job's request to a child, as JSON; the standard library writes what orjson refuses
    (an integer past 64 bits, which a schema with no upper bound lets through)."""
    try:
        return orjson.dumps(message)
    except TypeError:
        return json.dumps(message).encode()


@dataclass(frozen=True, slots=True)
class PoolConfig:
    device: str = "cpu"  # "cpu" or "cuda": where the children's tensors live
    ready: int = 4  # children forked and walled, waiting for a job
    jobs: int = 4  # jobs at full priority at once
    long_jobs: int = 16  # jobs moved aside (stopped) at once, beyond `jobs`
    slice_cpu_seconds: float = 0.1  # a job's CPU at full speed before it may be moved aside
    slice_wall_seconds: float = 0.2  # and its wall time, whatever it does (_IDLE_POLLS sooner)
    memory_budget_mb: int = 1 << 30  # all children's memory together (places.py)
    memory_mb: int = 2048  # per child: address space (CPU), or GPU and resident memory (CUDA)
    max_cpu_seconds: float = 5.0  # the most CPU any job may ask for: the kernel's hard stop
    reply_bytes: int = 32 << 20
    walls: Walls = field(default_factory=Walls)
    user: str = "nobody"  # who children run as when the server runs as root
    weak_walls: bool = False  # run strangers' code even where the kernel lacks a wall
    entry: str = "gradient_lab.jobs"  # the module the zygote runs, which holds the jobs


class WallsDown(AppError):
    """The kernel lacks a wall, and the operator has not accepted running programs without it."""

    status = 503
    type = "walls_down"
    repeatable = False


@dataclass(eq=False, slots=True)
class _Running:
    """One job's child, as the pool watches it."""

    child: Child
    ticket: Ticket
    error: AppError | None = None  # why the watch killed it


class Pool:
    def __init__(self, config: PoolConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._ready: deque[Child] = deque()
        self._forking = 0  # forks asked for and not yet arrived
        self._child_waiters: deque[Waiter[Child]] = deque()
        self._places = Places(config.jobs, config.long_jobs, config.memory_mb,
                              max(config.memory_budget_mb, config.memory_mb))
        self._closed = False
        # Every child's working directory: empty, and unreadable to the children's user.
        self._workdir = tempfile.mkdtemp(prefix="gradient-lab-children-")
        self._zygote = self._new_zygote()
        self.walls: dict[str, object] = {}
        self.forked = 0  # children the zygote has forked
        self.started = 0  # jobs handed to a child
        self.restarts = 0  # zygotes started again after one was lost
        self.ended_early = 0  # ready children that ended before a job reached them
        self._early_ends: deque[float] = deque(maxlen=_EARLY_ENDS)
        self._failure: str | None = None  # why the runner cannot go on, once it cannot
        self._zygote_up = True  # False from its loss until another has started
        self.fork_failures = 0  # forks the zygote could not make (a task or memory limit)

    # --- life -------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the zygote and the ready children; raises if the zygote cannot start."""
        self.walls = self._zygote.start()
        missing = self.missing_walls()
        # main.py says which walls are up in the start-up lines; a missing one is worth two.
        _log.log(logging.WARNING if missing else logging.DEBUG, "runner walls: %s%s",
                 self.walls, f"; missing: {', '.join(missing)}" if missing else "")
        self._top_up()

    def missing_walls(self) -> list[str]:
        """The walls this kernel could not put up (none, on a kernel with them all)."""
        return [name for name in ("landlock", "seccomp") if not self.walls.get(name)]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            ready, self._ready = list(self._ready), deque()
            waiters: list[Waiter[Any]] = list(self._child_waiters)
            self._child_waiters.clear()
        for child in ready:
            child.close()
        for waiter in waiters:
            waiter.fail(_shutting_down())
        self._zygote.close()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def health(self) -> dict[str, object]:
        with self._lock:
            ready = len(self._ready)
        return {"ready": ready, **self._places.counts(), "forked": self.forked,
                "started": self.started, "ended_early": self.ended_early,
                "fork_failures": self.fork_failures,
                "restarts": self.restarts, "walls": self.walls}

    def trouble(self) -> str | None:
        """Why the runner cannot keep children alive to run programs, if it cannot."""
        with self._lock:
            if self._failure is not None:
                return self._failure
            if not self._zygote_up:
                return "the runner's zygote was lost and is starting again"
            ends = list(self._early_ends)
        if len(ends) == _EARLY_ENDS and ends[-1] - ends[0] <= _EARLY_ENDS_SECONDS and \
                time.monotonic() - ends[-1] <= _EARLY_ENDS_SECONDS:
            return (f"{_EARLY_ENDS} of the runner's children ended within "
                    f"{ends[-1] - ends[0]:.1f} s before any program reached them; see the "
                    "server's log")
        return None

    # --- jobs -------------------------------------------------------------------------------

    async def run(self, job: Callable[..., object], /, *, wall_seconds: float,
                  cpu_seconds: float, queue_seconds: float, strangers_code: bool,
                  client: str = "", **args: object) -> bytes:
        """The reply body of `job(**args)`, run in a fresh child; its AppError raised here."""
        bodies = self.stream(job, wall_seconds=wall_seconds, cpu_seconds=cpu_seconds,
                             queue_seconds=queue_seconds, strangers_code=strangers_code,
                             client=client, **args)
        try:
            async for body in bodies:
                return body
        finally:
            await bodies.aclose()
        raise RunnerFailed("the child ended without a reply")

    async def stream(self, job: Callable[..., object], /, *, wall_seconds: float,
                     cpu_seconds: float, queue_seconds: float, strangers_code: bool,
                     client: str = "", **args: object) -> AsyncGenerator[bytes, None]:
        """Each reply body `job(**args)` sends, as it sends it (a training run's chunks).

        `strangers_code`: the job runs a learner's code, which waits for every wall. `client`:
        who asked, so that places in line go round the clients (places.py).
        """
        if strangers_code and self.missing_walls() and not self.config.weak_walls:
            raise WallsDown(f"this server's kernel lacks {', '.join(self.missing_walls())}, so "
                            "it runs no programs; the built-in lessons still work",
                            hint_key="hint.walls_down")
        cpu_seconds = min(cpu_seconds, self.config.max_cpu_seconds)  # the kernel's hard stop
        payload = _request({"job": job.__name__, "args": args,
                            "wall_seconds": wall_seconds, "cpu_seconds": cpu_seconds})
        deadline = time.monotonic() + queue_seconds
        if self._closed:
            raise _shutting_down()
        ticket = Ticket(client=client)
        await self._places.enter(ticket, deadline, lambda: _busy(
            f"all {self.config.jobs} places to run a program stayed taken"))
        running: _Running | None = None
        try:
            running = _Running(await self._take_child(deadline), ticket)
            self.started += 1
            watch = asyncio.create_task(self._watch(running, wall_seconds,
                                                    deadline + wall_seconds))
            try:
                await self._send(running, payload)
                async for frame in self._frames(running, cpu_seconds):
                    yield frame.body
            finally:
                watch.cancel()
        finally:
            if running is not None:
                running.child.close()
            self._places.leave(ticket)

    async def _send(self, running: _Running, payload: bytes) -> None:
        """Write the job down the child's pipe and close it: the child reads to the end."""
        child = running.child
        try:
            await _write_all(child.job_fd, payload)
        finally:
            os.close(child.job_fd)
            child.job_fd = -1

    async def _frames(self, running: _Running, cpu_seconds: float) -> AsyncIterator[Frame]:
        """The child's data frames; its error raised; the reason it died, if it did first."""
        child = running.child
        reader = FrameReader(self.config.reply_bytes, TooLarge(
            f"the reply is larger than {self.config.reply_bytes:,} bytes",
            hint_key="hint.reply_too_large"))
        while True:
            data = await _read(child.reply_fd)  # the watch kills a child past its limits
            if not data:
                break
            for header, body in reader.feed(data):
                frame = await checked(header, body)
                if frame.error is not None:
                    raise frame.error
                if frame.end:
                    return
                yield frame
        raise running.error or await self._why_it_ended(child, cpu_seconds)

    async def _why_it_ended(self, child: Child, cpu_seconds: float) -> AppError:
        """The error for a child that died before it finished, from how it ended."""
        deadline = time.monotonic() + _ENDING_SECONDS
        while (status := self._zygote.ending(child.pid)) is None and \
                time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        if status is not None and os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            if number == signal.SIGXCPU:
                return Timeout(f"the program used more than {cpu_seconds:g} s of CPU time",
                               hint_key="hint.timeout")
            if number == signal.SIGKILL:  # not by the pool, which says why itself
                return _out_of_memory(self.config.memory_mb)
            return ProgramError(f"the program's process crashed "
                                f"({signal.Signals(number).name})",
                                hint_key="hint.worker_crashed")
        code = "unknown" if status is None else os.WEXITSTATUS(status)
        return ProgramError(f"the program's process stopped without an answer (exit {code})",
                            hint_key="hint.worker_crashed")

    async def _watch(self, running: _Running, wall_seconds: float, last: float) -> None:
        """Watch the job until it ends: its wall time (only while it runs), its slice at full
        speed, and on CUDA its memory; past `last` (monotonic) still aside, it is too late."""
        child, ticket = running.child, running.ticket
        ran, then = 0.0, time.monotonic()
        slice_start, slice_cpu = then, 0.0
        alarmed: float | None = None
        last_cpu, idle = 0.0, 0  # idle: polls in a row found asleep, using next to no CPU
        while True:
            await asyncio.sleep(_POLL_SECONDS)
            now = time.monotonic()
            cpu, resident, asleep = _usage(child.pid)
            idle = idle + 1 if asleep and cpu - last_cpu < _POLL_SECONDS / 2 else 0
            last_cpu = cpu
            if not ticket.aside:
                ran += now - then
            then = now
            if self.config.device == "cuda" and resident > self.config.memory_mb << 20:
                return self._stop(running, _out_of_memory(self.config.memory_mb))
            if alarmed is None and ran >= wall_seconds:
                alarmed = now  # the child's own handler says so, at the line it reached
                child.signal(signal.SIGALRM)
            elif alarmed is not None and now - alarmed >= _KILL_GRACE_SECONDS:
                return self._stop(running, Timeout(
                    f"the program ran longer than {wall_seconds:g} s", hint_key="hint.timeout"))
            if ticket.aside and now >= last:
                return self._stop(running, _busy("the server was too busy to finish the "
                                                 "program within its time"))
            if ticket.placed and not ticket.aside and self._places.crowded() and (
                    cpu - slice_cpu >= self.config.slice_cpu_seconds or
                    now - slice_start >= self.config.slice_wall_seconds or
                    idle >= _IDLE_POLLS):
                if self._places.step_aside(ticket, child.resume):
                    child.signal(signal.SIGSTOP)
            if ticket.placed and child.resumed:
                child.resumed = False
                slice_start, slice_cpu = now, cpu

    def _stop(self, running: _Running, error: AppError) -> None:
        running.error = error
        running.child.kill()

    # --- children ---------------------------------------------------------------------------

    async def _take_child(self, deadline: float) -> Child:
        with self._lock:
            child = self._ready.popleft() if self._ready else None
            if child is None:
                waiter: Waiter[Child] = Waiter()
                self._child_waiters.append(waiter)
        self._top_up()
        if child is not None:
            return child
        return await wait(waiter, self._child_waiters, self._lock, deadline, Child.close,
                          lambda: _busy("no child was ready to run the program"))

    def _top_up(self) -> None:
        """Ask the zygote for enough forks to have `ready` children and one per waiter."""
        with self._lock:
            wanted = self.config.ready + len(self._child_waiters) - len(self._ready) - \
                self._forking
            if self._closed or not self._zygote_up or wanted <= 0:
                return
            self._forking += wanted
        for _ in range(wanted):
            self._zygote.fork()

    def _forked(self, child: Child) -> None:
        """From the zygote's reader thread: a new child, walled and waiting."""
        with self._lock:
            self._forking -= 1
            self.forked += 1
            waiter = None
            if not self._closed:
                if not self._child_waiters:
                    self._ready.append(child)
                    return
                waiter = self._child_waiters.popleft()
        if waiter is None:
            child.close()
        else:
            waiter.give(child)

    def _exited(self, pid: int) -> None:
        """From the reader thread: a child has ended. One still waiting for a job (the OOM
        killer's, or a stranger's) leaves the ready ones, and another is forked."""
        with self._lock:
            dead = next((child for child in self._ready if child.pid == pid), None)
            if dead is not None:
                self._ready.remove(dead)
                self.ended_early += 1
                self._early_ends.append(time.monotonic())
        if dead is not None:
            _log.warning("a ready child ended before any program reached it (%s)",
                         _ended(self._zygote.ending(pid)))
            dead.close()
            self._top_up()

    def _lost(self) -> None:
        """From the reader thread: the zygote died, and its children with it. Start another;
        until it is up, no fork is asked for (none would come, and counted it would keep the
        new zygote from forking)."""
        with self._lock:
            ready, self._ready = list(self._ready), deque()
            self._forking = 0
            self._zygote_up = False
            closed = self._closed
        for child in ready:
            child.close()
        if not closed:
            threading.Thread(target=self._restart, name="runner-restart", daemon=True).start()

    def _restart(self) -> None:
        """Start a zygote again, waiting longer after each failure, until one starts."""
        wait = _RESTART_FIRST_SECONDS  # one that dies at once must not take a CPU to a loop
        while True:
            time.sleep(wait)
            with self._lock:
                if self._closed:
                    return
            try:
                zygote = self._new_zygote()
                walls = zygote.start()
                break
            except Exception as error:
                _log.exception("the runner's zygote could not start again; next try in %g s",
                               min(wait * 2, _RESTART_LAST_SECONDS))
                with self._lock:
                    self._failure = f"the runner's zygote could not start again: {error}"
                wait = min(wait * 2, _RESTART_LAST_SECONDS)
        with self._lock:
            self._zygote, self.walls = zygote, walls
            self._zygote_up, self._forking, self._failure = True, 0, None
            self.restarts += 1
        self._top_up()

    def _fork_failed(self, why: str) -> None:
        """From the reader thread: the zygote could not fork (the machine's limit on tasks or
        memory). The job waiting longest is refused; the zygote lives on."""
        _log.warning("the runner's zygote could not fork a child: %s", why)
        with self._lock:
            self._forking -= 1
            self.fork_failures += 1
            waiter = self._child_waiters.popleft() if self._child_waiters else None
        if waiter is not None:
            waiter.fail(_busy(f"the server could not start a process for the program ({why})"))

    def _new_zygote(self) -> Zygote:
        config = self.config

        def config_of(socket_fd: int) -> ZygoteConfig:
            return ZygoteConfig(socket_fd=socket_fd, walls=config.walls, workdir=self._workdir,
                                user=config.user,
                                memory_mb=config.memory_mb, cpu_seconds=config.max_cpu_seconds,
                                cuda=config.device == "cuda")

        return Zygote(config_of, config.entry, self._forked, self._exited, self._lost,
                      self._fork_failed)


# --- the pipes and /proc -------------------------------------------------------------------

async def _write_all(fd: int, data: bytes) -> None:
    """Write data down a pipe without blocking the event loop."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            await _ready(fd, write=True)
        except BrokenPipeError:
            return  # it died before reading: its reply (or its end) says why


async def _read(fd: int) -> bytes:
    """The next bytes from a pipe; b"" at its end."""
    os.set_blocking(fd, False)
    while True:
        try:
            return os.read(fd, 1 << 16)
        except BlockingIOError:
            await _ready(fd)


async def _ready(fd: int, write: bool = False) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    watch, unwatch = (loop.add_writer, loop.remove_writer) if write else \
        (loop.add_reader, loop.remove_reader)
    watch(fd, _settle, ready)
    try:
        await ready
    finally:
        unwatch(fd)


def _usage(pid: int) -> tuple[float, int, bool]:
    """(CPU seconds, resident bytes, asleep) of a process, from /proc; zeros once it has gone.
    Asleep is the kernel's S: waiting (a sleep, an event, a pipe), where a starved job is R."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0, 0, False
    return ((int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, int(fields[21]) * _PAGE_BYTES,
            fields[0] == "S")


def _ended(status: int | None) -> str:
    if status is None:
        return "how, the zygote has not said"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _settle(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def _busy(why: str) -> Busy:
    return Busy(f"{why}; try again", hint_key="hint.busy")


def _shutting_down() -> Busy:
    return Busy("the server is shutting down; try again", hint_key="hint.busy")


def _out_of_memory(memory_mb: int) -> TooLarge:
    return TooLarge(f"the program ran out of memory (limit {memory_mb:,} MiB)",
                    hint_key="hint.too_large", repeatable=False)
