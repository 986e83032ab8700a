"""A program runs in the lab as `python program.py` runs it, inside the walls.

It is the module `__main__` (so what it defines pickles, and `torch.save` takes a whole model),
its `__file__` and `sys.argv[0]` name program.py (a file it cannot read), its
`if __name__ == "__main__":` block runs; torch.func's forward mode (jacfwd, hessian) imports
and runs; a DataLoader with worker processes gives the batches Python's workers give.
Each is compared with plain Python (tests/corpus/plain.py, in a process of its own).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradient_lab import jobs
from gradient_lab.errors import ProgramError
from gradient_lab.runner.child.program import run_program
from gradient_lab.runner.child.workers import NOTE
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

LIMITS = Limits(wall_seconds=20.0, cpu_seconds=20.0)
PLAIN = Path(__file__).resolve().parents[2] / "tests" / "corpus" / "plain.py"

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


def _plain(tmp_path: Path, code: str) -> str:
    """What `python program.py` prints (the oracle: tests/corpus/plain.py)."""
    program = tmp_path / "program.py"
    program.write_text(code)
    result = subprocess.run([sys.executable, str(PLAIN), "--json", str(program)], check=True,
                            capture_output=True, text=True, timeout=300)
    answer = json.loads(result.stdout)[str(program)]
    assert answer["error"] is None, answer["error"]
    return answer["stdout"]  # type: ignore[no-any-return]


# The examples of torch.func.jacfwd's and hessian's docstrings
# (torch/_functorch/eager_transforms.py; https://docs.pytorch.org/docs/stable/generated/
# torch.func.jacfwd.html and torch.func.hessian.html), printing what they assert.
JACFWD = """\
import torch
from torch.func import jacfwd, jacrev, vmap
x = torch.randn(5)
jacobian = jacfwd(torch.sin)(x)
print(jacobian)
print(vmap(jacfwd(torch.sin))(torch.randn(64, 5)).shape)
def f(x, y):
  return x + y ** 2
x, y = torch.randn(5), torch.randn(5)
print(jacfwd(f, argnums=(0, 1))(x, y))
"""
HESSIAN = """\
import torch
from torch.func import hessian
def f(x):
  return x.sin().sum()
x = torch.randn(5)
hess = hessian(f)(x)  # equivalent to jacfwd(jacrev(f))(x)
print(hess)
print(torch.allclose(hess, torch.diag(-x.sin())))
"""


@pytest.mark.parametrize("code", [JACFWD, HESSIAN], ids=["jacfwd", "hessian"])
def test_torch_func_forward_mode_prints_what_plain_python_prints(
        pool: Pool, tmp_path: Path, code: str) -> None:
    answer = _run(pool, code)
    assert answer["stdout"] == _plain(tmp_path, code)
    assert "tensor(" in str(answer["stdout"])


# MorvanZhou's DataLoader lesson (github.com/MorvanZhou/PyTorch-Tutorial,
# tutorial-contents/305_batch_train.py: TensorDataset, shuffle, num_workers=2), with what its
# workers would do to differ from one process: draw random numbers in __getitem__ (torch,
# random, NumPy), seed themselves in worker_init_fn, persist between epochs, and split an
# IterableDataset by get_worker_info() (Example 1 of IterableDataset's docstring).
WORKERS = """\
import math, random
import numpy as np
import torch
import torch.utils.data as Data

torch.manual_seed(1)
x = torch.linspace(1, 10, 10)
y = torch.linspace(10, 1, 10)
loader = Data.DataLoader(dataset=Data.TensorDataset(x, y), batch_size=5, shuffle=True,
                         num_workers=2)
for epoch in range(3):
    for step, (batch_x, batch_y) in enumerate(loader):
        print('Epoch: ', epoch, '| Step: ', step, '| batch x: ', batch_x.numpy(),
              '| batch y: ', batch_y.numpy())


