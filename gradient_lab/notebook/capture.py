"""The graph lab in the learner's own kernel: a recorded cell, or the graph behind one tensor.

The web page runs a stranger's program in a walled child (gradient_lab/runner). Here the
learner's kernel runs the learner's own code, so there is nothing to wall in: GraphRecorder
watches the cell as it runs, with the cell's files as "the program", and trace() turns what it
saw into the same Graph that /api/graph sends.
"""

from __future__ import annotations

import inspect
import os
import site
import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import torch

from gradient_lab.errors import TooLarge
from gradient_lab.graph.model import Graph
from gradient_lab.graph.recording import GraphRecorder, Produced, walk
from gradient_lab.graph.tracing import trace
from gradient_lab.notebook.output import Note, display
from gradient_lab.runner.child.program import Execution
from gradient_lab.runner.limits import Limits
from gradient_lab.tensors import grad_fn_of

LIMITS = Limits()  # the page's graph limits: what it draws, a notebook's output draws
UNNAMED = "tensor"  # the name show() gives a tensor the cell never named
_FREED = "backward through the graph a second time"  # torch's words for a graph backward freed


@cache
def _library_folders() -> tuple[str, ...]:
    """Where code that is not the learner's lives: the standard library, installed packages,
    and Gradient Lab itself (a checkout's, which is not among the packages)."""
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    folders.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    folders.add(site.getusersitepackages())
    folders.update({str(Path(__file__).resolve().parents[1]), str(Path(torch.__file__).parent)})
    return tuple(os.path.realpath(f) + os.sep for f in folders)


@cache
def is_users_code(filename: str) -> bool:
    """Whether code compiled from `filename` is the learner's: a notebook cell (ipykernel's
    /tmp/ipykernel_*/N.py, IPython's <ipython-input-N-...>), a script, a module of their own;
    not the standard library, an installed package or Gradient Lab."""
    if filename.startswith("<"):
        return filename.startswith(("<ipython-input-", "<stdin>"))
    return not os.path.realpath(filename).startswith(_library_folders())


class Run:
    """One recorded cell: enter it around the code, and its `graph` is there once it ends.

    Every backward call, optimizer.step() and zero_grad() in the block is recorded as the
    graph lab's page records a program; the block runs as it would without it.
    """

    def __init__(self) -> None:
        self.graph: Graph | None = None
        self._recorder: GraphRecorder | None = None
        self._frame: FrameType | None = None
        self._before: dict[str, Any] = {}

    def __enter__(self) -> Run:
        self._frame = sys._getframe(1)  # the cell's (or function's) frame: its names
        self._before = dict(self._frame.f_locals)
        self._recorder = GraphRecorder(LIMITS, is_users_code)
        self._recorder.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        recorder, frame = self._recorder, self._frame
        if recorder is None or frame is None:
            raise RuntimeError("a Run ends only after it began: use `with record() as run:`")
        recorder.__exit__(*exc)
        namespace = _cell_names(frame.f_locals, self._before, recorder)
        self._recorder, self._frame, self._before = None, None, {}
        # Traced now, while the tensors hold what the cell left: later cells may change them.
        try:
            self.graph = trace(Execution(namespace, "", None), recorder, _device(recorder))
        except Exception:
            if exc[0] is None:
                raise
            # The cell's own error is the one to see; what it left cannot be drawn.

    def show(self, lang: str = "en", height: int | None = None) -> None:
        """Draw the recorded cell in the cell's output (see gradient_lab.notebook.show)."""
        if self.graph is None:
            raise RuntimeError("run.show() draws a recorded cell: call it after the "
                               "`with gradient_lab.record() as run:` block has ended")
        display(self.graph, None, lang=lang, height=height)


def record() -> Run:
    """A Run to enter around a cell: `with gradient_lab.record() as run: ...`, then run.show()."""
    return Run()


