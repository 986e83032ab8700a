"""GraphRecorder: watches one program's run for the graph lab.

It sees what the final variables cannot show: every tensor the program made, with its line,
the op and its inputs, and the grad mode (a TorchFunctionMode, until the graph lab has enough:
`graph_nodes` tensors, or its traced backward calls); which nn.Module call made each tensor
(global module hooks); the order in which the autograd engine really ran each backward call
(a prehook and a hook on every node, registered just before the call and removed after); each
constant an op used, as it used it (its version then, and its value before an in-place change);
the tensors the saved-for-backward buffers held before backward freed them; and every gradcheck's
verdict (gradchecks.py). The program runs as CPython runs it; the recorder only looks on.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.overrides import TorchFunctionMode

from gradient_lab.errors import TooLarge
from gradient_lab.graph.gradchecks import GradcheckRecord, run_gradcheck
from gradient_lab.runner.child.program import is_the_program, program_line
from gradient_lab.runner.limits import Limits
from gradient_lab.tensors import (
    all_finite,
    grad_fn_of,
    heat_cells,
    largest_change,
    numel_budget,
    plain_and_finite,
    plain_heat,
    to_plain,
    version_of,
)

TRACED_CALLS = 20  # backward calls traced step by step; later ones still run, untraced
_RECORDED_BYTES = 64 << 20  # the tensors' memory the records may keep alive
OPTIMIZER_EVENTS = 40  # optimizer.step() and zero_grad() calls recorded
_OPTIMIZER_VALUES = 60_000  # the values all those records may send, in all
_OPTIMIZER_NUMEL = 64  # values of one tensor sent in full; a larger one is summarised
_HEAT_VALUES = 100_000  # values the step() heat maps may send (2 MB); later steps summarise
_HELD_BYTES = 64 << 20  # a step()'s parameters copied to find each one's largest change
_BEFORE_VALUES = 100_000  # values of constants read just before an in-place change, in all


@dataclass(frozen=True, slots=True)
class Produced:
    """A tensor the program made: the line, the operation and its inputs, and the grad mode."""

    tensor: torch.Tensor
    line: int
    op: str = ""
    inputs: tuple[object, ...] = ()  # the tensor and number arguments, as given
    grad_enabled: bool = True


@dataclass(slots=True)
class RecordedStep:
    fn: Any
    grad_outputs: list[Any]
    grad_inputs: list[tuple[Any, Any]] = field(default_factory=list)  # (grad, local) per input
    nonfinite: bool = False


@dataclass(slots=True)
class ParamUpdate:
    """One parameter as optimizer.step() (or zero_grad()) found it and left it."""

    param: torch.Tensor
    before: Any  # the value (zero_grad: the .grad) before
    grad: Any  # the .grad step() read; None for zero_grad
    after: Any = None
    state: dict[str, Any] = field(default_factory=dict)  # the optimizer's, after the step
    largest: dict[str, Any] | None = None  # the element that moved most, of all of them
    held: torch.Tensor | None = None  # a copy of the value before, until step() returns


@dataclass(slots=True)
class OptimizerEvent:
    """optimizer.step() or a zero_grad() call, after the backward call `after_call`."""

    kind: str  # "step" or "zero_grad"
    line: int
    owner: Any  # the optimizer, or the module whose zero_grad() this was
    after_call: int | None
    settings: dict[str, Any]
    params: list[ParamUpdate]
    set_to_none: bool | None = None


@dataclass(slots=True)
class BackwardCall:
    index: int
    kind: str
    line: int
    roots: list[torch.Tensor]
    create_graph: bool
    retain_graph: bool
    steps: list[RecordedStep] = field(default_factory=list)
    leaf_grads: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # id(fn): (fn, grad)
    leaf_values: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # id(fn): (fn, value)
    # id(t): (t, t._version, value): each constant as this call's forward used it
    constant_values: dict[int, tuple[torch.Tensor, int, Any]] = field(default_factory=dict)
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
    """Keeps what the graph lab draws of one run: enter it around the program."""

    def __init__(self, limits: Limits,
                 is_program: Callable[[str], bool] = is_the_program) -> None:
        self.limits = limits
        self.is_program = is_program  # which code is the program's, by its file
        self.muted = False  # while True (gradcheck's perturbed runs), nothing is recorded
        self.saved_tensors_hooked = False  # the program set hooks on saved tensors
        self.recording = True  # until there is enough to draw
        self.produced: dict[int, Produced] = {}  # id(tensor): what made it, in order
        self.calls: list[BackwardCall] = []
        self.untraced_calls = 0
        self.gradchecks: list[GradcheckRecord] = []
        self.optimizer_events: list[OptimizerEvent] = []
        self._optimizer_values = 0
        self._heat_values = 0  # of them, sent for the step() heat maps
        self._heat = False  # whether the step() under way sends its heat maps
        self._step: OptimizerEvent | None = None  # the step() under way
        self.saved: dict[int, tuple[Any, list[tuple[str, Any]]]] = {}  # id(fn): (fn, saved)
        # id(fn): (fn, [(t, t._version)]): the constants each op of a graph used, as it used them
        self.constants: dict[int, tuple[Any, list[tuple[torch.Tensor, int]]]] = {}
        self.used: dict[int, int] = {}  # id(t): the version of t the last such op used
        self._before: dict[tuple[int, int], Any] = {}  # (id(t), version): t read before a change
        self._before_values = 0
        self.module_outputs: dict[int, tuple[torch.Tensor, Any]] = {}  # id(t): (t, module)
        self._stack: list[Any] = []
        self._handles: list[Any] = []
        self._patched: list[tuple[Any, str, Any]] = []  # (owner, name, torch's own)
        self._mode = _Made(self)
        self._watching = False  # the mode and the hooks are on
        self._next_id = 1 << 48  # the recorder's hooks' handle ids, far from the program's
        self._inside = False  # in a backward or grad call already
        self._bytes = 0
        self._numel = 1_000

    def __enter__(self) -> GraphRecorder:
        hooks = torch.nn.modules.module
        # always_call: a forward that raises (and that the program catches) leaves its module
        # too, or every later op would be drawn inside it
        with self._numbered_apart():
            self._handles = [
                hooks.register_module_forward_pre_hook(self._enter_module),
                hooks.register_module_forward_hook(self._leave_module, always_call=True),
                register_optimizer_step_pre_hook(self._stepping),
                register_optimizer_step_post_hook(self._stepped)]
        autograd = torch.autograd
        checks = sys.modules["torch.autograd.gradcheck"]
        for owner, name, wrap in (
                (autograd.graph.saved_tensors_hooks, "__init__", self._hooks_saved_tensors),
                (autograd, "backward", self._backward), (autograd, "grad", self._backward),
                (autograd, "gradcheck", self._gradcheck), (checks, "gradcheck", self._gradcheck),
                (autograd, "gradgradcheck", self._gradcheck),
                (checks, "gradgradcheck", self._gradcheck),
                (torch.optim.Optimizer, "zero_grad", self._zero_grad),
                (torch.nn.Module, "zero_grad", self._zero_grad)):
            self._patched.append((owner, name, getattr(owner, name)))
            setattr(owner, name, wrap(getattr(owner, name), name))
        self._mode.__enter__()
        self._watching = True
        return self

    @contextmanager
    def _numbered_apart(self) -> Iterator[None]:
        """The recorder's hooks, numbered apart: torch numbers every hook's handle from one
        counter, and a program that prints its handles' ids must see what plain Python shows."""
        counter = torch.utils.hooks.RemovableHandle
        theirs, counter.next_id = counter.next_id, self._next_id
        try:
            yield
        finally:
            self._next_id, counter.next_id = counter.next_id, theirs

    def __exit__(self, *exc: object) -> None:
        self._stop_recording()
        for handle in self._handles:
            handle.remove()
        for owner, name, original in reversed(self._patched):
            setattr(owner, name, original)
        self._handles, self._patched = [], []

    def _line(self) -> int | None:
        """The program's line running now (None: the program is not on the stack)."""
        return program_line(sys._getframe(1), self.is_program)

    # --- what the program made --------------------------------------------------------------

    def made(self, op: str, args: tuple[Any, ...], result: Any, line: int,
             module: Any = None) -> None:
        """Record the tensors a call on one of the program's lines returned."""
        outputs = result if isinstance(result, (tuple, list)) and len(result) <= 64 else (result,)
        for t in outputs:
            if not isinstance(t, torch.Tensor) or id(t) in self.produced or _transformed(t):
                continue
            self._bytes += t.element_size() * t.numel() if not t.is_meta else 0
            if len(self.produced) >= self.limits.graph_nodes or self._bytes > _RECORDED_BYTES:
                self.recording = False
                return
            inputs = tuple(x for x in args[:8] if isinstance(x, (torch.Tensor, int, float)))
            self.produced[id(t)] = Produced(t, line, op, inputs, torch.is_grad_enabled())
            self._note_constants(t, inputs)
            # torch.tanh(self.fc1(x)) in a Net's forward: the tanh is the Net call's, though
            # no module returned it (the graph lab draws each module call as one box).
            module = module or (self._stack[-1] if self._stack else None)
            if module is not None and id(t) not in self.module_outputs:
                self.module_outputs[id(t)] = (t, module)

    def _note_constants(self, t: torch.Tensor, inputs: tuple[Any, ...]) -> None:
        """The constants an op of the graph used, with their versions: the program may change
        one in place afterwards (a loop's input, a refilled batch), and each backward call
        shows it as its own forward used it."""
        with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
            if not t.requires_grad or (fn := grad_fn_of(t)) is None:
                return
            used = [(x, v) for x in inputs if isinstance(x, torch.Tensor)
                    and not x.requires_grad and (v := version_of(x)) is not None]
            if used:
                self.constants[id(fn)] = (fn, used)
                self.used.update((id(x), v) for x, v in used)

    def changing(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> None:
        """Before an in-place op: a constant an op used, about to change before the backward
        call that shows it, read as that op used it (forward, x.add_(1), then backward)."""
        name = _op_name(func)
        if not (name.endswith("_") and not name.startswith("__")) and name != "__setitem__" \
                and not (kwargs and "out" in kwargs):
            return
        with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
            for x in (*args[:1], *(kwargs or {}).values()):
                if not isinstance(x, torch.Tensor):
                    continue
                x = x if x._base is None else x._base  # x[0].add_(1) changes x
                version = self.used.get(id(x))
                if version is None or version != version_of(x) or \
                        self._before_values >= _BEFORE_VALUES:
                    continue
                self._before_values += min(x.numel(), self._numel)
                self._before[(id(x), version)] = to_plain(x.detach(), self._numel)

    def _constant_values(self, call: BackwardCall, fns: list[Any]) -> None:
        """Each constant feeding this call's ops as they used it: now, unless it changed
        since (its version moved on), then as read just before that change."""
        values = call.constant_values
        for node in fns:
            _, used = self.constants.get(id(node), (None, []))
            for x, version in used:
                if id(x) in values:
                    continue
                if version_of(x) == version:
                    values[id(x)] = (x, version, to_plain(x.detach(), self._numel))
                elif (id(x), version) in self._before:
                    values[id(x)] = (x, version, self._before[(id(x), version)])

    def _stop_recording(self) -> None:
        """Take the mode and the module and optimizer hooks off once there is enough to draw:
        each costs every torch call or layer call of a long loop. The mode comes off only
        where it is the innermost one (not inside another torch call)."""
        self.recording = False
        if self._watching and torch.overrides._get_current_function_mode() is self._mode:
            self._mode.__exit__(None, None, None)
            for handle in self._handles:
                handle.remove()
            self._handles, self._watching = [], False

    def _enter_module(self, module: Any, inputs: Any) -> None:
        if not self.recording:
            self._stop_recording()  # a module call runs at the program's own level
            return
        self._stack.append(module)

    def _leave_module(self, module: Any, inputs: Any, output: Any) -> None:
        if not self.recording:
            return
        if self._stack:
            self._stack.pop()
        # What a layer returns is the program's tensor, made on the line that called it (the
        # ops inside torch's own forward are not the program's, and are not recorded).
        if self.recording and not self.muted and (line := self._line()) is not None:
            self.made(type(module).__name__, tuple(inputs), output, line, module)

    # --- what optimizer.step() and zero_grad() did ------------------------------------------

    def _watching_optimizer(self) -> bool:
        return (self.recording and not self.muted and len(self.calls) <= TRACED_CALLS
                and len(self.optimizer_events) < OPTIMIZER_EVENTS
                and self._optimizer_values < _OPTIMIZER_VALUES)

    def _plain(self, t: torch.Tensor | None, heat: bool = False) -> Any:
        """t as the step() table shows it: a heat map's values when `heat`, else a summary
        past _OPTIMIZER_NUMEL values (zero_grad's, and a step() past the heat maps' budget)."""
        if t is None:
            return None
        self._optimizer_values += min(t.numel(), _OPTIMIZER_NUMEL)
        if heat:
            self._heat_values += heat_cells(t)
            return plain_heat(t.detach())
        return to_plain(t.detach(), _OPTIMIZER_NUMEL)

    def _stepping(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """Before optimizer.step(): each parameter it will move, with the .grad it will read."""
        if not self._watching_optimizer() or (line := self._line()) is None:
            return
        with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
            moving = [p for group in optimizer.param_groups for p in group["params"]
                      if p.grad is not None]
            # before, .grad, after and two tensors of state (Adam's) each, or none of it
            cost = 5 * sum(heat_cells(p) for p in moving)
            self._heat = self._heat_values + cost <= _HEAT_VALUES
            params, held = [], 0
            for p in moving:
                held += p.numel() * p.element_size()
                params.append(ParamUpdate(p, self._plain(p, self._heat),
                                          self._plain(p.grad, self._heat),
                                          held=p.detach().clone() if held <= _HELD_BYTES else None))
            self._step = OptimizerEvent(
                "step", line, optimizer, len(self.calls) - 1 if self.calls else None,
                _settings(optimizer.param_groups[0]), params)

    def _stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        event, self._step = self._step, None
        if not self.recording:
            self._stop_recording()  # optimizer.step() too
            return
        if event is None or event.owner is not optimizer:
            return
        self.optimizer_events.append(event)
        with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
            for update in event.params:
                update.after = self._plain(update.param, self._heat)
                if update.held is not None:
                    update.largest = largest_change(update.held, update.param)
                    update.held = None
                update.state = {key: self._plain(value, self._heat)
                                if isinstance(value, torch.Tensor) else value
                                for key, value in optimizer.state[update.param].items()}

    def _zero_grad(self, fn: Any, name: str) -> Any:
        def zero_grad(owner: Any, *args: Any, **kwargs: Any) -> Any:
            if not self._watching_optimizer() or (line := self._line()) is None:
                return fn(owner, *args, **kwargs)
            with torch._C.DisableTorchFunction():
                params = list(owner.parameters()) if isinstance(owner, torch.nn.Module) else \
                    [p for group in owner.param_groups for p in group["params"]]
                held = [ParamUpdate(p, self._plain(p.grad), None) for p in params
                        if p.grad is not None]
            result = fn(owner, *args, **kwargs)
            if held:  # a zero_grad() with no gradient to clear changes nothing to show
                with torch._C.DisableTorchFunction():
                    for update in held:
                        update.after = self._plain(update.param.grad)
                set_to_none = all(u.param.grad is None for u in held)
                self.optimizer_events.append(OptimizerEvent(
                    "zero_grad", line, owner, len(self.calls) - 1 if self.calls else None,
                    {}, held, set_to_none))
            return result
        return _like(fn, zero_grad)


    # --- backward calls ---------------------------------------------------------------------

    def _backward(self, fn: Any, name: str) -> Any:
        def backward(*args: Any, **kwargs: Any) -> Any:
            if self._inside:  # torch.autograd.grad handing itself to a TorchFunctionMode
                return fn(*args, **kwargs)
            self._inside = True
            try:
                return self.call(fn, name, list(args), kwargs)
            finally:
                self._inside = False
        return _like(fn, backward)

    def call(self, fn: Any, kind: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """fn(*args, **kwargs), a backward or grad call, traced node by node if among the first."""
        if self.muted or torch._C._functorch.maybe_current_level() is not None:
            return fn(*args, **kwargs)  # gradcheck's, or torch.func's own (jacrev inside vmap)
        if len(self.calls) >= TRACED_CALLS:
            self.untraced_calls += 1
            return fn(*args, **kwargs)
        with torch._C.DisableTorchFunction():  # the recorder's reads, not the program's
            call = _describe(kind, args, kwargs, len(self.calls), self._line() or 0)
            try:
                fns = walk([t.grad_fn for t in call.roots], self.limits.graph_nodes)
                # Reading a saved tensor runs the program's unpack hook, if it set one
                # (saved_tensors_hooks): its output would change. Then the values wait for
                # the trace, after the program, where backward has not freed them.
                if not self.saved_tensors_hooked:
                    for node in fns:
                        self.saved.setdefault(id(node), (node, saved_tensors(node)))
            except Exception:  # noqa: BLE001 - a graph it cannot walk: the call runs untraced
                self.untraced_calls += 1
                return fn(*args, **kwargs)
        self._numel = numel_budget(2 * len(fns))  # each node sends what arrived and what left
        # Each leaf as this call's forward used it: a training loop's step() moves the
        # parameters in place afterwards, and the trace, after the program, sees only the last.
        with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
            for node in fns:
                if type(node).__name__ == "AccumulateGrad":
                    call.leaf_values[id(node)] = (node, to_plain(node.variable.detach(),
                                                                 self._numel))
            self._constant_values(call, fns)
        handles = []
        try:
            with self._numbered_apart():
                for node in fns:
                    handles.append(node.register_prehook(self._prehook(call, node)))
                    if type(node).__name__ != "AccumulateGrad":  # sends nothing further back
                        handles.append(node.register_hook(self._hook(call, node)))
            result = fn(*args, **kwargs)
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            for handle in handles:
                handle.remove()
            with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
                for node in fns:
                    if type(node).__name__ == "AccumulateGrad":
                        call.leaf_grads[id(node)] = (node, to_plain(node.variable.grad,
                                                                    self._numel))
            self.calls.append(call)
            if len(self.calls) >= TRACED_CALLS:
                self.recording = False
        if call.kind == "grad":
            call.results = tuple(r for r in result if isinstance(r, torch.Tensor))
            if self.recording:  # the gradients are the program's tensors: grad_1 = grad(...)[0]
                self.made("grad", (), call.results, call.line)
        return result

    # The hooks run inside the program's backward: whatever they cannot read (a tensor
    # subclass's gradient) they leave out, and the program's backward runs on regardless.

    def _prehook(self, call: BackwardCall, node: Any) -> Any:
        def prehook(grad_outputs: tuple[Any, ...]) -> None:
            if len(call.steps) >= self.limits.graph_nodes:
                return
            with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
                plain, nonfinite = _read(grad_outputs, self._numel)
                call.steps.append(RecordedStep(node, plain, nonfinite=nonfinite))
        return prehook

    def _hook(self, call: BackwardCall, node: Any) -> Any:
        def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            step = next((s for s in reversed(call.steps) if s.fn is node), None)
            if step is None:
                return
            with torch._C.DisableTorchFunction(), contextlib.suppress(Exception):
                plain, nonfinite = _read(grad_inputs, self._numel)
                out = grad_outputs[0] if grad_outputs else None
                out_plain = step.grad_outputs[0] if step.grad_outputs else None
                step.grad_inputs = [(p, _local(g, out, out_plain, self._numel))
                                    for g, p in zip(grad_inputs, plain, strict=True)]
                step.nonfinite = step.nonfinite or nonfinite
        return hook

    def _hooks_saved_tensors(self, init: Any, name: str) -> Any:
        def hooked(*args: Any, **kwargs: Any) -> None:
            self.saved_tensors_hooked = True
            init(*args, **kwargs)
        return _like(init, hooked)

    # --- gradcheck ----------------------------------------------------------------------------

    def _gradcheck(self, fn: Any, name: str) -> Any:
        def gradcheck(*args: Any, **kwargs: Any) -> Any:
            # gradcheck's perturbed runs are not the program's tensors
            record = GradcheckRecord(line=self._line() or 0, passed=False, message=None)
            self.gradchecks.append(record)
            muted, self.muted = self.muted, True
            try:
                return run_gradcheck(fn, list(args), kwargs, record)
            finally:
                self.muted = muted
        return _like(fn, gradcheck)


class _Made(TorchFunctionMode):
    """Tells the recorder of each torch call the program makes, with what it returned."""

    def __init__(self, recorder: GraphRecorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        recorder = self.recorder
        if recorder.used and recorder.recording and not recorder.muted:
            recorder.changing(func, args, kwargs)  # before an in-place op changes a constant
        result = func(*args, **(kwargs or {}))
        if recorder.recording and not recorder.muted and \
                torch._C._functorch.maybe_current_level() is None:
            # Only the program's own calls: not those torch's Python makes for it (inside
            # optimizer.step() or a layer's forward), which the learner never wrote.
            caller = _caller(func, sys._getframe(1))
            if caller is not None and recorder.is_program(caller.f_code.co_filename):
                recorder.made(_op_name(func), args, result, caller.f_lineno)
        return result


def _op_name(func: Any) -> str:
    """What the program called: `mul`, `detach`; a property read (x.grad, x.data, x.T) by
    the property's name, not its `__get__`."""
    name = getattr(func, "__name__", "")
    if name == "__get__":
        return str(getattr(getattr(func, "__self__", None), "__name__", name))
    return str(name)


def _caller(func: Any, frame: FrameType | None) -> FrameType | None:
    """The frame that called func: past torch's dispatch and func's own frame, where func is
    Python (F.mse_loss, a tensor operator's wrapper) that handed itself to the mode."""
    codes = {torch.overrides.handle_torch_function.__code__}
    while func is not None:
        code = getattr(func, "__code__", None)
        if code is not None:
            codes.add(code)
        func = getattr(func, "__wrapped__", None)
    while frame is not None and frame.f_code in codes:
        frame = frame.f_back
    return frame


_HOW = ("foreach", "fused", "capturable", "differentiable", "maximize")  # not what it computes


def _settings(group: dict[str, Any]) -> dict[str, Any]:
    """A parameter group's hyperparameters (lr, momentum, betas, ...) as plain numbers."""
    plain: dict[str, Any] = {}
    for key, value in group.items():
        if key in _HOW and not value:
            continue
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, (bool, int, float)) or (
                isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)):
            plain[key] = list(value) if isinstance(value, tuple) else value
    return plain


def _transformed(t: torch.Tensor) -> bool:
    """A tensor inside torch.func's vmap or grad: a wrapper that is gone once the transform
    returns, with no values of its own to draw."""
    return bool(torch._C._functorch.is_functorch_wrapped_tensor(t))


def _like(original: Any, wrapper: Any) -> Any:
    """wrapper, looking like torch's own function to a program that prints or inspects it."""
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
        value = getattr(original, attribute, None) if attribute != "__wrapped__" else original
        if value is not None:
            setattr(wrapper, attribute, value)
    return wrapper


def _describe(kind: str, args: list[Any], kwargs: dict[str, Any], index: int,
              line: int) -> BackwardCall:
    """A backward call's roots and flags, from torch.autograd.backward's or grad's arguments
    (tensor.backward() hands its own on to torch.autograd.backward)."""
    names: tuple[str, ...]
    if kind == "grad":
        names = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph")
    else:
        names = ("tensors", "grad_tensors", "retain_graph", "create_graph")
    bound = dict(zip(names, args, strict=False)) | kwargs
    roots = bound.get("outputs", bound.get("tensors"))
    roots = list(roots) if isinstance(roots, (list, tuple)) else [roots]
    create = bool(bound.get("create_graph", False))
    retain = bound.get("retain_graph")
    return BackwardCall(index=index, kind=kind, line=line,
                        roots=[r for r in roots if isinstance(r, torch.Tensor)],
                        create_graph=create,
                        retain_graph=create if retain is None else bool(retain))


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
