"""Expressions, calls and the machinery statements share (scopes, assignment, iteration)."""

from __future__ import annotations

import ast
import builtins as python_builtins
import operator
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Protocol

import numpy
import torch

from app.errors import AppError, Disallowed, ProgramError, TooLarge
from app.sandbox import allowlist as al
from app.sandbox import guards, sizes
from app.sandbox.builtins import EXCEPTIONS, builtins_for
from app.sandbox.limits import Limits

# Writing a value as text (print, f-strings) once check_text has bounded how long the text can
# be: torch's tensor formatting runs a score of ops on what the program already made, which
# the SizeGuard would otherwise measure one by one (two thirds of printing a small tensor).
_APP_READS = torch._C.DisableTorchFunction


class ControlFlow(BaseException):  # noqa: N818 - not an error: break/continue/return
    """Unwinds to the loop or call that handles it; never seen by the program's try/except."""


class Break(ControlFlow):
    pass


class Continue(ControlFlow):
    pass


class Return(ControlFlow):
    def __init__(self, value: object) -> None:
        self.value = value


class Recorder(Protocol):
    """Watches a run for the graph lab (app/recording.py); the interpreter knows only this."""

    muted: bool  # while True, tensors made are not recorded (e.g. gradcheck's perturbed runs)

    def intercepts(self, fn: object) -> bool: ...

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], line: int) -> Any: ...

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> None: ...


class Scope:
    """Variables of the program or of one function call, with the enclosing scope behind."""

    __slots__ = ("vars", "parent")

    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, object] = {}
        self.parent = parent

    def get(self, name: str, machine: Evaluator) -> object:
        guards.check_name(name, machine.line)
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        if name in machine.builtins:
            return machine.builtins[name]
        if hasattr(python_builtins, name):  # open, eval, getattr, type, ...: say so plainly
            raise Disallowed(f"'{name}' is not available in the lab", line=machine.line,
                             hint_key="hint.disallowed_name")
        raise NameError(f"name '{name}' is not defined")

    def set(self, name: str, value: object) -> None:
        self.vars[name] = value

    def delete(self, name: str, machine: Evaluator) -> None:
        guards.check_name(name, machine.line)
        if name not in self.vars:
            raise NameError(f"name '{name}' is not defined")
        del self.vars[name]


_NAMESPACES = al.build_namespaces()
_PRELUDE = {"torch": _NAMESPACES["torch"], "nn": _NAMESPACES["torch.nn"],
            "F": _NAMESPACES["torch.nn.functional"], "optim": _NAMESPACES["torch.optim"]}


def _callables(spaces: Iterable[al.Namespace]) -> set[int]:
    ids: set[int] = set()
    for space in spaces:
        ids.update(id(v) for v in space.members.values() if callable(v))
        ids |= _callables(v for v in space.members.values() if isinstance(v, al.Namespace))
    return ids


_ALLOWED_IDS = _callables(_NAMESPACES.values())

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
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


