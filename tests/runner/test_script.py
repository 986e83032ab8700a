"""A program runs in the lab as `python program.py` runs it, inside the walls.

It is the module `__main__` (so what it defines pickles, and `torch.save` takes a whole model),
its `__file__` and `sys.argv[0]` name program.py (a file it cannot read), its
`if __name__ == "__main__":` block runs; torch's lazily imported machinery (torch.save's
serialization, torch.func's forward mode) imports as it does in plain Python.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator

import pytest

from gradient_lab import jobs
from gradient_lab.runner.child.program import run_program
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

LIMITS = Limits(wall_seconds=20.0, cpu_seconds=20.0)

# The shape of PyTorch's "Saving and loading models" tutorial
# (https://pytorch.org/tutorials/beginner/saving_loading_models.html, "Save/Load Entire
# Model"), into a buffer: a custom module saved whole, loaded back, with its functions pickled.
WHOLE_MODEL = """\
import io, os, pickle, sys
import torch
import torch.nn as nn
import torch.nn.functional as F


class TheModelClass(nn.Module):
    def __init__(self):
        super(TheModelClass, self).__init__()
        self.fc1 = nn.Linear(4, 3)

    def forward(self, x):
        return F.relu(self.fc1(x))


def scale(x):
    return 2 * x


if __name__ == "__main__":
    model = TheModelClass()
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    model2 = torch.load(buffer, weights_only=False)
    model2.eval()
    print(type(model2).__module__, type(model2).__name__)
    print(torch.equal(model2.fc1.weight, model.fc1.weight))
    print(pickle.loads(pickle.dumps(scale))(21))
    print(sys.modules["__main__"].TheModelClass is TheModelClass)
    print(os.path.basename(__file__), sys.argv[0])
    print(os.path.dirname(os.path.abspath(__file__)) == os.getcwd())
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    pool = Pool(PoolConfig(ready=1, jobs=1, max_cpu_seconds=LIMITS.cpu_seconds))
    pool.start()
    yield pool
    pool.close()


def _run(pool: Pool, code: str) -> dict[str, object]:
    body = asyncio.run(pool.run(jobs.graph, wall_seconds=20, cpu_seconds=20, queue_seconds=60,
                                strangers_code=True, code=code, device="cpu", limits=LIMITS))
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_program_is_main_so_a_whole_model_saves_and_loads_as_in_python(pool: Pool) -> None:
    assert _run(pool, WHOLE_MODEL)["stdout"] == (
        "__main__ TheModelClass\nTrue\n42\nTrue\nprogram.py program.py\nTrue\n")


def test_the_program_file_is_named_but_cannot_be_read(pool: Pool) -> None:
    code = "try:\n    open(__file__).read()\nexcept OSError as e:\n    print(type(e).__name__)\n"
    assert _run(pool, code)["stdout"] == "PermissionError\n"


def test_the_zygotes_main_is_back_after_the_program() -> None:
    # Run in this process (no walls): the lab's own __main__ must not stay the program's.
    before = sys.modules["__main__"]
    execution = run_program("import sys\nme = sys.modules['__main__']\n",
                            program_bytes=1 << 16, stdout_bytes=1 << 16)
    assert execution.error is None
    assert sys.modules["__main__"] is before
    assert execution.namespace["me"] is not before
