"""One run's state, and the checked operations that expressions and statements share.

Runtime holds what a run keeps (limits, steps, stdout, the tensors made, the size guard) and does
the work that evaluator.py and statements.py both go through: calls, operators, items,
assignment, iteration, imports and print, each checked against the allow-list and the limits.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import numpy
import torch

from app.errors import Disallowed, TooLarge
from app.sandbox import allowlist as al
from app.sandbox import guards, sizes
from app.sandbox.builtins import EXCEPTIONS, PLAIN, builtins_for
from app.sandbox.limits import Limits
from app.sandbox.scope import Scope
from app.sandbox.size_guard import MemoryMeter, SizeGuard
from app.sandbox.tensor_text import TensorText

if TYPE_CHECKING:
    from app.sandbox.functions import UserFunction


class AppReads:
    """Writing a value as text (print, f-strings), once check_text has bounded how long it can be.

    torch's tensor formatting runs a score of ops on what the program already made, which the
    SizeGuard would otherwise measure one by one (two thirds of printing a small tensor); and
    TensorText writes a small tensor's text in Python, without torch's ops (most of the rest).

    A class, not a @contextmanager: a print is a few microseconds, and the generator's
    entering and leaving were a fifth of them.
    """

    __slots__ = ("_off",)

    def __enter__(self) -> None:
        self._off = torch._C.DisableTorchFunction()
        self._off.__enter__()
        _TEXT.__enter__()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _TEXT.__exit__(kind, error, traceback)
        self._off.__exit__(kind, error, traceback)


_TEXT = TensorText()  # it holds nothing: entering swaps torch's two printing functions


class Recorder(Protocol):
    """Watches a run for the graph lab (app/recording.py); the interpreter knows only this."""

    muted: bool  # while True, tensors made are not recorded (e.g. gradcheck's perturbed runs)

    def intercepts(self, fn: object) -> bool: ...

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], line: int) -> Any: ...

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> None: ...

    def let_go(self, named: set[int]) -> None:
        """Drop what is kept of tensors whose ids are not in `named` (see Runtime._let_go)."""

    def made(self, tensor: torch.Tensor) -> None:
        """The program's own code made tensor (in a module's forward, it is that module's)."""


_NAMESPACES = al.build_namespaces()
_PRELUDE = {"torch": _NAMESPACES["torch"], "nn": _NAMESPACES["torch.nn"],
            "F": _NAMESPACES["torch.nn.functional"], "optim": _NAMESPACES["torch.optim"]}


def _callables(spaces: Iterable[al.Namespace]) -> set[int]:
    ids: set[int] = set()
    for space in spaces:
        ids.update(id(v) for v in space.members.values() if callable(v))
        ids |= _callables(v for v in space.members.values() if isinstance(v, al.Namespace))
    return ids


_SHARED_BUILTINS = {**PLAIN, **EXCEPTIONS, **_PRELUDE}
_BUILTIN_IDS = {id(v) for v in _SHARED_BUILTINS.values() if callable(v)}
# What a program may call, but for the builtins each run makes (Runtime._made_ids) and its own
# functions: the allow-list's callables and the shared builtins.
_ALLOWED_IDS = _callables(_NAMESPACES.values()) | _BUILTIN_IDS

_BINARY: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any], Callable[[Any, Any], Any]]]
_BINARY = {
    ast.Add: ("+", operator.add, operator.iadd), ast.Sub: ("-", operator.sub, operator.isub),
    ast.Mult: ("*", operator.mul, operator.imul),
    ast.Div: ("/", operator.truediv, operator.itruediv),
    ast.FloorDiv: ("//", operator.floordiv, operator.ifloordiv),
    ast.Mod: ("%", operator.mod, operator.imod), ast.Pow: ("**", operator.pow, operator.ipow),
    ast.MatMult: ("@", operator.matmul, operator.imatmul),
    ast.LShift: ("<<", operator.lshift, operator.ilshift),
    ast.RShift: (">>", operator.rshift, operator.irshift),
    ast.BitAnd: ("&", operator.and_, operator.iand), ast.BitOr: ("|", operator.or_, operator.ior),
    ast.BitXor: ("^", operator.xor, operator.ixor),
}

