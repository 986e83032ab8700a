"""Statements: Machine runs a block one statement at a time, counting steps and the clock."""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any, cast

import torch

from app.errors import AppError, Disallowed, Timeout
from app.sandbox import allowlist as al
from app.sandbox import guards
from app.sandbox.builtins import EXCEPTIONS
from app.sandbox.classes import super_init
from app.sandbox.evaluator import Evaluator
from app.sandbox.limits import Limits
from app.sandbox.runtime import Recorder
from app.sandbox.scope import Break, Continue, ControlFlow, Return, Scope


class Machine(Evaluator):
    """The statements; expressions live in evaluator.Evaluator."""

    def __init__(self, limits: Limits, recorder: Recorder | None) -> None:
        super().__init__(limits, recorder)
        self.deadline = time.monotonic() + limits.wall_seconds
        self.next_clock = 0  # the step at which to look at the clock again
        self._handling: list[BaseException] = []  # caught by the except blocks running now

    def tick(self, cost: int = 1) -> None:
        self.steps += cost
        if self.steps > self.limits.steps:
            raise Timeout(f"the program took more than {self.limits.steps:,} steps",
                          line=self.line, hint_key="hint.steps")
        if self.steps >= self.next_clock:  # a step can be one big tensor op: look often
            self.next_clock = self.steps + 16
            if time.monotonic() > self.deadline:
                raise Timeout(f"the program ran longer than {self.limits.wall_seconds:g} s",
                              line=self.line, hint_key="hint.timeout")

    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.line = stmt.lineno
            self.tick()
            handler: Callable[[Machine, Any, Scope], None] | None = _STATEMENTS.get(type(stmt))
            if handler is None:
                raise Disallowed(f"'{type(stmt).__name__}' statements are not allowed",
                                 line=stmt.lineno, hint_key="hint.disallowed_syntax")
            try:
                handler(self, stmt, scope)
            except ControlFlow:
                raise
            except BaseException:
                if self.error_line is None:
                    self.error_line = stmt.lineno  # the innermost line the error came from
                raise

    # --- statements ----------------------------------------------------------------------------

    def _expr(self, node: ast.Expr, scope: Scope) -> None:
        if isinstance(node.value, ast.Call) and super_init(node.value):
            self._super_init(node.value, scope)
            return
        self.evaluate(node.value, scope)

    def _super_init(self, call: ast.Call, scope: Scope) -> None:
        """super().__init__() in the __init__ of a program's class (classes.py): for a module,
        nn.Module.__init__ on the instance being made, whatever its `self` now names."""
        function = self.function
        if function is None or not function.module_init:
            raise Disallowed("super().__init__() belongs in the __init__ of a class that "
                             "extends nn.Module", line=self.line, hint_key="hint.disallowed_name")
        this = self.initializing[-1]
        spec = function.args
        now = scope.vars.get((spec.posonlyargs or spec.args)[0].arg)  # Python's super() reads it
        base = cast(ast.Attribute, call.func).value
        if not isinstance(base, ast.Call):  # nn.Module.__init__(self)
            if self.evaluate(base, scope) is not torch.nn.Module:
                raise Disallowed("only nn.Module.__init__(self) may be called by name here",
                                 line=self.line, hint_key="hint.disallowed_name")
            target = self.evaluate(call.args[0], scope)  # self, as a rule; any module, in Python
            if not isinstance(target, torch.nn.Module):
                raise AttributeError(f"'{type(target).__name__}' object has no attribute "
                                     "'call_super_init'")  # Python's words, from nn.Module
            torch.nn.Module.__init__(target)
            return
        named = base.args  # super(Net, self)
        kind, obj = ((self.evaluate(named[0], scope), self.evaluate(named[1], scope)) if named
                     else (type(this), now))
        if not isinstance(kind, type):
            given = "module" if isinstance(kind, al.Namespace) else type(kind).__name__
            raise TypeError(f"super() argument 1 must be a type, not {given}")
        if kind is not type(this) or obj is not this:
            raise TypeError("super(type, obj): obj must be an instance or subtype of type")
        if isinstance(this, torch.nn.Module):  # a plain class's base is object: nothing to do
            torch.nn.Module.__init__(this)

    def _assign(self, node: ast.Assign, scope: Scope) -> None:
        value = self.evaluate(node.value, scope)
        for target in node.targets:
            self.assign(target, value, scope)

    def _ann_assign(self, node: ast.AnnAssign, scope: Scope) -> None:
        if node.value is not None:
            self.assign(node.target, self.evaluate(node.value, scope), scope)

    def _aug_assign(self, node: ast.AugAssign, scope: Scope) -> None:
        target = node.target
        value = self.evaluate(node.value, scope)
        if isinstance(target, ast.Name):
            scope.set(target.id, self.binary(node.op, scope.get(target.id, self), value, True))
        elif isinstance(target, ast.Attribute):
            obj = self.evaluate(target.value, scope)
            old = guards.get_attribute(obj, target.attr, self.line)
            guards.set_attribute(obj, target.attr, self.binary(node.op, old, value, True),
                                 self.line)
        elif isinstance(target, ast.Subscript):
            obj = self.evaluate(target.value, scope)
            key = self.evaluate(target.slice, scope)
            self.set_item(obj, key, self.binary(node.op, self.get_item(obj, key), value, True))
        else:
            raise Disallowed("this augmented assignment is not allowed", line=self.line,
                             hint_key="hint.disallowed_syntax")

    def _if(self, node: ast.If, scope: Scope) -> None:
        self.exec_block(node.body if self.evaluate(node.test, scope) else node.orelse, scope)

    def _for(self, node: ast.For, scope: Scope) -> None:
        for item in self.iterate(self.evaluate(node.iter, scope)):
            self.assign(node.target, item, scope)
            if not self._pass_through(node.body, scope):
                return
        self.exec_block(node.orelse, scope)

    def _while(self, node: ast.While, scope: Scope) -> None:
        while self.evaluate(node.test, scope):
            self.tick()
            if not self._pass_through(node.body, scope):
                return
        self.exec_block(node.orelse, scope)

    def _pass_through(self, body: list[ast.stmt], scope: Scope) -> bool:
        """One pass of a loop's body; False when it breaks out of the loop (else is skipped)."""
        try:
            self.exec_block(body, scope)
        except Break:
            return False
        except Continue:
            pass
        return True

    def _break(self, node: ast.Break, scope: Scope) -> None:
        raise Break

    def _continue(self, node: ast.Continue, scope: Scope) -> None:
        raise Continue

    def _pass(self, node: ast.Pass, scope: Scope) -> None:
        pass

    def _global(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> None:
        if isinstance(node, ast.Nonlocal) and scope.parent is None:
            raise SyntaxError("nonlocal declaration not allowed at module level")
        for name in node.names:  # a declaration: functions.local_names reads it from the def
            guards.check_name(name, self.line)

    def _return(self, node: ast.Return, scope: Scope) -> None:
        raise Return(None if node.value is None else self.evaluate(node.value, scope))

    def _delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                scope.delete(target.id, self)
            elif isinstance(target, ast.Subscript):  # del xs[0], del d["k"], del xs[1:3]
                obj = self.evaluate(target.value, scope)
                if not isinstance(obj, (list, dict)):
                    raise Disallowed(f"cannot delete items of '{type(obj).__name__}' here",
                                     line=self.line, hint_key="hint.disallowed_syntax")
                del obj[self.evaluate(target.slice, scope)]
            else:
                raise Disallowed("only names and items of lists and dicts can be deleted",
                                 line=self.line, hint_key="hint.disallowed_syntax")

    def _raise(self, node: ast.Raise, scope: Scope) -> None:
        """raise ValueError("..."), raise err (one the program caught), or a bare raise in an
        except block; only the exception classes the program can name (builtins.EXCEPTIONS)."""
        if node.exc is None:
            if not self._handling:
                raise RuntimeError("No active exception to reraise")
            raise self._handling[-1]
        exc = _exception(self.evaluate(node.exc, scope), self.line)
        if node.cause is None:
            raise exc
        cause = self.evaluate(node.cause, scope)
        raise exc from None if cause is None else _exception(cause, self.line)

    def _assert(self, node: ast.Assert, scope: Scope) -> None:
        if not self.evaluate(node.test, scope):
            raise AssertionError(* ([self.evaluate(node.msg, scope)] if node.msg else []))

    def _function_def(self, node: ast.FunctionDef, scope: Scope) -> None:
        modes = self.grad_modes(node, scope)
        function = self.functions.make_function(node, scope)
        function.modes = modes
        scope.set(node.name, function)

    def _class_def(self, node: ast.ClassDef, scope: Scope) -> None:
        scope.set(node.name, self.functions.make_class(node, scope))

    def _with(self, node: ast.With, scope: Scope) -> None:
        with ExitStack() as stack:
            for item in node.items:
                manager = self.evaluate(item.context_expr, scope)
                if isinstance(manager, type) and manager in al.CONTEXT_MANAGERS:  # no ()
                    raise Disallowed(f"'{manager.__name__}' needs its brackets: "
                                     f"with torch.{manager.__name__}():", line=self.line,
                                     hint_key="hint.disallowed_syntax")
                if not isinstance(manager, al.CONTEXT_MANAGERS):
                    raise Disallowed(f"'{type(manager).__name__}' cannot be used in 'with'",
                                     line=self.line, hint_key="hint.disallowed_syntax")
                value: Any = stack.enter_context(manager)  # type: ignore[arg-type]
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, scope)
            self.exec_block(node.body, scope)

    def _try(self, node: ast.Try, scope: Scope) -> None:
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
                    self._handling.append(exc)
                    try:
                        self.exec_block(handler.body, scope)
                    finally:
                        self._handling.pop()
                        if handler.name:  # as Python: `except E as e` ends with `del e`
                            scope.vars.pop(handler.name, None)
                    break
            else:
                self.error_line = raised_at
                raise
        else:
            self.exec_block(node.orelse, scope)

    def _import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            space = self.namespace(alias.name)
            if alias.asname is not None:
                scope.set(alias.asname, space)
            else:
                root = alias.name.split(".")[0]
                scope.set(root, self.namespace(root))

    def _import_from(self, node: ast.ImportFrom, scope: Scope) -> None:
        space = self.namespace(node.module or "" if node.level == 0 else ".")
        for alias in node.names:
            if alias.name == "*":
                raise Disallowed("'import *' is not allowed; name what you import",
                                 line=self.line, hint_key="hint.import")
            value = guards.get_attribute(space, alias.name, self.line)
            scope.set(alias.asname or alias.name, value)