class Evaluator:
    """Evaluates expressions; subclassed by the statement machine in interpreter.py."""

    def __init__(self, limits: Limits, recorder: Recorder | None = None) -> None:
        from app.sandbox.functions import Functions  # one module per concern, no import cycle

        self.limits = limits
        self.recorder = recorder
        self.steps = 0
        self.depth = 0
        self.line: int | None = None
        self.stdout: list[str] = []
        self.stdout_bytes = 0
        self.meter = sizes.MemoryMeter(limits)
        self._guard = sizes.SizeGuard(limits, self.meter, lambda: self.line)
        self._guarding = False
        self.produced: dict[int, Any] = {}
        self.globals = Scope()
        self.functions = Functions(self)
        self.error_line: int | None = None
        self.builtins: dict[str, object] = {**builtins_for(self), **EXCEPTIONS, **_PRELUDE}
        self._allowed_ids = _ALLOWED_IDS | {id(v) for v in self.builtins.values()}

    # hooks the subclass provides
    def tick(self, cost: int = 1) -> None:
        raise NotImplementedError

    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
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

    # --- expressions ---------------------------------------------------------------------------

    def evaluate(self, node: ast.expr, scope: Scope) -> Any:
        self.tick()
        handler: Callable[[Evaluator, Any, Scope], Any] | None = _EXPRESSIONS.get(type(node))
        if handler is None:
            raise Disallowed(f"'{type(node).__name__}' expressions are not allowed",
                             line=getattr(node, "lineno", self.line),
                             hint_key="hint.disallowed_syntax")
        return handler(self, node, scope)

    def _constant(self, node: ast.Constant, scope: Scope) -> Any:
        value = node.value
        if isinstance(value, bytes):
            raise Disallowed("bytes literals are not allowed", line=self.line,
                             hint_key="hint.disallowed_syntax")
        if isinstance(value, str):
            sizes.check_sequence(len(value), self.limits, self.line)
        elif isinstance(value, int):
            sizes.check_int(value, self.limits, self.line)
        return value

    def _name(self, node: ast.Name, scope: Scope) -> Any:
        return scope.get(node.id, self)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> Any:
        return guards.get_attribute(self.evaluate(node.value, scope), node.attr, self.line)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Any:
        return self.get_item(self.evaluate(node.value, scope), self.evaluate(node.slice, scope))

    def _slice(self, node: ast.Slice, scope: Scope) -> slice:
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else self.evaluate(p, scope) for p in parts))

    def _binop(self, node: ast.BinOp, scope: Scope) -> Any:
        left = self.evaluate(node.left, scope)
        return self.binary(node.op, left, self.evaluate(node.right, scope))

    def _unaryop(self, node: ast.UnaryOp, scope: Scope) -> Any:
        operand = self.evaluate(node.operand, scope)
        guards.check_operand(operand, self.line)
        return self.track(_UNARY[type(node.op)](operand), type(node.op).__name__, (operand,))

    def _boolop(self, node: ast.BoolOp, scope: Scope) -> Any:
        value: Any = None
        for operand in node.values:
            value = self.evaluate(operand, scope)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value

    def _compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.evaluate(node.left, scope)
        result: Any = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.evaluate(comparator, scope)
            guards.check_operand(left, self.line)
            guards.check_operand(right, self.line)
            if isinstance(op, (ast.In, ast.NotIn)) and not _quick_membership(left, right):
                right = self.materialize(right)  # `in` would walk it in C, unticked
            result = self.track(_COMPARE[type(op)](left, right))
            if not isinstance(result, torch.Tensor) and not result:
                return result
            left = right
        return result

    def _ifexp(self, node: ast.IfExp, scope: Scope) -> Any:
        return self.evaluate(node.body if self.evaluate(node.test, scope) else node.orelse, scope)

    def _elements(self, nodes: list[ast.expr], scope: Scope) -> list[Any]:
        items: list[Any] = []
        for node in nodes:
            if isinstance(node, ast.Starred):
                items.extend(self.materialize(self.evaluate(node.value, scope)))
            else:
                items.append(self.evaluate(node, scope))
            sizes.check_sequence(len(items), self.limits, self.line)
        return items

    def _list(self, node: ast.List, scope: Scope) -> list[Any]:
        return self._elements(node.elts, scope)

    def _tuple(self, node: ast.Tuple, scope: Scope) -> tuple[Any, ...]:
        return tuple(self._elements(node.elts, scope))

    def _set(self, node: ast.Set, scope: Scope) -> set[Any]:
        return set(self._elements(node.elts, scope))

    def _dict(self, node: ast.Dict, scope: Scope) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                mapping = self.evaluate(value, scope)
                if not isinstance(mapping, dict):
                    raise TypeError(f"'{type(mapping).__name__}' object is not a mapping")
                result.update(self.materialize(mapping.items()))
            else:
                result[self.evaluate(key, scope)] = self.evaluate(value, scope)
            sizes.check_sequence(len(result), self.limits, self.line)
        return result

    def _joinedstr(self, node: ast.JoinedStr, scope: Scope) -> str:
        parts = []
        for value in node.values:
            parts.append(self.evaluate(value, scope))
            sizes.check_sequence(sum(map(len, parts)), self.limits, self.line)
        return self.track("".join(parts))

    def _formatted(self, node: ast.FormattedValue, scope: Scope) -> str:
        value = self.evaluate(node.value, scope)
        sizes.check_text(value, self.limits, self.line)
        spec = "" if node.format_spec is None else self.evaluate(node.format_spec, scope)
        sizes.check_format_spec(spec, self.limits, self.line)
        with _APP_READS():
            if node.conversion in (ord("r"), ord("a")):
                value = repr(value)
            elif node.conversion == ord("s"):
                value = str(value)
            return format(value, spec)

    def _lambda(self, node: ast.Lambda, scope: Scope) -> Any:
        return self.functions.make_lambda(node, scope)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                       scope: Scope) -> Any:
        inner = Scope(scope)
        out: list[Any] = []

        def loop(level: int) -> None:
            gen = node.generators[level]
            if gen.is_async:
                raise Disallowed("async comprehensions are not allowed", line=self.line)
            for item in self.iterate(self.evaluate(gen.iter, inner if level else scope)):
                self.assign(gen.target, item, inner)
                if all(self.evaluate(cond, inner) for cond in gen.ifs):
                    if level + 1 < len(node.generators):
                        loop(level + 1)
                    elif isinstance(node, ast.DictComp):
                        key = self.evaluate(node.key, inner)
                        out.append((key, self.evaluate(node.value, inner)))
                    else:
                        out.append(self.evaluate(node.elt, inner))
                    sizes.check_sequence(len(out), self.limits, self.line)

        loop(0)
        if isinstance(node, ast.DictComp):
            return dict(out)
        return set(out) if isinstance(node, ast.SetComp) else out

    def _call(self, node: ast.Call, scope: Scope) -> Any:
        fn = self.evaluate(node.func, scope)
        args = self._elements(node.args, scope)
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            value = self.evaluate(keyword.value, scope)
            if keyword.arg is None:
                if not isinstance(value, dict):
                    raise TypeError("argument after ** must be a dict")
                for key in value:
                    guards.check_name(str(key), self.line)
                kwargs.update(value)
            else:
                guards.check_name(keyword.arg, self.line)
                kwargs[keyword.arg] = value
        return self.call(fn, args, kwargs)

    # --- shared machinery ----------------------------------------------------------------------

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call fn if the allow-list lets the program (sizes.SizeGuard measures torch's calls)."""
        guards.check_callable(fn, self._is_allowed, self.line)
        if self.functions.is_user_function(fn):
            return fn(*args, **kwargs)
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", "call")
        if isinstance(owner, (list, dict)) and name in ("extend", "update"):
            # They would consume any iterable in C, unticked: zip(range(10**9), ...).
            args = [a if isinstance(a, _SIZED) else self.materialize(a) for a in args]
        elif isinstance(owner, numpy.ndarray) and name == "tolist":
            sizes.check_sequence(owner.size, self.limits, self.line)  # torch's own is measured
        if self.recorder is not None and self.recorder.intercepts(fn):
            result = self.recorder.call(fn, args, kwargs, self.line or 0)
        else:
            result = fn(*args, **kwargs)
        if isinstance(owner, (list, dict)):
            sizes.check_sequence(len(owner), self.limits, self.line)
        inputs = (owner, *args) if isinstance(owner, torch.Tensor) else tuple(args)
        return self.track(result, name, inputs)

    def _is_allowed(self, fn: object) -> bool:
        return id(fn) in self._allowed_ids or self.functions.is_user_function(fn)

    def binary(self, op: ast.operator, a: Any, b: Any, inplace: bool = False) -> Any:
        symbol, plain, augmented = _BINARY[type(op)]
        guards.check_operand(a, self.line)
        guards.check_operand(b, self.line)
        if isinstance(a, int) and isinstance(b, int):
            sizes.check_int_op(symbol, a, b, self.limits, self.line)
        elif symbol == "%" and isinstance(a, str):
            raise Disallowed("'%' string formatting is not allowed; use an f-string",
                             line=self.line, hint_key="hint.disallowed_syntax")
        elif inplace and isinstance(a, (list, dict)) and not isinstance(b, _SIZED):
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
        elif isinstance(value, _SIZED):
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

    def get_item(self, obj: Any, key: Any) -> Any:
        if isinstance(obj, (al.Namespace, type)):
            raise Disallowed(f"'{type(obj).__name__}' cannot be indexed here", line=self.line,
                             hint_key="hint.disallowed_name")
        guards.check_operand(obj, self.line)
        value = obj[key]
        if isinstance(value, _SIZED) and not isinstance(key, slice):
            return value  # an item the program already holds; only a slice makes a new one
        return self.track(value, "getitem", (obj,))

    def set_item(self, obj: Any, key: Any, value: Any) -> None:
        if not isinstance(obj, (torch.Tensor, list, dict)):
            raise Disallowed(f"cannot assign items of '{type(obj).__name__}'", line=self.line,
                             hint_key="hint.disallowed_syntax")
        if isinstance(obj, list) and isinstance(key, slice) and not isinstance(value, _SIZED):
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
        items = self.materialize(value)
        starred = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if not starred:
            if len(items) != len(targets):
                raise ValueError(f"expected {len(targets)} values to unpack, got {len(items)}")
            for target, item in zip(targets, items, strict=True):
                self.assign(target, item, scope)
            return
        i = starred[0]
        after = len(targets) - i - 1
        if len(items) < len(targets) - 1:
            raise ValueError(f"not enough values to unpack (got {len(items)})")
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

    def print(self, *args: object, sep: str = " ", end: str = "\n") -> None:
        if not isinstance(sep, str) or not isinstance(end, str):
            raise TypeError("print()'s sep and end must be strings")
        sizes.check_text(args, self.limits, self.line)
        # sep goes between every two arguments: print(*xs, sep=s) writes len(xs) copies of it.
        sizes.check_sequence(len(sep) * len(args) + len(end), self.limits, self.line)
        with _APP_READS():
            text = sep.join(map(str, args)) + end
        self.stdout_bytes += len(text.encode())
        if self.stdout_bytes > self.limits.stdout_bytes:
            raise TooLarge(f"the program printed more than {self.limits.stdout_bytes:,} "
                                  "bytes", line=self.line, hint_key="hint.stdout")
        self.stdout.append(text)

    def with_block(self, node: ast.With, scope: Scope) -> None:
        with ExitStack() as stack:
            for item in node.items:
                manager = self.evaluate(item.context_expr, scope)
                if not isinstance(manager, al.CONTEXT_MANAGERS):
                    raise Disallowed(f"'{type(manager).__name__}' cannot be used in 'with'",
                                     line=self.line, hint_key="hint.disallowed_syntax")
                value: Any = stack.enter_context(manager)  # type: ignore[arg-type]
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, scope)
            self.exec_block(node.body, scope)

    def try_block(self, node: ast.Try, scope: Scope) -> None:
        try:
            self._try_handlers(node, scope)
        except _LIMITS:
            raise  # not even a `finally: break` may swallow a limit
        except BaseException:
            self.exec_block(node.finalbody, scope)
            raise
        self.exec_block(node.finalbody, scope)

    def _try_handlers(self, node: ast.Try, scope: Scope) -> None:
        try:
            self.exec_block(node.body, scope)
        except (*_LIMITS, ControlFlow):
            raise  # the limits hold whatever the program catches
        except Exception as exc:  # noqa: BLE001 - matched against the program's handlers
            raised_at = self.error_line
            for handler in node.handlers:
                self.line = self.error_line = handler.lineno  # an error here is this line's
                kinds = Exception if handler.type is None else self.evaluate(handler.type, scope)
                if not _is_exception_type(kinds):
                    raise Disallowed("'except' takes exception classes such as RuntimeError",
                                     line=self.line, hint_key="hint.disallowed_syntax") from None
                if isinstance(exc, kinds):
                    self.error_line = None
                    if handler.name:
                        guards.check_name(handler.name, self.line)
                        scope.set(handler.name, exc)
                    self.exec_block(handler.body, scope)
                    break
            else:
                self.error_line = raised_at
                raise
        else:
            self.exec_block(node.orelse, scope)


