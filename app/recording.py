"""GraphRecorder: watches one program run for the graph lab.

It sees what the final variables cannot show: the order in which the autograd engine really
ran each backward call (a prehook and a hook on every node, registered just before the call
and removed right after), the tensors the saved-for-backward buffers held before backward
freed them, which nn.Module call made each tensor, and every gradcheck's verdict (gradchecks.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from app.errors import TooLarge
from app.gradchecks import GRADCHECKS, GradcheckRecord, run_gradcheck
from app.sandbox.limits import Limits
from app.tensors import all_finite, numel_budget, plain_and_finite, to_plain

TRACED_CALLS = 20  # backward calls traced step by step; later ones still run, untraced
_AUTOGRAD = {id(torch.autograd.grad): "grad", id(torch.autograd.backward): "backward"}


@dataclass(slots=True)
class Step:
    fn: Any
    grad_outputs: list[Any]
    grad_inputs: list[tuple[Any, Any]] = field(default_factory=list)  # (grad, local) per input
    nonfinite: bool = False


@dataclass(slots=True)
class BackwardCall:
    index: int
    kind: str
    line: int
    roots: list[torch.Tensor]
    create_graph: bool
    retain_graph: bool
    steps: list[Step] = field(default_factory=list)
    leaf_grads: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # id(fn): (fn, grad)
    error: str | None = None
    results: tuple[torch.Tensor, ...] = ()


def walk(roots: list[Any], limit: int,
         parents: dict[int, tuple[tuple[Any, int], ...]] | None = None) -> list[Any]:
    """The grad_fn nodes reachable from roots, breadth first (as torch's iter_graph walks).

    `parents`, when given, keeps each node's next_functions by id: torch builds that tuple
    anew at every read, and a trace asks for it again for edges and backward steps.
    """
    order = [fn for fn in dict.fromkeys(roots) if fn is not None]
    seen = {id(fn) for fn in order}
    for fn in order:  # the list is the queue: a node appended here is visited in turn
        nexts = fn.next_functions
        if parents is not None:
            parents[id(fn)] = nexts
        for parent, _ in nexts:
            if parent is not None and id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
                if len(order) > limit:
                    raise graph_too_large(limit)
    return order


def graph_too_large(limit: int) -> TooLarge:
    """The one error for a graph past the node limit, from the walk or from the trace."""
    return TooLarge(f"the graph has more than {limit:,} nodes", hint_key="hint.graph_too_large")


def saved_tensors(fn: Any) -> list[tuple[str, Any]]:
    """What a node saved for backward, read the way torchviz's show_saved reads it."""
    saved = []
    for attr in _saved_names(type(fn)):
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed by an earlier backward
            continue
        saved.append((attr.removeprefix("_saved_"), value))
    return saved


_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def _saved_names(node_type: type) -> tuple[str, ...]:
    # The _saved_ properties belong to the node's class (one per op), so dir() of each
    # node, a few microseconds apiece, tells nothing the first one of its class did not.
    # (A custom Function's ctx has attributes of its own, but a program cannot name one _x.)
    if node_type not in _SAVED_NAMES:
        _SAVED_NAMES[node_type] = tuple(a for a in dir(node_type) if a.startswith("_saved_"))
    return _SAVED_NAMES[node_type]


class GraphRecorder:
    """A Recorder (see app.sandbox.runtime) that keeps what the graph lab draws."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.muted = False
        self.calls: list[BackwardCall] = []
        self.untraced_calls = 0
        self.gradchecks: list[GradcheckRecord] = []
        self.saved: dict[int, tuple[Any, list[tuple[str, Any]]]] = {}  # id(fn): (fn, saved)
        self.module_outputs: dict[int, tuple[torch.Tensor, Any]] = {}  # id(t): (t, module)
        self._stack: list[Any] = []
        self._handles: list[Any] = []
        self._numel = 1_000

    # --- the whole run: which module call made each tensor -------------------------------------

    def __enter__(self) -> GraphRecorder:
        hooks = torch.nn.modules.module
        # always_call: a forward that raises (and that the program catches) leaves its module
        # too, or every later op would be drawn inside it
        self._handles = [hooks.register_module_forward_pre_hook(self._enter_module),
                         hooks.register_module_forward_hook(self._leave_module, always_call=True)]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _enter_module(self, module: Any, inputs: Any) -> None:
        self._stack.append(module)

    def _leave_module(self, module: Any, inputs: Any, output: Any) -> None:
        if self._stack:
            self._stack.pop()
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        for t in outputs:
            if isinstance(t, torch.Tensor) and id(t) not in self.module_outputs \
                    and len(self.module_outputs) < self.limits.graph_nodes:
                self.module_outputs[id(t)] = (t, module)  # the innermost module wins

    def made(self, tensor: torch.Tensor) -> None:
        # torch.tanh(self.fc1(x)) in a Net's forward: the tanh is the Net call's, though no
        # module returned it (the graph lab draws each module call as one box).
        if self._stack and id(tensor) not in self.module_outputs and \
                len(self.module_outputs) < self.limits.graph_nodes:
            self.module_outputs[id(tensor)] = (tensor, self._stack[-1])

    def let_go(self, named: set[int]) -> None:
        """At the memory limit (Runtime._let_go): forget module outputs the program does not
        name, and the saved tensors read before each backward call (a trace reads a reachable
        node's again, where backward has not freed them)."""
        self.module_outputs = {key: value for key, value in self.module_outputs.items()
                               if key in named}
        self.saved.clear()

    # --- backward calls ------------------------------------------------------------------------

    def intercepts(self, fn: object) -> bool:
        if id(fn) in _AUTOGRAD or id(fn) in GRADCHECKS:
            return True
        return getattr(fn, "__name__", None) == "backward" and \
            isinstance(getattr(fn, "__self__", None), torch.Tensor)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if id(fn) in GRADCHECKS:
            return self._gradcheck(fn, args, kwargs, line)
        if len(self.calls) >= TRACED_CALLS:
            self.untraced_calls += 1
            return fn(*args, **kwargs)
        with torch._C.DisableTorchFunction():  # the recorder's reads, not the program's
            call = self._describe(fn, args, kwargs, line)
            fns = walk([t.grad_fn for t in call.roots], self.limits.graph_nodes)
            for node in fns:
                self.saved.setdefault(id(node), (node, saved_tensors(node)))
        self._numel = numel_budget(2 * len(fns))  # each node sends what arrived and what left
        handles = []
        try:
            for node in fns:
                handles.append(node.register_prehook(self._prehook(call, node)))
                if type(node).__name__ != "AccumulateGrad":  # it sends nothing further back
                    handles.append(node.register_hook(self._hook(call, node)))
            result = _run(fn, args, kwargs)
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            for handle in handles:
                handle.remove()
            with torch._C.DisableTorchFunction():
                for node in fns:
                    if type(node).__name__ == "AccumulateGrad":
                        call.leaf_grads[id(node)] = (node, to_plain(node.variable.grad,
                                                                    self._numel))
            self.calls.append(call)
        if call.kind == "grad":
            call.results = tuple(r for r in result if isinstance(r, torch.Tensor))
        return result

    def _describe(self, fn: Any, args: list[Any], kwargs: dict[str, Any],
                  line: int) -> BackwardCall:
        kind = _AUTOGRAD.get(id(fn), "backward")
        names: tuple[str, ...]
        if kind == "grad":
            names = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph")
        elif id(fn) in _AUTOGRAD:
            names = ("tensors", "grad_tensors", "retain_graph", "create_graph")
        else:  # tensor.backward(gradient, retain_graph, create_graph)
            names = ("tensors", "gradient", "retain_graph", "create_graph")
            args = [fn.__self__, *args]
        bound = dict(zip(names, args, strict=False)) | kwargs
        roots = bound.get("outputs", bound.get("tensors"))
        roots = list(roots) if isinstance(roots, (list, tuple)) else [roots]
        create = bool(bound.get("create_graph", False))
        retain = bound.get("retain_graph")
        return BackwardCall(index=len(self.calls), kind=kind, line=line,
                            roots=[r for r in roots if isinstance(r, torch.Tensor)],
                            create_graph=create, retain_graph=create if retain is None else
                            bool(retain))

    # The hooks run inside the program's backward call, so inside its SizeGuard: their own reads
    # (even t.is_floating_point()) would each go through the guard's __torch_function__.

    def _prehook(self, call: BackwardCall, node: Any) -> Any:
        def prehook(grad_outputs: tuple[Any, ...]) -> None:
            if len(call.steps) < self.limits.graph_nodes:
                with torch._C.DisableTorchFunction():
                    plain, nonfinite = _read(grad_outputs, self._numel)
                call.steps.append(Step(node, plain, nonfinite=nonfinite))
        return prehook

    def _hook(self, call: BackwardCall, node: Any) -> Any:
        def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            step = next((s for s in reversed(call.steps) if s.fn is node), None)
            if step is None:
                return
            with torch._C.DisableTorchFunction():
                plain, nonfinite = _read(grad_inputs, self._numel)
                out = grad_outputs[0] if grad_outputs else None
                out_plain = step.grad_outputs[0] if step.grad_outputs else None
                step.grad_inputs = [(p, _local(g, out, out_plain, self._numel))
                                    for g, p in zip(grad_inputs, plain, strict=True)]
            step.nonfinite = step.nonfinite or nonfinite
        return hook

    # --- gradcheck -----------------------------------------------------------------------------

    def _gradcheck(self, fn: Any, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        self.muted = True  # gradcheck's perturbed runs are not the program's tensors
        record = GradcheckRecord(line=line, passed=False, message=None)
        self.gradchecks.append(record)
        try:
            return run_gradcheck(fn, args, kwargs, record)
        finally:
            self.muted = False


_TENSOR_BACKWARD = ("gradient", "retain_graph", "create_graph")  # its positional parameters
_TENSOR_BACKWARD_KWARGS = frozenset((*_TENSOR_BACKWARD, "inputs"))


def _run(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """fn(*args, **kwargs); for `tensor.backward(...)`, the torch.autograd.backward call it makes.

    Tensor.backward only hands its arguments on to torch.autograd.backward, but first goes
    through torch's Python dispatch to the run's SizeGuard, which has nothing to measure in it
    (it makes no tensor; torch checks the gradient's shape): 15 us of S2's 620. The ops that
    backward runs, a custom Function's among them, are measured as before: the mode stays on.
    Arguments Tensor.backward would refuse go to it, for its own error.
    """
    if getattr(fn, "__func__", None) is torch.Tensor.backward and len(args) <= 3 \
            and kwargs.keys() <= _TENSOR_BACKWARD_KWARGS \
            and not kwargs.keys() & set(_TENSOR_BACKWARD[:len(args)]):
        named = dict(zip(_TENSOR_BACKWARD, args, strict=False)) | kwargs
        gradient = named.pop("gradient", None)
        return torch.autograd.backward(fn.__self__, gradient, **named)
    return fn(*args, **kwargs)


def _read(grads: tuple[Any, ...], numel: int) -> tuple[list[Any], bool]:
    """Each gradient as a plain value, and whether a floating one holds a NaN or infinity."""
    plain, nonfinite = [], False
    for g in grads:
        value, finite = plain_and_finite(g, numel)
        plain.append(value)
        if isinstance(g, torch.Tensor) and g.is_floating_point():
            # finite is None for a summary, which read only a few of the values
            nonfinite = nonfinite or not (all_finite(g) if finite is None else finite)
    return plain, nonfinite


def _local(grad_in: Any, grad_out: Any, out_plain: Any, numel: int) -> Any:
    """∂out/∂in for elementwise ops: what the chain rule multiplied grad_out by.

    `out_plain` is grad_out as the prehook read it: a small one is checked for zeros there.
    """
    if not isinstance(grad_in, torch.Tensor) or not isinstance(grad_out, torch.Tensor) \
            or grad_in.shape != grad_out.shape:
        return None
    small = grad_out.numel() <= _ZERO_CHECK_NUMEL and not grad_out.is_complex()
    zero = _has_zero(out_plain) if small else None
    if zero if zero is not None else bool((grad_out == 0).any()):
        return None
    return to_plain(grad_in / grad_out, numel)


_ZERO_CHECK_NUMEL = 64  # up to here a walk of the plain list beats two torch ops


def _has_zero(plain: Any) -> bool | None:
    """Whether a plain tensor value holds a 0 (None: a summary, which cannot tell)."""
    if isinstance(plain, list):
        found = False
        for value in plain:
            inner = _has_zero(value)
            if inner is None:
                return None
            found = found or inner
        return found
    if isinstance(plain, dict):
        return None
    return plain == 0  # "NaN" and "Infinity" are not 0
