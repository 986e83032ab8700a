"""Wherever the server is installed, a program imports what `python program.py` imports.

A server run as root runs its children as nobody. With Python or its packages where nobody may
not go (pyenv under /root, a venv in a 0700 folder), a child could import only what the zygote
had preloaded, and torch imports much of itself lazily: torch.save's serialization,
torch.func's forward mode. The zygote gives its children a view in which the way is open
(gradient_lab/runner/pool/mounts.py); a root that cannot make one (no CAP_SYS_ADMIN) refuses to
start, saying what to change.

The installation here is a venv in a 0700 folder whose packages are hard links to this one's
(instant, and no copy of torch): nobody can read them there, through that folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only a root server changes user")

# The examples of torch.func.jvp's and jacfwd's docstrings (torch/_functorch/eager_transforms.py,
# https://docs.pytorch.org/docs/stable/generated/torch.func.jvp.html and ...torch.func.jacfwd.html),
# printed rather than asserted, after the state_dict saved to a buffer as PyTorch's "Saving and
# loading models" tutorial saves it to a file.
PROGRAM = """\
import io
import torch
from torch.func import jacfwd, jvp

model = torch.nn.Linear(3, 2)
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
print(torch.load(buffer)["weight"].shape)

x = torch.randn([])
f = lambda x: x * torch.tensor([1.0, 2.0, 3])
value, grad = jvp(f, (x,), (torch.tensor(1.0),))
print(value, grad)

x = torch.randn(5)
jacobian = jacfwd(torch.sin)(x)
print(torch.allclose(jacobian, torch.diag(torch.cos(x))))
"""
# Runs in the closed installation's Python: a runner, one program, what came back.
DRIVER = """\
import asyncio, json, sys
from gradient_lab import jobs
from gradient_lab.runner.limits import Limits
from gradient_lab.runner.pool.pool import Pool, PoolConfig

limits = Limits(wall_seconds=30.0, cpu_seconds=30.0)
pool = Pool(PoolConfig(ready=1, jobs=1, max_cpu_seconds=30))
try:
    pool.start()
except RuntimeError as refusal:
    print(json.dumps({"refused": str(refusal)}))
    sys.exit()
body = asyncio.run(pool.run(jobs.graph, wall_seconds=30, cpu_seconds=30, queue_seconds=60,
                            strangers_code=True, code=sys.stdin.read(), device="cpu",
                            limits=limits))
pool.close()
print(json.dumps({"covered": pool.walls["covered"], **json.loads(body)}))
"""


@pytest.fixture(scope="module")
def closed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv's Python in a folder only root may enter, with this one's packages."""
    folder = tmp_path_factory.mktemp("closed")
    folder.chmod(0o700)
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    names = [p for p in ours.iterdir() if not p.name.startswith(("gradient_lab", "_editable"))]
    try:
        subprocess.run(["cp", "-al", *map(str, names), str(theirs)], check=True,
                       capture_output=True)
    except subprocess.CalledProcessError as error:  # another file system: no hard links
        pytest.skip(f"cannot hard-link this venv's packages: {error.stderr.decode()[-200:]}")
    return venv / "bin" / "python"


def _serve(python: Path, *wrapper: str) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [str(python), "-c", DRIVER]
    result = subprocess.run([*wrapper, *command], input=PROGRAM, capture_output=True,
                            text=True, timeout=300, env=environment, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _plain(python: Path) -> str:
    """What `python program.py` prints, from the same installation (tests/corpus/plain.py)."""
    result = subprocess.run([str(python), str(ROOT / "tests" / "corpus" / "plain.py"), "--json",
                             "/dev/stdin"], input=PROGRAM, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return json.loads(result.stdout)["/dev/stdin"]["stdout"]  # type: ignore[no-any-return]


def _on_the_way(folders: object, python: Path) -> bool:
    """Whether one of `folders` is a closed folder above the venv: its way, opened."""
    return isinstance(folders, list) and any(str(python).startswith(f + "/") for f in folders)


def test_torch_save_jvp_and_jacfwd_work_from_an_installation_the_children_cannot_read(
        closed: Path) -> None:
    answer = _serve(closed)
    assert answer.get("error") is None, answer
    assert _on_the_way(answer["covered"], closed)  # the 0700 folder, opened for them
    assert answer["stdout"] == _plain(closed)
    assert answer["stdout"].startswith("torch.Size([2, 3])\n")


@pytest.mark.skipif(shutil.which("capsh") is None, reason="capsh drops CAP_SYS_ADMIN here")
def test_a_root_that_cannot_open_the_way_refuses_to_start_saying_what_to_change(
        closed: Path) -> None:
    # capsh runs bash: `-c 'exec "$0" "$@"'` has it run the command that follows, as is.
    answer = _serve(closed, "capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$0" "$@"')
    refusal = str(answer["refused"])
    assert any(str(closed).startswith(part.strip(", ") + "/") for part in refusal.split())
    assert "CAP_SYS_ADMIN" in refusal and "/usr/local" in refusal and "nobody" in refusal
