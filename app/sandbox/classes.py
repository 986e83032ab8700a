"""The classes a program may define: `class X(torch.autograd.Function)`, `class X(nn.Module)`
and a plain `class X:` (a helper such as EarlyStopping).

Their methods are the program's own functions (functions.UserFunction), so torch calls them back
(apply, a module's __call__) through the same interpreter, under the same limits. A class is made
with type(), from nothing but those methods and its fields; guards decides what a program may
read and set on an instance (PROGRAM_METHODS, PROGRAM_FIELDS).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

from app.errors import Disallowed
from app.sandbox import guards
from app.sandbox.guards import PROGRAM_FIELDS, PROGRAM_METHODS

if TYPE_CHECKING:
    from app.sandbox.functions import Functions, UserFunction
    from app.sandbox.scope import Scope


def make_class(functions: Functions, node: ast.ClassDef, scope: Scope) -> type:
    """The class a `class` statement defines: no base (a helper such as EarlyStopping), or one,
    torch.autograd.Function or nn.Module."""
    machine = functions.machine
    guards.check_name(node.name, machine.line)
    base = machine.evaluate(node.bases[0], scope) if len(node.bases) == 1 else \
        object if not node.bases else None
    if node.keywords or node.decorator_list or \
            base not in (torch.autograd.Function, nn.Module, object):
        raise Disallowed("a class may extend torch.autograd.Function or nn.Module, or nothing, "
                         "as in 'class MyReLU(torch.autograd.Function):', 'class Net(nn.Module):'"
                         " or 'class EarlyStopping:'", line=machine.line,
                         hint_key="hint.disallowed_syntax")
    if base is torch.autograd.Function:
        cls = _autograd_function(functions, node, scope)
    else:
        cls = _with_methods(functions, node, scope, cast(type, base))
    cls.__module__ = "__main__"  # as in a Python session: print(Net) is <class '__main__.Net'>
    functions.classes.add(cls)
    return cls


def _methods(node: ast.ClassDef, fields: bool = False) -> list[ast.FunctionDef | ast.Assign]:
    """The class body's functions (and with `fields`, its `name = value` lines); a docstring or
    pass may stand beside them, nothing else."""
    methods: list[ast.FunctionDef | ast.Assign] = []
    for stmt in node.body:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr)
                                          and isinstance(stmt.value, ast.Constant)):
            continue
        field = fields and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name)
        if not (isinstance(stmt, ast.FunctionDef) or field):
            raise Disallowed("a class body here holds only its functions (methods)"
                             + (" and fields (hidden = 16)" if fields else ""),
                             line=stmt.lineno, hint_key="hint.disallowed_syntax")
        methods.append(stmt)  # type: ignore[arg-type]  # a FunctionDef or a field's Assign
    return methods


def _autograd_function(functions: Functions, node: ast.ClassDef, scope: Scope) -> type:
    """@staticmethod forward(ctx, ...) and backward(ctx, ...), and nothing else.

    .. note:: torch names the backward node after the class: MyReLU's is MyReLUBackward.
    """
    members: dict[str, Any] = {}
    for stmt in _methods(node):
        assert isinstance(stmt, ast.FunctionDef)
        if not (len(stmt.decorator_list) == 1 and isinstance(stmt.decorator_list[0], ast.Name)
                and stmt.decorator_list[0].id == "staticmethod"):
            raise Disallowed("an autograd.Function's body holds only @staticmethod "
                             "functions (forward, backward)", line=stmt.lineno,
                             hint_key="hint.disallowed_syntax")
        members[stmt.name] = staticmethod(
            functions.make_function(stmt, scope, f"{node.name}.{stmt.name}"))
    return type(node.name, (torch.autograd.Function,), members)


def _with_methods(functions: Functions, node: ast.ClassDef, scope: Scope, base: type) -> type:
    """An nn.Module, or a plain class (base object): __init__, methods of the program's own, each
    perhaps decorated with a grad mode, and fields (hidden = 16).

    .. note:: `__init__` is the one dunder name a program may write, and only here: the
       interpreter runs `super().__init__()` in it as nn.Module.__init__(self) (statements.py),
       the only use of super() it allows. Methods may not replace nn.Module's own (parameters,
       to, state_dict, ...), which torch calls itself, but forward. A plain class has no
       public names of its own to replace, and its instances hold only what the program gave.
    """
    members: dict[str, Any] = {}
    fields: set[str] = set()
    machine = functions.machine
    for stmt in _methods(node, fields=True):
        name = stmt.targets[0].id if isinstance(stmt, ast.Assign) else stmt.name  # type: ignore
        machine.line = stmt.lineno
        if name != "__init__":
            guards.check_name(name, stmt.lineno)
            if name != "forward" and hasattr(base, name):
                raise Disallowed(f"'{name}' is {base.__name__}'s own; give yours another name",
                                 line=stmt.lineno, hint_key="hint.disallowed_name")
        if isinstance(stmt, ast.Assign):  # a field the class's instances share: hidden = 16
            members[name] = machine.evaluate(stmt.value, scope)
            fields.add(name)
            continue
        modes = machine.grad_modes(stmt, scope)  # @torch.no_grad() def predict(...)
        if not (stmt.args.args or stmt.args.posonlyargs):
            raise Disallowed(f"{node.name}.{name}() needs self as its first parameter",
                             line=stmt.lineno, hint_key="hint.disallowed_syntax")
        fn = functions.make_function(stmt, scope, f"{node.name}.{name}",
                                     check_name=name != "__init__")
        fn.module_init, fn.modes = name == "__init__", modes
        members[name] = _method(fn)
    members[PROGRAM_METHODS] = frozenset(name for name in members if name != "__init__")
    members[PROGRAM_FIELDS] = frozenset(fields)
    return type(node.name, (base,), members)


def _method(fn: UserFunction) -> Any:
    """fn as a method: a plain function, which Python binds to the instance (self)."""
    def method(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    method.__name__, method.__qualname__ = fn.__name__, fn.__qualname__
    return method


def super_init(node: ast.expr) -> bool:
    """Whether node is `super().__init__()`, `super(Net, self).__init__()` or, as older code
    writes it, `nn.Module.__init__(self)`."""
    if not (isinstance(node, ast.Call) and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"):
        return False
    inner = node.func.value
    if isinstance(inner, (ast.Name, ast.Attribute)):  # nn.Module.__init__(self)
        return len(node.args) == 1 and not isinstance(node.args[0], ast.Starred)
    return not node.args and isinstance(inner, ast.Call) and \
        isinstance(inner.func, ast.Name) and inner.func.id == "super" and not inner.keywords \
        and len(inner.args) in (0, 2) and all(isinstance(a, ast.Name) for a in inner.args)