# Errors that end the program whatever it catches: the limits, and Python's own running out.
_LIMITS = (AppError, RecursionError, MemoryError)


def _exception(value: object, line: int | None) -> BaseException:
    """What `raise value` raises: an instance, or a class called with no arguments."""
    pool = tuple(EXCEPTIONS.values())
    if isinstance(value, type) and value in pool:
        return value()
    if isinstance(value, pool):
        return value
    raise Disallowed("'raise' takes an exception such as ValueError(\"...\")", line=line,
                     hint_key="hint.disallowed_syntax")


def _is_exception_type(kinds: object) -> bool:
    pool = tuple(EXCEPTIONS.values())
    if isinstance(kinds, tuple):
        return all(k in pool for k in kinds)
    return kinds in pool


_STATEMENTS: dict[type[ast.stmt], Callable[[Machine, Any, Scope], None]] = {
    ast.Expr: Machine._expr, ast.Assign: Machine._assign, ast.AnnAssign: Machine._ann_assign,
    ast.AugAssign: Machine._aug_assign, ast.If: Machine._if, ast.For: Machine._for,
    ast.While: Machine._while, ast.Break: Machine._break, ast.Continue: Machine._continue,
    ast.Pass: Machine._pass, ast.Return: Machine._return, ast.Delete: Machine._delete,
    ast.Raise: Machine._raise, ast.Global: Machine._global, ast.Nonlocal: Machine._global,
    ast.Assert: Machine._assert, ast.FunctionDef: Machine._function_def,
    ast.ClassDef: Machine._class_def, ast.With: Machine._with, ast.Try: Machine._try,
    ast.Import: Machine._import, ast.ImportFrom: Machine._import_from,
}
