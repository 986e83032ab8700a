"""run_program: walk a learner's program over an allow-list. The program never reaches eval/exec.

Each statement and expression is one step of a small tree-walking interpreter. Names, attributes
and calls are checked against allowlist.py; sizes against Limits before anything big is made.
Python's and torch's own exceptions stay as they are while the program runs (so its try/except
sees real RuntimeErrors); the limits' errors are AppErrors, which no program can catch.
"""

from __future__ import annotations

import ast
import functools
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from app.errors import AppError, Disallowed, ProgramError, Timeout, TooLarge
from app.sandbox import guards, hints
from app.sandbox.evaluator import (
    Break,
    Continue,
    ControlFlow,
    Evaluator,
    Recorder,
    Return,
    Scope,
)
from app.sandbox.limits import Limits


@dataclass(frozen=True, slots=True)
class Produced:
    """A tensor the program made: the line, the operation and its inputs, and the grad mode."""

    tensor: torch.Tensor
    line: int
    op: str = ""
    inputs: tuple[object, ...] = ()  # the tensor and number arguments, as given
    grad_enabled: bool = True


@dataclass(frozen=True, slots=True)
class Execution:
    """What a program left behind: its variables, every tensor it made, what it printed."""

    namespace: dict[str, object]
    tensors: tuple[Produced, ...]
    stdout: str
    steps: int


def run_program(code: str, *, limits: Limits, device: torch.device | None = None,
                seed: int = 0, recorder: Recorder | None = None) -> Execution:
    """Run code under limits; raise an AppError (with the learner's line) if it fails.

    .. note:: The random generator is seeded (``seed``) and grad mode restored around every run,
       so the same program gives the same numbers, whichever program ran before it in the worker.
    """
    tree = parse(code, limits)
    machine = _Machine(limits, recorder)
    grad_enabled = torch.is_grad_enabled()
    _seed(seed)
    try:
        with _on(device), recorder or nullcontext(), machine.guarded():
            machine.exec_block(tree.body, machine.globals)
    except BaseException as exc:  # noqa: BLE001 - every failure of the program becomes a 4xx
        error = _app_error(exc, machine.error_line or machine.line)
        error.execution = _execution(machine)  # what ran before the error, for the graph lab
        raise error from None
    finally:
        torch.set_grad_enabled(grad_enabled)
    return _execution(machine)


def _seed(seed: int) -> None:
    # Not torch.manual_seed: it also queues a lazy seed for every accelerator backend, and
    # formats a stack trace for each one (a fifth of a millisecond per run). A program can
    # reach only the CPU and CUDA generators.
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _on(device: torch.device | None) -> AbstractContextManager[object]:
    # A device context intercepts every torch call in Python; the default device is already
    # the CPU (programs cannot change it), so there it would only cost time.
    if device is None or device.type == "cpu":
        return nullcontext()
    return device


def _app_error(exc: BaseException, line: int | None) -> AppError:
    if isinstance(exc, AppError):
        return exc
    if isinstance(exc, (ControlFlow, SyntaxError)):
        return ProgramError(f"SyntaxError: {exc}", line=line, hint_key="hint.syntax_error")
    return hints.from_exception(exc, line)


def _execution(machine: _Machine) -> Execution:
    return Execution(namespace=dict(machine.globals.vars), tensors=tuple(machine.produced.values()),
                     stdout="".join(machine.stdout), steps=machine.steps)


def parse(code: str, limits: Limits) -> ast.Module:
    """The program's syntax tree, once its size, nesting and text are within the limits."""
    size = len(code.encode(errors="surrogatepass"))
    if size > limits.program_bytes:
        raise TooLarge(f"the program is {size} bytes; the limit is {limits.program_bytes}",
                       hint_key="hint.program_too_large")
    return _parse(code)


