"""run_program: a learner's program, run as `python program.py` would run it, inside the walls.

It is compiled as written, as the file program.py in the working directory (so tracebacks,
lines and `inspect.getfile` name it as Python names a script), and run by CPython with the real
builtins, imports and torch, from the lab's seed, as the module `__main__`: in sys.modules
while it runs (so its classes and functions pickle, and `torch.save(model)` works), with that
`__file__` (a file no one can read there, as in a folder the program may not list). What it
prints is kept up to a limit; what it leaves behind (its variables) and its error, if any, come
back as an Execution. The walls are the kernel's (lockin.py): nothing here checks what the
program may do.
"""

from __future__ import annotations

import builtins
import io
import linecache
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType, ModuleType, TracebackType

import numpy as np
import torch

from gradient_lab.errors import AppError, ProgramError, TooLarge
from gradient_lab.runner.child import hints, threads, workers

SCRIPT = "program.py"  # sys.argv[0], as `python program.py` was typed
FORMULA = "<formula>"  # what a descent surface's formula is compiled as (descent/surfaces.py)
# The file the running program was compiled as (None between runs): its frames are those of
# code from this file.
_script: str | None = None
SEED = 0  # every run starts from it, as `torch.manual_seed(0)` at the top of the program would


class Stop(BaseException):
    """A limit ended the program. Not an Exception, so `except Exception:` lets it through."""

    def __init__(self, error: AppError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass(frozen=True, slots=True)
class Execution:
    """What a program left: its variables, what it printed, and the error that ended it."""

    namespace: dict[str, object]
    stdout: str
    error: AppError | None


def run_program(code: str, *, program_bytes: int, stdout_bytes: int) -> Execution:
    """Run code to its end or its first uncaught error (returned, with the learner's line)."""
    size = len(code.encode(errors="surrogatepass"))
    if size > program_bytes:
        raise TooLarge(f"the program is {size:,} bytes; the limit is {program_bytes:,}",
                       hint_key="hint.program_too_large")
    path = os.path.join(os.getcwd(), SCRIPT)  # as Python makes it, from the working directory
    try:
        compiled = compile(code, path, "exec", dont_inherit=True)
    except SyntaxError as error:  # IndentationError and TabError are SyntaxErrors
        raise ProgramError(f"{type(error).__name__}: {error.msg}", line=error.lineno,
                           hint_key="hint.syntax_error") from None
    except ValueError as error:  # a NUL byte in the source
        raise ProgramError(f"SyntaxError: {error}", hint_key="hint.syntax_error") from None
    main = _main_module(path)
    # Its text where inspect.getsource (torch.jit.script) and tracebacks look for it, as they
    # find a program.py on disk (no mtime: linecache.checkcache keeps it, though unreadable).
    linecache.cache[path] = (size, None, code.splitlines(keepends=True), path)
    namespace = main.__dict__
    out = _Output(stdout_bytes)
    failure: AppError | None = None
    with _as_a_script(out, main):
        try:
            exec(compiled, namespace)  # the learner's program: the walls are the kernel's
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                failure = ProgramError(f"SystemExit: {exit_.code}", line=error_line(exit_))
        except Stop as stop:
            failure = stop.error
            failure.line = failure.line or error_line(stop)
        except BaseException as exc:  # noqa: BLE001 - the program's own error: a 4xx
            failure = hints.from_exception(exc, error_line(exc))
    return Execution(namespace, out.getvalue(), failure)


def _main_module(path: str) -> ModuleType:
    """A fresh `__main__`, as Python makes one for the script at `path` (in the working
    directory, which the program may not list: the file cannot be read)."""
    main = ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins  # type: ignore[attr-defined]  # a script's is the module
    main.__loader__ = main.__spec__ = main.__package__ = None
    main.__cached__ = None  # type: ignore[attr-defined]
    return main


@contextmanager
def _as_a_script(out: _Output, main: ModuleType) -> Iterator[None]:
    """The state `python program.py` starts in: the lab's seed, its argv, its module as
    `__main__`, no input; and DataLoader's workers, which would be processes, in this one."""
    torch.default_generator.manual_seed(SEED)  # what torch.manual_seed does for the CPU
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(SEED)
    random.seed(SEED)
    np.random.seed(SEED)
    global _script
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr, sys.modules.get("__main__"), _script
    _script = main.__file__
    sys.modules["__main__"] = main  # pickle finds the program's classes where Python does
    sys.argv = [SCRIPT]
    sys.stdin = io.StringIO()  # input() meets the end of its input, as from </dev/null
    sys.stdout = out
    sys.stderr = _Output(out.limit)  # kept apart, and dropped: the lab shows what is printed
    try:
        # DataLoader(num_workers=2): the same batches; and a bounded count of threads.
        with workers.without_processes(), threads.at_most():
            yield
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr, previous, _script = saved
        if previous is not None:
            sys.modules["__main__"] = previous


class _Output(io.StringIO):
    """Printed text, up to `limit` bytes; past it the program stops with a 413."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._size = 0

    def write(self, text: str) -> int:
        self._size += len(text.encode(errors="surrogatepass"))
        if self._size > self.limit:
            raise Stop(TooLarge(f"the program printed more than {self.limit:,} bytes",
                                hint_key="hint.stdout"))
        return super().write(text)


def error_line(exc: BaseException) -> int | None:
    """The learner's line an exception came from: its last frame in the program."""
    line = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        if is_the_program(tb.tb_frame.f_code.co_filename):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def is_the_program(filename: str) -> bool:
    """Whether code compiled from `filename` is the learner's: the program running now
    (run_program's program.py) or a surface's formula."""
    return filename == _script or filename == FORMULA


def program_line(frame: FrameType | None = None,
                 is_program: Callable[[str], bool] = is_the_program) -> int | None:
    """The line of the program running now: its innermost frame on the stack (the frames
    `is_program` tells apart by their file; a notebook's cells are its program)."""
    frame = frame or sys._getframe(1)
    while frame is not None:
        if is_program(frame.f_code.co_filename):
            return frame.f_lineno
        frame = frame.f_back
    return None
