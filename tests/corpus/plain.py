"""The oracle: run programs as `python program.py` would, from the lab's seed, on one thread.

Each program runs in a fresh process (forked from one that imported torch, numpy and the
standard modules the lab preloads, as `python program.py` would import them), in an empty
working directory, with nothing on stdin. No walls and no lab code: plain Python.

    python tests/corpus/plain.py tests/corpus/programs/some_program.py   # prints its output
    python tests/corpus/plain.py --json FILES...   # {file: {stdout, error, seconds}}, for tests
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import tempfile
import time

import numpy as np
import torch

SEED = 0  # the lab's (app/runner/child/program.py): as torch.manual_seed(0) at the top


def run(source: str, timeout: float = 60.0) -> tuple[str, str | None, float]:
    """(stdout, the error's last line or None, seconds) of one program in a fresh process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run it, send back what it printed
        os.close(read)
        out = io.StringIO()
        error = None
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
            exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                error = f"SystemExit: {exit_.code}"
        except BaseException as exc:  # noqa: BLE001 - the program's own error is the answer
            error = f"{type(exc).__name__}: {exc}"
        seconds = time.perf_counter() - start
        with os.fdopen(write, "w") as pipe:
            json.dump({"stdout": out.getvalue(), "error": error, "seconds": seconds}, pipe)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        reply = pipe.read()
    os.waitpid(pid, 0)
    result = json.loads(reply)
    return result["stdout"], result["error"], result["seconds"]


if __name__ == "__main__":
    torch.set_num_threads(1)
    as_json = sys.argv[1] == "--json"
    results = {}
    for path in sys.argv[2 if as_json else 1:]:
        with open(path, encoding="utf-8") as file:
            stdout, error, seconds = run(file.read())
        if as_json:
            results[path] = {"stdout": stdout, "error": error, "seconds": seconds}
            continue
        print(f"== {path}: {seconds:.2f} s{', error: ' + error if error else ''}")
        print(stdout, end="")
    if as_json:
        json.dump(results, sys.stdout)