# A class runs the same few examples over and over: a worker keeps the trees of the last
# programs it parsed (a fifth of a small program's run). Nothing writes to a tree once made.
@functools.lru_cache(maxsize=64)
def _parse(code: str) -> ast.Module:
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise ProgramError(f"SyntaxError: {exc.msg}", line=exc.lineno,
                           hint_key="hint.syntax_error") from None
    except ValueError as exc:  # a NUL byte, or a lone surrogate the parser cannot encode
        raise ProgramError(f"SyntaxError: {exc}", hint_key="hint.syntax_error") from None
    except (RecursionError, MemoryError):
        raise TooLarge("the program is nested too deeply", hint_key="hint.recursion") from None
    # Level by level, reading each node's fields directly: ast.iter_child_nodes' two
    # generators per node made this walk cost more than parsing the program.
    level: list[ast.AST] = [tree]
    for _ in range(101):
        below: list[ast.AST] = []
        for node in level:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                _check_text(node.value, node.lineno)
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    below.append(value)
                elif isinstance(value, list):
                    below.extend(item for item in value if isinstance(item, ast.AST))
        if not below:
            return tree
        level = below
    line = next((node.lineno for node in level if hasattr(node, "lineno")), None)
    raise TooLarge("the program is nested more than 100 levels deep", line=line,
                   hint_key="hint.recursion")


def _check_text(value: str, line: int) -> None:
    """A string must be text: "\\ud800" (a lone surrogate) could not be printed or sent as JSON."""
    try:
        value.encode()
    except UnicodeEncodeError:
        raise ProgramError("a string holds a lone surrogate such as \\ud800, which is not text",
                           line=line, hint_key="hint.syntax_error") from None


class _Machine(Evaluator):
    """The statements; expressions live in evaluator.Evaluator."""

    def __init__(self, limits: Limits, recorder: Recorder | None) -> None:
        super().__init__(limits, recorder)
        self.deadline = time.monotonic() + limits.wall_seconds
        self.next_clock = 0  # the step at which to look at the clock again

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
            handler: Callable[[_Machine, Any, Scope], None] | None = _STATEMENTS.get(type(stmt))
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
        self.evaluate(node.value, scope)

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
            try:
                self.exec_block(node.body, scope)
            except Break:
                return
            except Continue:
                continue
        self.exec_block(node.orelse, scope)

    def _while(self, node: ast.While, scope: Scope) -> None:
        while self.evaluate(node.test, scope):
            self.tick()
            try:
                self.exec_block(node.body, scope)
            except Break:
                return
            except Continue:
                continue
        self.exec_block(node.orelse, scope)

    def _break(self, node: ast.Break, scope: Scope) -> None:
        raise Break

    def _continue(self, node: ast.Continue, scope: Scope) -> None:
        raise Continue

    def _pass(self, node: ast.Pass, scope: Scope) -> None:
        pass

    def _return(self, node: ast.Return, scope: Scope) -> None:
        raise Return(None if node.value is None else self.evaluate(node.value, scope))

    def _delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            if not isinstance(target, ast.Name):
                raise Disallowed("only names can be deleted", line=self.line,
                                 hint_key="hint.disallowed_syntax")
            scope.delete(target.id, self)

    def _assert(self, node: ast.Assert, scope: Scope) -> None:
        if not self.evaluate(node.test, scope):
            raise AssertionError(* ([self.evaluate(node.msg, scope)] if node.msg else []))

    def _function_def(self, node: ast.FunctionDef, scope: Scope) -> None:
        if node.decorator_list:
            raise Disallowed("decorators are not allowed here", line=node.decorator_list[0].lineno,
                             hint_key="hint.disallowed_syntax")
        scope.set(node.name, self.functions.make_function(node, scope))

    def _class_def(self, node: ast.ClassDef, scope: Scope) -> None:
        scope.set(node.name, self.functions.make_autograd_function(node, scope))

    def _with(self, node: ast.With, scope: Scope) -> None:
        self.with_block(node, scope)

    def _try(self, node: ast.Try, scope: Scope) -> None:
        self.try_block(node, scope)

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


_STATEMENTS: dict[type[ast.stmt], Callable[[_Machine, Any, Scope], None]] = {
    ast.Expr: _Machine._expr, ast.Assign: _Machine._assign, ast.AnnAssign: _Machine._ann_assign,
    ast.AugAssign: _Machine._aug_assign, ast.If: _Machine._if, ast.For: _Machine._for,
    ast.While: _Machine._while, ast.Break: _Machine._break, ast.Continue: _Machine._continue,
    ast.Pass: _Machine._pass, ast.Return: _Machine._return, ast.Delete: _Machine._delete,
    ast.Assert: _Machine._assert, ast.FunctionDef: _Machine._function_def,
    ast.ClassDef: _Machine._class_def, ast.With: _Machine._with, ast.Try: _Machine._try,
    ast.Import: _Machine._import, ast.ImportFrom: _Machine._import_from,
}

__all__ = ["Execution", "Produced", "run_program", "parse", "TooLarge"]