# Methods that take a function for torch to call back, and whose they are.
_CALLBACKS = frozenset("""apply register_hook register_prehook register_forward_hook
register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook""".split())
_CALLBACK_OWNERS = (torch.Tensor, torch.nn.Module, torch.autograd.graph.Node)
_CALLBACK_NAMES = frozenset(("hook", "fn", "closure"))  # the parameters that take them
_STEPS = frozenset(("step", "_scheduled_step"))  # optimizer.step(closure), also once scheduled

# Values the sequence limit has measured. Anything else that `in`, `list +=`, `dict |=`,
# `xs[:] =`, extend or update would walk in C (a range, zip(...), a tensor) is walked here first.
SIZED = (str, list, tuple, dict, set, frozenset)


class Runtime:
    """One run's state and the checked operations; evaluator.Evaluator adds the expressions."""

    def __init__(self, limits: Limits, recorder: Recorder | None = None) -> None:
        from app.sandbox.functions import Functions  # one module per concern, no import cycle

        self.limits = limits
        self.recorder = recorder
        self.steps = 0
        self.depth = 0
        self.function: UserFunction | None = None  # the program's function running now
        self.initializing: list[object] = []  # the program's modules whose __init__ runs now
        self.line: int | None = None
        self.stdout: list[str] = []
        self.stdout_bytes = 0
        self.meter = MemoryMeter(limits, self._let_go)
        self._guard = SizeGuard(limits, self.meter, lambda: self.line)
        self._guarding = False
        self.produced: dict[int, Any] = {}
        self.globals = Scope()
        self.functions = Functions(self)
        self.error_line: int | None = None
        made = builtins_for(self)
        self.builtins: dict[str, object] = {**made, **_SHARED_BUILTINS}
        # Not one set with _ALLOWED_IDS: copying that, 400 ids, was a fifth of a run's setup.
        self._made_ids = {id(v) for v in made.values()}
        # list, tuple, dict, set and str are functions here (they count what they take): the
        # classes they stand for, by id, for `type(x) == list` and `isinstance(x, list)`.
        self.stands_for = {id(made[kind.__name__]): kind for kind in (list, tuple, dict, set, str)}

    # hooks the subclasses provide
    def tick(self, cost: int = 1) -> None:
        raise NotImplementedError

    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
        raise NotImplementedError

    def evaluate(self, node: ast.expr, scope: Scope) -> Any:
        raise NotImplementedError

    @contextmanager
    def guarded(self) -> Iterator[None]:
        """Measure every torch call while the program's code runs, however it was called.

        .. note:: A function the program defined can be called after run_program returned
           (the descent lab maps one over a grid with torch.vmap): its body is guarded too.
        """
        if self._guarding:
            yield
            return
        self._guarding = True
        try:
            with self._guard:
                yield
        finally:
            self._guarding = False

    # --- shared machinery ----------------------------------------------------------------------

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call fn if the allow-list lets the program (SizeGuard measures torch's calls)."""
        guards.check_callable(fn, self._is_allowed, self.line)
        if self.functions.is_user_function(fn):
            return fn(*args, **kwargs)
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", "call")
        if isinstance(owner, (list, dict)) and name in ("extend", "update"):
            # They would consume any iterable in C, unticked: zip(range(10**9), ...).
            args = [a if isinstance(a, SIZED) else self.materialize(a) for a in args]
        elif isinstance(owner, str) and name in ("join", "replace") and args:
            args = self._sized_text(owner, name, args)
        elif isinstance(owner, str) and name == "format":  # "loss {:.4f}".format(loss)
            sizes.check_str_format(owner, args, kwargs, self.limits, self.line)
            with AppReads():  # a tensor's text, as print writes it
                return self.track(owner.format(*args, **kwargs), name, ())
        elif name in _CALLBACKS and isinstance(owner, _CALLBACK_OWNERS) or \
                name in _STEPS and isinstance(owner, torch.optim.Optimizer):
            # torch calls these back (model.apply(init), hooks, LBFGS's closure) from C or
            # its own Python: through the checks the program's own call gets, whatever it
            # passed, positionally or by name.
            if args and args[0] is not None:
                args = [self.checked(args[0]), *args[1:]]
            kwargs = {key: self.checked(value) if key in _CALLBACK_NAMES and value is not None
                      else value for key, value in kwargs.items()}
        elif isinstance(owner, list) and name == "sort" and kwargs.get("key") is not None:
            kwargs = {**kwargs, "key": self.checked(kwargs["key"])}  # as sorted()'s key
        elif isinstance(owner, str) and name in al.STR_WIDTHS and args:
            width = operator.index(args[0])  # as str reads it: a 0-dim int tensor is a width
            sizes.check_width(width, self.line)
            args = [width, *args[1:]]
        elif isinstance(owner, numpy.ndarray) and name == "tolist":
            sizes.check_sequence(owner.size, self.limits, self.line)  # torch's own is measured
        if id(fn) not in _BUILTIN_IDS and id(fn) not in self._made_ids:
            # torch's own code consumes what it is given in C or its own Python, unticked:
            # a range is measured, an iterator (a generator, zip, map) walked here first.
            args = [self._measured(a) for a in args]
            kwargs = {key: self._measured(value) for key, value in kwargs.items()}
        if self.recorder is not None and self.recorder.intercepts(fn):
            result = self.recorder.call(fn, args, kwargs, self.line or 0)
        else:
            result = fn(*args, **kwargs)
        if isinstance(owner, (list, dict)):
            sizes.check_sequence(len(owner), self.limits, self.line)
        inputs = (owner, *args) if isinstance(owner, torch.Tensor) else tuple(args)
        return self.track(result, name, inputs)

    def grad_modes(self, node: ast.FunctionDef, scope: Scope) -> list[Any]:
        """A def's decorators, which may only be grad modes such as @torch.no_grad(): as in
        torch, each call runs in a fresh copy of each. Python evaluates them before the def."""
        modes = []
        for decorator in node.decorator_list:
            self.line = decorator.lineno  # the def's line is below its decorators
            modes.append(self.evaluate(decorator, scope))
            if not isinstance(modes[-1], al.GRAD_MODES):
                raise Disallowed("only a grad mode, such as @torch.no_grad(), may decorate a "
                                 "function here", line=self.line,
                                 hint_key="hint.disallowed_syntax")
        self.line = node.lineno
        return modes

    def checked(self, fn: Any) -> Callable[..., Any]:
        """fn for torch or C to call back: each call is a step, and goes through `call`, with
        its checks (LBFGS(max_iter=10**9) calling back w.sum would otherwise never tick)."""
        def call_back(*args: Any, **kwargs: Any) -> Any:
            self.tick()
            return self.call(fn, list(args), kwargs)
        return call_back

    def _measured(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):  # nearly every value: asked first
            return value
        if type(value) is range:
            sizes.check_sequence(len(value), self.limits, self.line)
        elif isinstance(value, Iterator):
            return self.materialize(value)
        return value

    def _sized_text(self, text: str, name: str, args: list[Any]) -> list[Any]:
        """Bound what sep.join(items) and text.replace(old, new) would build in C."""
        if name == "join":  # it consumes any iterable: walked here, as extend's
            items = args[0] if isinstance(args[0], (list, tuple)) else self.materialize(args[0])
            size = len(text) * max(len(items) - 1, 0) + sum(
                len(item) for item in items if isinstance(item, str))
            sizes.check_sequence(size, self.limits, self.line)
            return [items, *args[1:]]
        old, new = args[0], args[1] if len(args) > 1 else ""
        if isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
            found = text.count(old) if old else len(text) + 1  # "" matches between every two
            if len(args) > 2 and isinstance(args[2], int) and args[2] >= 0:
                found = min(found, args[2])
            sizes.check_sequence(len(text) + found * (len(new) - len(old)), self.limits,
                                 self.line)
        return args

    def _is_allowed(self, fn: object) -> bool:
        return id(fn) in _ALLOWED_IDS or id(fn) in self._made_ids or \
            self.functions.is_user_function(fn) or self.functions.is_module_class(fn)

    def binary(self, op: ast.operator, a: Any, b: Any, inplace: bool = False) -> Any:
        symbol, plain, augmented = _BINARY[type(op)]
        guards.check_operand(a, self.line)
        guards.check_operand(b, self.line)
        if isinstance(a, int) and isinstance(b, int):
            sizes.check_int_op(symbol, a, b, self.limits, self.line)
        elif symbol == "%" and isinstance(a, str):  # "loss %.3f" % loss.item()
            sizes.check_percent_format(a, b, self.limits, self.line)
            with AppReads():  # a tensor's text, as print writes it
                return self.track(a % b, symbol, (a, b))
        elif inplace and isinstance(a, (list, dict)) and not isinstance(b, SIZED):
            b = self.materialize(b)  # list += and dict |= take any iterable, consumed in C
        sizes.check_sequence_op(symbol, a, b, self.limits, self.line)
        return self.track((augmented if inplace else plain)(a, b), symbol, (a, b))

    def track(self, value: Any, op: str = "", inputs: tuple[Any, ...] = ()) -> Any:
        """Check and record what an operation returned: tensors, ints for their size, and
        strings and containers, whose items count as steps, so many big ones run out of them."""
        if isinstance(value, torch.Tensor):
            self._record(value, op, inputs)
        elif type(value) is int:
            sizes.check_int(value, self.limits, self.line)
        elif isinstance(value, SIZED):
            sizes.check_sequence(len(value), self.limits, self.line)
            self.tick(len(value) // 8)
            if isinstance(value, (tuple, list)) and len(value) <= 64:
                for item in value:
                    if isinstance(item, torch.Tensor):
                        self._record(item, op, inputs)
        return value

    def _record(self, tensor: torch.Tensor, op: str, inputs: tuple[Any, ...]) -> None:
        self.meter.add(tensor, self.line)
        if (id(tensor) in self.produced or len(self.produced) >= self.limits.graph_nodes
                or (self.recorder is not None and self.recorder.muted)):
            return
        from app.sandbox.interpreter import Produced

        kept = tuple(x for x in inputs[:8] if isinstance(x, (torch.Tensor, int, float)))
        self.produced[id(tensor)] = Produced(tensor, self.line or 0, op, kept,
                                             torch.is_grad_enabled())
        if self.recorder is not None:
            self.recorder.made(tensor)

    def _let_go(self) -> None:
        """The program's tensors are past the memory limit: keep records only of those it names.

        The records keep every tensor the program made alive, with its inputs, so the graph can
        show each one; in a loop (a training loop, a = tanh(a @ a)) that is every iteration's
        tensors, and a program that needs 40 MB was refused at 1 GiB. So, at the limit, only
        the program's variables keep their records, and the recorder keeps only their module
        calls: the memory the rest held goes back, and the meter counts again. Tensors in
        lists or other containers stay alive with the program; only their records go.
        """
        named = {id(v) for v in self.globals.vars.values() if isinstance(v, torch.Tensor)}
        kept: dict[int, Any] = {}
        for key, made in self.produced.items():
            if key in named:
                inputs = tuple(x for x in made.inputs
                               if not isinstance(x, torch.Tensor) or id(x) in named)
                kept[key] = made if len(inputs) == len(made.inputs) else \
                    dataclasses.replace(made, inputs=inputs)
        self.produced = kept
        if self.recorder is not None:
            self.recorder.let_go(named)

    def get_item(self, obj: Any, key: Any) -> Any:
        if isinstance(obj, (al.Namespace, type)):
            raise Disallowed(f"'{type(obj).__name__}' cannot be indexed here", line=self.line,
                             hint_key="hint.disallowed_name")
        guards.check_operand(obj, self.line)
        value = obj[key]
        if isinstance(value, SIZED) and not isinstance(key, slice):
            return value  # an item the program already holds; only a slice makes a new one
        return self.track(value, "getitem", (obj,))

    def set_item(self, obj: Any, key: Any, value: Any) -> None:
        if not isinstance(obj, (torch.Tensor, list, dict)):
            raise Disallowed(f"cannot assign items of '{type(obj).__name__}'", line=self.line,
                             hint_key="hint.disallowed_syntax")
        if isinstance(obj, list) and isinstance(key, slice) and not isinstance(value, SIZED):
            value = self.materialize(value)  # xs[:] = range(10**9) would fill it in C
        obj[key] = value
        if isinstance(obj, (list, dict)):
            sizes.check_sequence(len(obj), self.limits, self.line)

    def assign(self, target: ast.expr, value: Any, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            guards.check_name(target.id, self.line)
            scope.set(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, scope)
        elif isinstance(target, ast.Attribute):
            guards.set_attribute(self.evaluate(target.value, scope), target.attr, value, self.line)
        elif isinstance(target, ast.Subscript):
            obj = self.evaluate(target.value, scope)
            self.set_item(obj, self.evaluate(target.slice, scope), value)
        else:
            raise Disallowed(f"cannot assign to '{type(target).__name__}'", line=self.line,
                             hint_key="hint.disallowed_syntax")

    def _unpack(self, targets: list[ast.expr], value: Any, scope: Scope) -> None:
        """a, b = value and a, *rest = value, with Python's errors (a program may catch them)."""
        if not isinstance(value, (al.Namespace, type)):  # those, iterate refuses
            try:
                value = iter(value)
            except TypeError:
                if isinstance(value, torch.Tensor):
                    raise  # torch's own words: iteration over a 0-d tensor
                raise TypeError(f"cannot unpack non-iterable {type(value).__name__} "
                                "object") from None
        starred = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if not starred:
            items: list[Any] = []
            for item in self.iterate(value):  # as Python: one more than fits, not all of it
                if len(items) == len(targets):
                    raise ValueError(f"too many values to unpack (expected {len(targets)})")
                items.append(item)
            if len(items) < len(targets):
                raise ValueError(f"not enough values to unpack (expected {len(targets)}, "
                                 f"got {len(items)})")
            for target, item in zip(targets, items, strict=True):
                self.assign(target, item, scope)
            return
        items = self.materialize(value)
        i = starred[0]
        after = len(targets) - i - 1
        if len(items) < len(targets) - 1:
            raise ValueError(f"not enough values to unpack (expected at least "
                             f"{len(targets) - 1}, got {len(items)})")
        for target, item in zip(targets[:i], items[:i], strict=True):
            self.assign(target, item, scope)
        star = targets[i]
        assert isinstance(star, ast.Starred)
        self.assign(star.value, items[i: len(items) - after], scope)
        for target, item in zip(targets[i + 1:], items[len(items) - after:], strict=True):
            self.assign(target, item, scope)

    def iterate(self, iterable: Any) -> Iterator[Any]:
        """Iterate anything the program holds, one step per item."""
        if isinstance(iterable, (al.Namespace, type)):
            raise Disallowed(f"'{type(iterable).__name__}' is not iterable here", line=self.line,
                             hint_key="hint.disallowed_name")
        for item in iterable:
            self.tick()
            yield item

    def materialize(self, iterable: Any) -> list[Any]:
        items: list[Any] = []
        for item in self.iterate(iterable):
            items.append(item)
            sizes.check_sequence(len(items), self.limits, self.line)
        return items

    def namespace(self, path: str) -> al.Namespace:
        if path not in _NAMESPACES:
            raise Disallowed(f"'import {path}' is not allowed", line=self.line,
                             hint_key="hint.import")
        return _NAMESPACES[path]

    def print(self, *args: object, sep: str | None = " ", end: str | None = "\n",
              file: object = None, flush: bool = False) -> None:
        if file is not None:
            raise Disallowed("print() writes to the lab's output only; leave out file=",
                             line=self.line, hint_key="hint.disallowed_name")
        sep, end = " " if sep is None else sep, "\n" if end is None else end
        for name, value in (("sep", sep), ("end", end)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be None or a string, not {type(value).__name__}")
        sizes.check_text(args, self.limits, self.line)
        # sep goes between every two arguments: print(*xs, sep=s) writes len(xs) copies of it.
        sizes.check_sequence(len(sep) * len(args) + len(end), self.limits, self.line)
        with AppReads():
            text = sep.join(map(str, args)) + end
        self.stdout_bytes += len(text.encode())
        if self.stdout_bytes > self.limits.stdout_bytes:
            raise TooLarge(f"the program printed more than {self.limits.stdout_bytes:,} "
                                  "bytes", line=self.line, hint_key="hint.stdout")
        self.stdout.append(text)