class Noisy(Data.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i, torch.rand(1).item(), random.random(), np.random.rand()


def init(worker_id):
    np.random.seed(100 + worker_id)


for persistent in (False, True):
    loader = Data.DataLoader(Noisy(), batch_size=3, shuffle=True, num_workers=3,
                             worker_init_fn=init, persistent_workers=persistent)
    for epoch in range(2):
        for batch in loader:
            print(epoch, [b.tolist() for b in batch])


class MyIterableDataset(torch.utils.data.IterableDataset):
    def __init__(self, start, end):
        super(MyIterableDataset).__init__()
        self.start, self.end = start, end

    def __iter__(self):
        worker_info = torch.utils.data.get_worker_info()
        if worker_info is None:
            return iter(range(self.start, self.end))
        per_worker = int(math.ceil((self.end - self.start) / float(worker_info.num_workers)))
        iter_start = self.start + worker_info.id * per_worker
        return iter(range(iter_start, min(iter_start + per_worker, self.end)))


print(list(Data.DataLoader(MyIterableDataset(3, 7), num_workers=2)))
print(list(Data.DataLoader(MyIterableDataset(3, 10), batch_size=2, num_workers=3)))
print(torch.rand(2))
"""


def test_a_dataloaders_workers_give_the_batches_pythons_worker_processes_give(
        pool: Pool, tmp_path: Path) -> None:
    printed = str(_run(pool, WORKERS)["stdout"])
    assert printed.count(NOTE) == 1 and printed.startswith(NOTE)  # said once, at the first
    assert printed.replace(NOTE, "") == _plain(tmp_path, WORKERS)


def test_an_error_in_a_worker_is_raised_as_the_loading_process_raises_it(pool: Pool) -> None:
    code = ("import torch.utils.data as Data\nclass Bad(Data.Dataset):\n"
            "    def __len__(self):\n        return 4\n"
            "    def __getitem__(self, i):\n        raise ValueError('no item %d' % i)\n"
            "for batch in Data.DataLoader(Bad(), num_workers=2):\n    pass\n")
    with pytest.raises(ProgramError) as caught:
        _run(pool, code)
    assert caught.value.line == 7
    assert caught.value.message.startswith(
        "ValueError: Caught ValueError in DataLoader worker process 0.")


# The example of torch.func.linearize's docstring (torch/_functorch/eager_transforms.py), printed.
# Importing inductor (which linearize does) makes sure its cache folder exists.
LINEARIZE = """\
import torch
from torch.func import linearize
def fn(x):
    return x.sin()

output, jvp_fn = linearize(fn, torch.zeros(3, 3))
print(jvp_fn(torch.ones(3, 3)))
"""


def test_linearize_finds_its_cache_folder_and_prints_what_plain_python_prints(
        pool: Pool, tmp_path: Path) -> None:
    assert _run(pool, LINEARIZE)["stdout"] == _plain(tmp_path, LINEARIZE)


def test_torchs_cache_folder_is_no_scratch_place_for_the_program(pool: Pool) -> None:
    code = ("import os\nfolder = os.environ['TORCHINDUCTOR_CACHE_DIR']\n"
            "print(os.path.isdir(folder))\n"
            "for attempt in (lambda: os.listdir(folder),\n"
            "                lambda: open(os.path.join(folder, 'x'), 'w'),\n"
            "                lambda: os.mkdir(os.path.join(folder, 'd'))):\n"
            "    try:\n        attempt()\n        print('allowed')\n"
            "    except OSError as error:\n        print(type(error).__name__)\n")
    assert _run(pool, code)["stdout"] == "True\n" + "PermissionError\n" * 3


def test_torch_compile_that_must_build_code_meets_the_wall_and_eager_backends_run(
        pool: Pool) -> None:
    compiled = ("import torch\nmodel = torch.compile(torch.nn.Linear(3, 2))\n"
                "print(model(torch.ones(1, 3)).shape)\n")
    with pytest.raises(ProgramError) as caught:
        _run(pool, compiled)
    assert caught.value.line == 3 and "Operation not permitted" in caught.value.message
    assert caught.value.hint_key == "hint.compile"  # names torch.compile, not files
    eager = compiled.replace("Linear(3, 2))", "Linear(3, 2), backend='aot_eager')")
    assert _run(pool, eager)["stdout"] == "torch.Size([1, 2])\n"


# What a script sees of its own code: inspect names program.py for its functions and classes
# and reads their text (which the program itself cannot), and a traceback it prints names the
# file and shows its lines.
OWN_FILE = """\
import inspect, os, traceback
import torch


def double(x):
    return 2 * x


class Net(torch.nn.Module):
    def forward(self, x):
        return double(x)


print(inspect.getfile(double) == __file__, inspect.getfile(Net) == __file__)
print(os.path.basename(inspect.getsourcefile(double)), double.__code__.co_filename == __file__)
print(inspect.getsource(Net.forward), end="")
folder = os.path.dirname(__file__) + os.sep
try:
    Net().forward(None)
except TypeError:
    print(traceback.format_exc().replace(folder, ""), end="")
"""


def test_a_programs_code_is_program_py_for_inspect_and_tracebacks_as_in_python(
        pool: Pool, tmp_path: Path) -> None:
    printed = str(_run(pool, OWN_FILE)["stdout"])
    assert printed == _plain(tmp_path, OWN_FILE)
    assert printed.startswith("True True\nprogram.py True\n    def forward(self, x):\n")
    assert ('  File "program.py", line 19, in <module>\n    Net().forward(None)\n'
            '  File "program.py", line 11, in forward\n') in printed


def test_a_function_of_the_programs_own_is_not_taken_for_torchs_of_that_name(
        pool: Pool) -> None:
    code = ("import torch\n\n\ndef clip_grad_norm_(model, limit):\n    for p in model:\n"
            "        pass\n\n\nclip_grad_norm_(torch.nn.Linear(3, 1), 1.0)\n")
    with pytest.raises(ProgramError) as caught:
        _run(pool, code)
    assert caught.value.line == 5 and "is not iterable" in caught.value.message
    assert caught.value.hint_key is None
    torchs = code.replace("clip_grad_norm_(torch", "torch.nn.utils.clip_grad_norm_(torch")
    with pytest.raises(ProgramError) as caught:
        _run(pool, torchs)
    assert caught.value.line == 9 and caught.value.hint_key == "hint.module_not_parameters"
