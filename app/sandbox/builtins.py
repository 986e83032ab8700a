"""The Python builtins a program may call: the harmless ones, made to count their steps.

Builtins that consume an iterable (list, sum, max, ...) go through the machine's `materialize`,
so `sum(range(10**15))` is refused by the step and size limits instead of tying up the worker.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from torch.autograd.gradcheck import GradcheckError

from app.errors import Disallowed
from app.sandbox import allowlist as al
from app.sandbox import sizes

if TYPE_CHECKING:
    from app.sandbox.runtime import Runtime

EXCEPTIONS: dict[str, type[BaseException]] = {
    kind.__name__: kind for kind in (
        Exception, RuntimeError, ValueError, TypeError, ZeroDivisionError, ArithmeticError,
        IndexError, KeyError, AssertionError, NameError, NotImplementedError, AttributeError,
        StopIteration, UnboundLocalError, GradcheckError,
    )
}


# The builtins that need no run of their own: made once, and shared by every run.
PLAIN: dict[str, object] = {
    "abs": abs, "round": round, "float": float, "int": int, "bool": bool, "len": len,
    "range": range, "zip": zip, "enumerate": enumerate, "divmod": divmod, "next": next,
    "None": None, "True": True, "False": False,
}

_ADD = ast.Add()


class Lazy:
    """What map() and filter() return: an iterator that makes its items as they are asked for.

    Not a generator: a StopIteration the function raises ends the iteration, as with Python's
    own map, where a generator would turn it into a RuntimeError (PEP 479).
    """

    __slots__ = ("_kind", "_fn", "_rows")

    def __init__(self, kind: str, fn: Callable[..., Any], rows: Iterator[Any]) -> None:
        self._kind, self._fn, self._rows = kind, fn, rows

    def __iter__(self) -> Lazy:
        return self

    def __next__(self) -> Any:
        if self._kind == "map":
            return self._fn(*next(self._rows))
        while True:
            item = next(self._rows)
            if self._fn(item):
                return item

    def __repr__(self) -> str:
        return f"<{self._kind} object at {id(self):#x}>"


def builtins_for(machine: Runtime) -> dict[str, object]:
    """The builtins bound to one run's limits and step counter (the others are PLAIN)."""
    take = machine.materialize

    def list_(iterable: Any = ()) -> list[Any]:
        return take(iterable)

    def tuple_(iterable: Any = ()) -> tuple[Any, ...]:
        return tuple(take(iterable))

    def set_(iterable: Any = ()) -> set[Any]:
        return set(take(iterable))

    def dict_(*args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*(take(a.items() if isinstance(a, dict) else a) for a in args), **kwargs)

    def checked(fn: Any) -> Any:
        """A key function, called by sorted, min and max in C, through the interpreter's call:
        the checks a program's own call gets ("a" * 1000).join as a key built 1M characters)."""
        return None if fn is None else machine.checked(fn)

    def sorted_(iterable: Any, *, key: Any = None, reverse: bool = False) -> list[Any]:
        return sorted(take(iterable), key=checked(key), reverse=reverse)

    def reversed_(sequence: Any) -> Any:
        # Python's: an iterator that walks a sequence backwards, item by item (ticked where the
        # program walks it); a tensor's own __reversed__ flips it (measured, as any torch call).
        if isinstance(sequence, (al.Namespace, type)):
            raise Disallowed(f"'{type(sequence).__name__}' is not reversible here",
                             line=machine.line, hint_key="hint.disallowed_name")
        return reversed(sequence)

    def sum_(iterable: Any, start: Any = 0) -> Any:
        if isinstance(start, str):  # Python's words; sum(lists_of_items, []) is fine
            raise TypeError("sum() can't sum strings [use ''.join(seq) instead]")
        total = start
        for item in machine.iterate(iterable):
            total = machine.binary(_ADD, total, item)  # the checks `total + item` would get
        return total

    def str_(value: object = "") -> str:
        sizes.check_text(value, machine.limits, machine.line)
        return str(value)

    def format_(value: object, spec: str = "") -> str:
        sizes.check_text(value, machine.limits, machine.line)
        if isinstance(spec, str):  # else format() raises its own TypeError
            sizes.check_format_spec(spec, machine.limits, machine.line)
        return format(value, spec)

    def repr_(value: object) -> str:
        sizes.check_text(value, machine.limits, machine.line)
        return repr(value)

    def _extreme(pick: Any) -> Any:
        def extreme(*args: Any, **kwargs: Any) -> Any:
            if "key" in kwargs:
                kwargs["key"] = checked(kwargs["key"])
            return pick(take(args[0]) if len(args) == 1 else args, **kwargs)
        extreme.__name__ = pick.__name__
        return extreme

    def iter_(iterable: Any, *sentinel: Any) -> Any:
        # iter(f, sentinel) would call f from C until it returns sentinel, unchecked.
        if sentinel:
            raise Disallowed("iter() takes one argument here; for iter(f, sentinel), loop "
                             "with while", line=machine.line, hint_key="hint.disallowed_name")
        if isinstance(iterable, (al.Namespace, type)):  # as the interpreter's for loop
            raise Disallowed(f"'{type(iterable).__name__}' is not iterable here",
                             line=machine.line, hint_key="hint.disallowed_name")
        return iter(iterable)

    # Lazy, as Python's, and each call goes through the checks the program's own calls get.
    def map_(fn: Any, *iterables: Any) -> Lazy:
        if not iterables:
            raise TypeError("map() must have at least two arguments.")
        rows = zip(*map(machine.iterate, iterables), strict=False)  # the shortest ends it
        return Lazy("map", machine.checked(fn), rows)

    def filter_(fn: Any, iterable: Any) -> Lazy:
        return Lazy("filter", bool if fn is None else machine.checked(fn),
                    machine.iterate(iterable))

    def type_(obj: object, *more: object) -> type:
        # Only type(x): type(name, bases, members) would make a class, past classes.py's checks.
        # What comes back can be printed and compared; calling a class or reading one of its
        # attributes is checked as for any other value.
        if more:
            raise Disallowed("type() takes one argument here; write a class statement to make "
                             "a class", line=machine.line, hint_key="hint.disallowed_syntax")
        return type(obj)

    # Item by item, as Python's: any(check(t) for t in ts) stops at the first True.
    def any_(iterable: Any) -> bool:
        return any(machine.iterate(iterable))

    def all_(iterable: Any) -> bool:
        return all(machine.iterate(iterable))

    def isinstance_(obj: object, kinds: Any) -> bool:
        allowed = al.ISINSTANCE_TYPES
        kinds = tuple(machine.stands_for.get(id(k), k)
                      for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
        for kind in kinds:
            if kind not in allowed and kind not in machine.functions.classes:
                raise Disallowed("isinstance() can check torch.Tensor, Python's own types and the "
                                 "torch.nn and torch.optim classes; not "
                                 f"{getattr(kind, '__name__', kind)!r}", line=machine.line,
                                 hint_key="hint.disallowed_name")
        return isinstance(obj, kinds)

    return {
        "str": str_, "repr": repr_, "list": list_, "tuple": tuple_, "set": set_, "dict": dict_,
        "sorted": sorted_, "reversed": reversed_, "sum": sum_, "min": _extreme(min),
        "max": _extreme(max), "any": any_, "all": all_, "isinstance": isinstance_,
        "iter": iter_, "map": map_, "filter": filter_, "type": type_, "format": format_,
        "print": machine.print,
    }