# Errors that end the program whatever it catches: the limits, and Python's own running out.
_LIMITS = (AppError, RecursionError, MemoryError)

# Values the sequence limit has measured. Anything else that `in`, `list +=`, `dict |=`,
# `xs[:] =`, extend or update would walk in C (a range, zip(...), a tensor) is walked here first.
_SIZED = (str, list, tuple, dict, set, frozenset)


def _quick_membership(item: object, container: object) -> bool:
    if isinstance(container, range):
        return type(item) in (int, bool)  # otherwise range's `in` counts through every number
    return isinstance(container, (*_SIZED, torch.Tensor))


def _is_exception_type(kinds: object) -> bool:
    pool = tuple(EXCEPTIONS.values())
    if isinstance(kinds, tuple):
        return all(k in pool for k in kinds)
    return kinds in pool


_EXPRESSIONS: dict[type[ast.expr], Callable[[Evaluator, Any, Scope], Any]] = {
    ast.Constant: Evaluator._constant, ast.Name: Evaluator._name,
    ast.Attribute: Evaluator._attribute, ast.Subscript: Evaluator._subscript,
    ast.Slice: Evaluator._slice, ast.BinOp: Evaluator._binop, ast.UnaryOp: Evaluator._unaryop,
    ast.BoolOp: Evaluator._boolop, ast.Compare: Evaluator._compare, ast.IfExp: Evaluator._ifexp,
    ast.List: Evaluator._list, ast.Tuple: Evaluator._tuple, ast.Set: Evaluator._set,
    ast.Dict: Evaluator._dict, ast.JoinedStr: Evaluator._joinedstr,
    ast.FormattedValue: Evaluator._formatted, ast.Lambda: Evaluator._lambda,
    ast.ListComp: Evaluator._comprehension, ast.GeneratorExp: Evaluator._comprehension,
    ast.SetComp: Evaluator._comprehension, ast.DictComp: Evaluator._comprehension,
    ast.Call: Evaluator._call,
}

__all__ = ["Evaluator", "Scope", "ProgramError"]