def trace_tensor(t: torch.Tensor, namespace: dict[str, Any]) -> tuple[Graph, Note | None]:
    """The graph behind t, named from `namespace` (the caller's), with a note on backward.

    .. note:: Before backward, the steps are what `t.backward()` will do: show() runs it once
       with retain_graph=True, which keeps the graph for the learner's own call, and puts every
       .grad back as it was. The learner's tensor hooks, if any, run in it too. After backward
       has freed the graph, there is nothing left to step: the graph is drawn with each .grad.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"show() draws the graph behind a tensor, not a {type(t).__name__}: "
                        "pass the loss, e.g. show(loss)")
    recorder = GraphRecorder(LIMITS, is_users_code)
    fn = grad_fn_of(t)
    try:
        fns = walk([fn], LIMITS.graph_nodes) if fn is not None else []
    except TooLarge:  # drawn as the page draws it: the graph left out, and why
        return trace(Execution({UNNAMED: t}, "", None), recorder, t.device), None
    names = _names_in_graph(t, fns, namespace)
    for value in names.values():  # values and names for the tensors the cell holds
        if isinstance(value, torch.Tensor):
            recorder.produced.setdefault(id(value), Produced(value, 0))
    note = _rehearse(t, fn, fns, names, recorder)
    return trace(Execution(names, "", None), recorder, t.device), note


def _rehearse(t: torch.Tensor, fn: Any, fns: list[Any], names: dict[str, Any],
              recorder: GraphRecorder) -> Note | None:
    """Record t.backward() where it can still run, and say what the steps are."""
    name = next((n for n, v in names.items() if v is t), UNNAMED)
    if fn is None:
        return Note("notebook.no_backward", {"name": name})
    if t.numel() != 1:
        return Note("notebook.not_scalar", {"name": name})
    leaves = [f.variable for f in fns if type(f).__name__ == "AccumulateGrad"]
    kept = leaves + [v for v in names.values() if isinstance(v, torch.Tensor) and v.retains_grad]
    backward = inspect.unwrap(torch.autograd.backward)  # torch's own, under a record() too
    try:
        # The rehearsal is show()'s, not the cell's: torch hands backward() to a record()'s
        # TorchFunctionMode, which must not see it.
        with _grads_kept(kept), torch._C.DisableTorchFunction():
            recorder.call(backward, "backward", [t], {"retain_graph": True})
    except RuntimeError as error:
        if _FREED not in str(error):
            return None  # the learner's backward raised: the call says so, with its steps
        recorder.calls.clear()
        return Note("notebook.freed", {"name": name})
    return Note("notebook.rehearsal", {"name": name})


@contextmanager
def _grads_kept(tensors: list[torch.Tensor]) -> Iterator[None]:
    """Every tensor's .grad as it was before, afterwards: the same object, the same values
    (AccumulateGrad adds into an existing .grad in place)."""
    kept = [(t, t.grad, None if t.grad is None else t.grad.detach().clone()) for t in tensors]
    try:
        yield
    finally:
        with torch.no_grad():
            for t, grad, values in kept:
                if grad is not None and values is not None:
                    grad.copy_(values)
                t.grad = grad


def _names_in_graph(t: torch.Tensor, fns: list[Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """The caller's names for t and the tensors and modules of its graph; t is always there."""
    nodes = {id(f) for f in fns}
    leaves = {id(f.variable) for f in fns if type(f).__name__ == "AccumulateGrad"}

    def in_graph(value: object) -> bool:
        if isinstance(value, torch.Tensor):
            return value is t or id(value) in leaves or id(grad_fn_of(value)) in nodes
        if isinstance(value, torch.nn.Module):
            return any(id(p) in leaves for p in value.parameters())
        return False

    names = {name: value for name, value in namespace.items()
             if not _hidden(name) and in_graph(value)}
    if not any(value is t for value in names.values()):
        names[UNNAMED] = t
    return names


def _cell_names(after: dict[str, Any], before: dict[str, Any],
                recorder: GraphRecorder) -> dict[str, Any]:
    """The names the cell bound, and those of what the run used: not the whole notebook's."""
    used = set(recorder.produced) | {id(m) for _, m in recorder.module_outputs.values()}
    for produced in recorder.produced.values():
        used.update(id(x) for x in produced.inputs)
    for call in recorder.calls:
        used.update(id(r) for r in call.roots)
    for event in recorder.optimizer_events:
        used.update(id(p.param) for p in event.params)
    missing = object()
    return {name: value for name, value in after.items() if not _hidden(name)
            and (before.get(name, missing) is not value or id(value) in used)}


def _hidden(name: str) -> bool:
    """IPython's own names for past outputs and inputs (_, __, _7, _i7) and private ones."""
    return name.startswith("_")


def _device(recorder: GraphRecorder) -> torch.device:
    first = next(iter(recorder.produced.values()), None)
    return first.tensor.device if first is not None else torch.device("cpu")
