"""Scopes (the program's variables, or one call's) and break/continue/return, which unwind them."""

from __future__ import annotations

import builtins as python_builtins
from typing import TYPE_CHECKING

from app.errors import Disallowed
from app.sandbox import guards

if TYPE_CHECKING:
    from app.sandbox.runtime import Runtime


class ControlFlow(BaseException):  # noqa: N818 - not an error: break/continue/return
    """Unwinds to the loop or call that handles it; never seen by the program's try/except."""


class Break(ControlFlow):
    pass


class Continue(ControlFlow):
    pass


class Return(ControlFlow):
    def __init__(self, value: object) -> None:
        self.value = value


class Scope:
    """Variables of the program or of one function call, with the enclosing scope behind."""

    __slots__ = ("vars", "parent", "locals", "declared", "outer", "top")

    def __init__(self, parent: Scope | None = None, local_names: frozenset[str] = frozenset(),
                 declared_global: frozenset[str] = frozenset(),
                 declared_nonlocal: frozenset[str] = frozenset()) -> None:
        self.vars: dict[str, object] = {}
        self.parent = parent
        self.locals = local_names  # a function's: see functions.local_names
        self.declared = declared_global  # its `global` names: the program's own scope's
        self.outer = declared_nonlocal  # its `nonlocal` names: an enclosing function's
        top = self
        while declared_global and top.parent is not None:
            top = top.parent
        self.top = top

    def get(self, name: str, machine: Runtime) -> object:
        guards.check_name(name, machine.line)
        scope: Scope | None = self
        while scope is not None:
            if name in scope.declared:
                scope = scope.top
            if name in scope.vars:
                return scope.vars[name]
            if name in scope.locals:  # a function's own name, not bound yet
                if scope is self:
                    raise UnboundLocalError(f"cannot access local variable '{name}' where it "
                                            "is not associated with a value")
                raise NameError(f"cannot access free variable '{name}' where it is not "
                                "associated with a value in enclosing scope")
            scope = scope.parent
        if name in machine.builtins:
            return machine.builtins[name]
        if hasattr(python_builtins, name):  # open, eval, getattr, type, ...: say so plainly
            raise Disallowed(f"'{name}' is not available in the lab", line=machine.line,
                             hint_key="hint.disallowed_name")
        raise NameError(f"name '{name}' is not defined")

    def set(self, name: str, value: object) -> None:
        self._owner(name).vars[name] = value

    def _owner(self, name: str) -> Scope:
        """The scope a name is written in: this one, the program's (global), or for a nonlocal
        name the nearest enclosing function's that has it as its own."""
        if name in self.declared:
            return self.top
        if name in self.outer:
            scope = self.parent
            while scope is not None and name not in scope.locals:
                scope = scope.parent
            if scope is None:
                raise SyntaxError(f"no binding for nonlocal '{name}' found")
            return scope
        return self

    def delete(self, name: str, machine: Runtime) -> None:
        guards.check_name(name, machine.line)
        names = self._owner(name).vars
        if name not in names:
            raise NameError(f"name '{name}' is not defined")
        del names[name]
