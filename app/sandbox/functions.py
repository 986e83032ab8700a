"""The program's own functions: `def`, `lambda`, and `class X(torch.autograd.Function)`.

A UserFunction is an ordinary Python callable, so torch can call it back (hooks, gradcheck,
an autograd.Function's forward and backward), and every call runs through the same interpreter,
under the same limits.
"""

from __future__ import annotations

import ast
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import TYPE_CHECKING, Any

import torch

from app.errors import Disallowed, ProgramError, TooLarge
from app.sandbox import guards

if TYPE_CHECKING:
    from app.sandbox.runtime import Runtime
    from app.sandbox.scope import Scope


class UserFunction:
    """A function the program defined; calling it runs its body in a fresh scope."""

    def __init__(self, machine: Runtime, name: str, args: ast.arguments,
                 body: list[ast.stmt] | ast.expr, scope: Scope) -> None:
        self.machine = machine
        self.__name__ = name
        self.args = args
        self.body = body
        self.scope = scope
        self.modes: list[Any] = []  # grad modes that decorate it, outermost first
        self.defaults = [machine.evaluate(d, scope) for d in args.defaults]
        self.kw_defaults = {a.arg: machine.evaluate(d, scope)
                            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                            if d is not None}
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                guards.check_name(arg.arg, machine.line)

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from app.sandbox.scope import Break, Continue, Return, Scope

        machine = self.machine
        if machine.depth >= machine.limits.recursion:
            raise TooLarge(f"calls nested more than {machine.limits.recursion} deep",
                           line=machine.line, hint_key="hint.recursion")
        local = Scope(self.scope)
        local.vars.update(self._bind(args, kwargs))
        caller_line = machine.line
        machine.depth += 1
        try:
            with machine.guarded(), _entered(self.modes):  # guarded: also when torch calls it
                if isinstance(self.body, ast.expr):  # a lambda: its errors are its own line's
                    machine.line = self.body.lineno
                    return machine.evaluate(self.body, local)
                machine.exec_block(self.body, local)
                return None
        except Return as result:
            return result.value
        except (Break, Continue) as jump:  # ast.parse lets these through; Python's compiler doesn't
            word = "break" if isinstance(jump, Break) else "continue"
            raise ProgramError(f"SyntaxError: '{word}' outside loop", line=machine.line,
                               hint_key="hint.syntax_error") from None
        finally:
            machine.depth -= 1
            machine.line = caller_line

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        spec = self.args
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        names = positional + [a.arg for a in spec.kwonlyargs]
        bound: dict[str, Any] = dict(zip(positional, args, strict=False))
        extra = args[len(positional):]
        if extra and spec.vararg is None:
            raise TypeError(f"{self.__name__}() takes {len(positional)} positional arguments "
                            f"but {len(args)} were given")
        if spec.vararg is not None:
            bound[spec.vararg.arg] = tuple(extra)
        more: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in bound:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{key}'")
            if key in names:
                bound[key] = value
            elif spec.kwarg is not None:
                more[key] = value
            else:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{key}'")
        if spec.kwarg is not None:
            bound[spec.kwarg.arg] = more
        defaults = dict(zip(positional[len(positional) - len(self.defaults):], self.defaults,
                            strict=True)) | self.kw_defaults
        for name in names:
            if name not in bound:
                if name not in defaults:
                    raise TypeError(f"{self.__name__}() missing required argument: '{name}'")
                bound[name] = defaults[name]
        return bound


def _entered(modes: list[Any]) -> AbstractContextManager[object]:
    """A fresh copy of each grad mode, entered outermost first, as torch's decorators do."""
    if not modes:
        return nullcontext()
    stack = ExitStack()
    for mode in modes:
        stack.enter_context(mode.clone())
    return stack


class Functions:
    """Makes and recognises the program's functions and autograd.Function classes."""

    def __init__(self, machine: Runtime) -> None:
        self.machine = machine
        self.classes: set[type] = set()

    def is_user_function(self, fn: object) -> bool:
        return isinstance(fn, UserFunction) and fn.machine is self.machine

    def make_function(self, node: ast.FunctionDef, scope: Scope) -> UserFunction:
        guards.check_name(node.name, self.machine.line)
        return UserFunction(self.machine, node.name, node.args, node.body, scope)

    def make_lambda(self, node: ast.Lambda, scope: Scope) -> UserFunction:
        return UserFunction(self.machine, "<lambda>", node.args, node.body, scope)

    def make_autograd_function(self, node: ast.ClassDef, scope: Scope) -> type:
        """class X(torch.autograd.Function) with @staticmethod forward/backward, and nothing else.

        .. note:: torch names the backward node after the class: MyReLU's is MyReLUBackward.
        """
        line = self.machine.line
        guards.check_name(node.name, line)
        if node.keywords or node.decorator_list or len(node.bases) != 1 or \
                self.machine.evaluate(node.bases[0], scope) is not torch.autograd.Function:
            raise Disallowed("a class may only extend torch.autograd.Function, as in "
                             "'class MyReLU(torch.autograd.Function):'", line=line,
                             hint_key="hint.disallowed_syntax")
        members: dict[str, Any] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr)
                                              and isinstance(stmt.value, ast.Constant)):
                continue
            if not (isinstance(stmt, ast.FunctionDef) and len(stmt.decorator_list) == 1
                    and isinstance(stmt.decorator_list[0], ast.Name)
                    and stmt.decorator_list[0].id == "staticmethod"):
                raise Disallowed("an autograd.Function's body holds only @staticmethod "
                                 "functions (forward, backward)", line=stmt.lineno,
                                 hint_key="hint.disallowed_syntax")
            members[stmt.name] = staticmethod(self.make_function(stmt, scope))
        cls = type(node.name, (torch.autograd.Function,), members)
        self.classes.add(cls)
        return cls
