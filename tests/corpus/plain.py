"""The oracle: run programs as `python program.py` would, from the lab's seed, on one thread.

Each program runs in a fresh process (forked from one that had imported the modules the lab
preloads, so neither side pays torch's lazy imports: torch._dynamo alone takes a second at a
program's first optimizer), in an empty working directory where it is the file program.py,
compiled from there, and `__main__` (sys.modules["__main__"], `__file__`, sys.argv[0]), with
nothing on stdin and one thread for torch and numpy's BLAS (the lab's thread count). No walls
and no lab code: plain Python.

    python tests/corpus/plain.py tests/corpus/programs/some_program.py   # prints its output
    python tests/corpus/plain.py --json FILES...   # {file: {stdout, error, line, seconds}}
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import tempfile
import time
import types

from gradient_lab.runner.child.environment import ONE_THREAD  # imports nothing numeric

# Read by numpy's BLAS when it loads: one thread, as the lab's children have. Everything else
# comes from the caller's environment, as it reaches `python program.py`.
os.environ.update(ONE_THREAD)

import numpy as np  # noqa: E402
import torch  # noqa: E402

SEED = 0  # the lab's (gradient_lab/runner/child/program.py): as torch.manual_seed(0) at the top


def run(source: str, timeout: float = 60.0) -> tuple[str, str | None, int | None, float]:
    """(stdout, the error's last line or None, the program's line it came from, seconds) of
    one program in a fresh process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run it, send back what it printed
        os.close(read)
        out = io.StringIO()
        error = None
        line = None
        start = time.perf_counter()
        try:
            os.chdir(tempfile.mkdtemp())
            torch.manual_seed(SEED)
            random.seed(SEED)
            np.random.seed(SEED)
            torch.set_num_threads(1)
            sys.argv = ["program.py"]
            sys.stdin = io.StringIO()
            sys.stdout = out
            main = types.ModuleType("__main__")
            main.__file__ = os.path.abspath("program.py")
            main.__builtins__ = __builtins__  # type: ignore[attr-defined]
            with open(main.__file__, "w", encoding="utf-8") as script:
                script.write(source)
            sys.modules["__main__"] = main
            exec(compile(source, main.__file__, "exec"), main.__dict__)
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                error = f"SystemExit: {exit_.code}"
        except BaseException as exc:  # noqa: BLE001 - the program's own error is the answer
            error = f"{type(exc).__name__}: {exc}"
            line = _program_line(exc, main.__file__)
        seconds = time.perf_counter() - start
        with os.fdopen(write, "w") as pipe:
            json.dump({"stdout": out.getvalue(), "error": error, "line": line,
                       "seconds": seconds}, pipe)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        reply = pipe.read()
    os.waitpid(pid, 0)
    result = json.loads(reply)
    return result["stdout"], result["error"], result["line"], result["seconds"]


def _program_line(exc: BaseException, filename: str) -> int | None:
    """The program's line in the traceback Python prints: its last frame in the program."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _preload() -> None:
    """Import what the lab's zygote imports, and take torch's lazy first steps: imports only,
    which change no program's output."""
    import importlib

    from gradient_lab.runner.pool.forkserver import PRELOAD

    for name in PRELOAD:
        importlib.import_module(name)
    torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)  # imports torch._dynamo


if __name__ == "__main__":
    torch.set_num_threads(1)
    _preload()
    as_json = sys.argv[1] == "--json"
    results = {}
    for path in sys.argv[2 if as_json else 1:]:
        with open(path, encoding="utf-8") as file:
            stdout, error, line, seconds = run(file.read())
        if as_json:
            results[path] = {"stdout": stdout, "error": error, "line": line, "seconds": seconds}
            continue
        print(f"== {path}: {seconds:.2f} s{f', error at line {line}: ' + error if error else ''}")
        print(stdout, end="")
    if as_json:
        json.dump(results, sys.stdout)
