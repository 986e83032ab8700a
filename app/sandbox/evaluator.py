"""Expressions: Evaluator.evaluate hands each kind of ast.expr to one method here."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch

from app.errors import Disallowed
from app.sandbox import allowlist as al
from app.sandbox import guards, sizes
from app.sandbox.runtime import SIZED, AppReads, Runtime
from app.sandbox.scope import Scope

_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
_IDENTITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


class Evaluator(Runtime):
    """Evaluates expressions; subclassed by the statement machine in statements.py."""

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
        *first, last = node.values
        for operand in first:  # as Python: the last operand is returned without bool()
            value = self.evaluate(operand, scope)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return self.evaluate(last, scope)

    def _compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.evaluate(node.left, scope)
        result: Any = True
        last = len(node.ops) - 1
        for i, (op, comparator) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.evaluate(comparator, scope)
            guards.check_operand(left, self.line)
            guards.check_operand(right, self.line)
            if isinstance(op, (ast.In, ast.NotIn)) and not _quick_membership(left, right):
                right = self.materialize(right)  # `in` would walk it in C, unticked
            if type(op) in _IDENTITY:  # type(x) == list: the class `list` stands for
                left = self.stands_for.get(id(left), left)
                right = self.stands_for.get(id(right), right)
            elif isinstance(left, type) and isinstance(right, (tuple, list)):  # in (list, dict)
                right = [self.stands_for.get(id(kind), kind) for kind in right]
            result = self.track(_COMPARE[type(op)](left, right))
            # a < b < c is (a < b) and (b < c): bool() of every result but the last, so a
            # tensor of several values is ambiguous there, as in Python.
            if i < last and not result:
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
        with AppReads():
            if node.conversion == ord("r"):
                value = repr(value)
            elif node.conversion == ord("a"):
                value = ascii(value)
            elif node.conversion == ord("s"):
                value = str(value)
            return format(value, spec)

    def _lambda(self, node: ast.Lambda, scope: Scope) -> Any:
        return self.functions.make_lambda(node, scope)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp,
                       scope: Scope) -> Any:
        out: list[Any] = []
        try:
            for item in self._produce(node, scope, self._first_items(node, scope), True):
                out.append(item)
                sizes.check_sequence(len(out), self.limits, self.line)
        except _Stopped as stopped:  # [next(it) for _ in xs] raises StopIteration in Python
            raise stopped.stop from None
        if isinstance(node, ast.DictComp):
            return dict(out)
        return set(out) if isinstance(node, ast.SetComp) else out

    def _generator(self, node: ast.GeneratorExp, scope: Scope) -> Iterator[Any]:
        """A generator, run as it is consumed: any(check(t) for t in ts) stops at the first
        True, as in Python. Its first iterable is evaluated now, the rest as it runs."""
        items: Any = self._produce(node, scope, self._first_items(node, scope))
        items.__name__ = items.__qualname__ = "<genexpr>"  # its repr, as Python's
        return cast(Iterator[Any], items)

    def _first_items(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                     scope: Scope) -> Iterator[Any]:
        if any(gen.is_async for gen in node.generators):
            raise Disallowed("async comprehensions are not allowed", line=self.line,
                             hint_key="hint.disallowed_syntax")
        source = self.evaluate(node.generators[0].iter, scope)
        # iter() now, so `(x for x in 5)` fails here, as in Python; Namespaces and classes are
        # refused by iterate, before anything walks them.
        return self.iterate(source if isinstance(source, (al.Namespace, type)) else iter(source))

    def _produce(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                 scope: Scope, first: Iterator[Any], whole: bool = False) -> Iterator[Any]:
        """The comprehension's items, each evaluated when asked for, in a scope of its own.

        .. note:: A StopIteration raised in a generator becomes a RuntimeError (PEP 479): right
           for a generator expression, as in Python, but a list, set or dict comprehension
           (`whole`) lets it through, so it leaves this generator as a _Stopped.
        """
        inner = Scope(scope)

        def value(expr: ast.expr) -> Any:
            if not whole:
                return self.evaluate(expr, inner)
            try:
                return self.evaluate(expr, inner)
            except StopIteration as stop:
                raise _Stopped(stop) from None

        def level(index: int, items: Iterator[Any]) -> Iterator[Any]:
            gen = node.generators[index]
            for item in items:
                self.assign(gen.target, item, inner)
                if all(value(cond) for cond in gen.ifs):
                    if index + 1 < len(node.generators):
                        nested = node.generators[index + 1].iter
                        yield from level(index + 1, self.iterate(value(nested)))
                    elif isinstance(node, ast.DictComp):
                        key = value(node.key)
                        yield key, value(node.value)
                    else:
                        yield value(node.elt)

        return level(0, first)

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


class _Stopped(Exception):  # noqa: N818 - carries a StopIteration out of a comprehension
    def __init__(self, stop: StopIteration) -> None:
        self.stop = stop


def _quick_membership(item: object, container: object) -> bool:
    if isinstance(container, range):
        return type(item) in (int, bool)  # otherwise range's `in` counts through every number
    return isinstance(container, (*SIZED, torch.Tensor))


_EXPRESSIONS: dict[type[ast.expr], Callable[[Evaluator, Any, Scope], Any]] = {
    ast.Constant: Evaluator._constant, ast.Name: Evaluator._name,
    ast.Attribute: Evaluator._attribute, ast.Subscript: Evaluator._subscript,
    ast.Slice: Evaluator._slice, ast.BinOp: Evaluator._binop, ast.UnaryOp: Evaluator._unaryop,
    ast.BoolOp: Evaluator._boolop, ast.Compare: Evaluator._compare, ast.IfExp: Evaluator._ifexp,
    ast.List: Evaluator._list, ast.Tuple: Evaluator._tuple, ast.Set: Evaluator._set,
    ast.Dict: Evaluator._dict, ast.JoinedStr: Evaluator._joinedstr,
    ast.FormattedValue: Evaluator._formatted, ast.Lambda: Evaluator._lambda,
    ast.ListComp: Evaluator._comprehension, ast.GeneratorExp: Evaluator._generator,
    ast.SetComp: Evaluator._comprehension, ast.DictComp: Evaluator._comprehension,
    ast.Call: Evaluator._call,
}
