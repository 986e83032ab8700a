"""Programs run as a notebook runs its cells: each compiled from a file of its own, in one
namespace, as ipykernel compiles /tmp/ipykernel_<pid>/<n>.py."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gradient_lab.graph.model import Graph
from gradient_lab.notebook.capture import record


def run_cell(source: str, folder: Path, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """source run as a notebook cell runs it: compiled from a file of its own, as ipykernel's
    /tmp/ipykernel_<pid>/<n>.py, in the notebook's one namespace."""
    namespace = {"__name__": "__main__"} if namespace is None else namespace
    filename = str(folder / f"cell{len(list(folder.iterdir()))}.py")
    Path(filename).write_text(source, encoding="utf-8")
    exec(compile(source, filename, "exec"), namespace)  # the test's own programs
    return namespace


def recorded(program: str, folder: Path) -> Graph:
    """The program inside `with record() as run:`, from the seed the lab's runs start from."""
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    cell = "with record() as run:\n" + textwrap.indent(program, "    ")
    run = run_cell(cell, folder, {"__name__": "__main__", "record": record})["run"]
    assert run.graph is not None
    return run.graph
