"""The program's own functions: `def`, `lambda`, and `class X(torch.autograd.Function)`.

A UserFunction is an ordinary Python callable, so torch can call it back (hooks, gradcheck,
an autograd.Function's forward and backward), and every call runs through the same interpreter,
under the same limits.
"""

from __future__ import annotations

import ast
import weakref
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import TYPE_CHECKING, Any

import torch

from app.errors import ProgramError, TooLarge
from app.sandbox import guards

if TYPE_CHECKING:
    from app.sandbox.runtime import Runtime
    from app.sandbox.scope import Scope


class UserFunction:
    """A function the program defined; calling it runs its body in a fresh scope."""

    def __init__(self, machine: Runtime, name: str, args: ast.arguments,
                 body: list[ast.stmt] | ast.expr, scope: Scope, node: ast.AST,
                 qualname: str | None = None) -> None:
        self.machine = machine
        self.__name__ = name
        self.__qualname__: str
        # Python's errors name a function by its qualified name: outer.<locals>.inner()
        outer = machine.function
        self.__qualname__ = qualname or (name if outer is None else
                                         f"{outer.__qualname__}.<locals>.{name}")
        self.args = args
        self.body = body
        self.scope = scope
        self.locals, self.declared_global, self.declared_nonlocal = local_names(node)
        self.modes: list[Any] = []  # grad modes that decorate it, outermost first
        self.module_init = False  # an nn.Module class's __init__: may run super().__init__()
        self.defaults = [machine.evaluate(d, scope) for d in args.defaults]
        self.kw_defaults = {a.arg: machine.evaluate(d, scope)
                            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                            if d is not None}
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                guards.check_name(arg.arg, machine.line)

    def __repr__(self) -> str:
        return f"<function {self.__qualname__} at {id(self):#x}>"  # as Python writes one

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from app.sandbox.scope import Break, Continue, Return, Scope

        machine = self.machine
        if machine.depth >= machine.limits.recursion:
            raise TooLarge(f"calls nested more than {machine.limits.recursion} deep",
                           line=machine.line, hint_key="hint.recursion")
        local = Scope(self.scope, self.locals, self.declared_global, self.declared_nonlocal)
        local.vars.update(self._bind(args, kwargs))
        caller_line, caller = machine.line, machine.function
        machine.depth += 1
        machine.function = self
        if self.module_init:  # the instance being made, whatever `self` is bound to later
            machine.initializing.append(args[0] if args else None)
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
            machine.line, machine.function = caller_line, caller
            if self.module_init:
                machine.initializing.pop()

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name; the TypeErrors, in the order and words of
        CPython's own (they reach a learner's except blocks and screen)."""
        spec, name = self.args, f"{self.__qualname__}()"
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        by_keyword = {a.arg for a in [*spec.args, *spec.kwonlyargs]}
        bound: dict[str, Any] = dict(zip(positional, args, strict=False))
        extra = args[len(positional):]
        if spec.vararg is not None:
            bound[spec.vararg.arg] = tuple(extra)
        more: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in by_keyword:
                if key in bound:
                    raise TypeError(f"{name} got multiple values for argument '{key}'")
                bound[key] = value
            elif spec.kwarg is not None:
                more[key] = value
            else:
                only = [k for k in kwargs if k in positional and k not in by_keyword]
                if only:
                    raise TypeError(f"{name} got some positional-only arguments passed as "
                                    f"keyword arguments: '{', '.join(only)}'")
                raise TypeError(f"{name} got an unexpected keyword argument '{key}'")
        if spec.kwarg is not None:
            bound[spec.kwarg.arg] = more
        if extra and spec.vararg is None:
            raise TypeError(_too_many(name, len(positional), len(self.defaults), len(args),
                                      sum(a.arg in kwargs for a in spec.kwonlyargs)))
        defaults = dict(zip(positional[len(positional) - len(self.defaults):], self.defaults,
                            strict=True)) | self.kw_defaults
        for kind, names in (("positional", positional), ("keyword-only",
                                                          [a.arg for a in spec.kwonlyargs])):
            missing = [n for n in names if n not in bound and n not in defaults]
            if missing:
                quoted = [f"'{n}'" for n in missing]
                listed = quoted[0] if len(quoted) == 1 else \
                    f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else \
                    f"{', '.join(quoted[:-1])}, and {quoted[-1]}"
                raise TypeError(f"{name} missing {len(missing)} required {kind} "
                                f"argument{'s' if len(missing) > 1 else ''}: {listed}")
            for n in names:
                if n not in bound:
                    bound[n] = defaults[n]
        return bound


def _too_many(name: str, takes: int, defaults: int, given: int, keyword_only: int) -> str:
    """CPython's message for too many positional arguments."""
    if defaults:
        takes_text, plural = f"from {takes - defaults} to {takes}", True
    else:
        takes_text, plural = str(takes), takes != 1
    given_text = str(given)
    if keyword_only:
        given_text += (f" positional argument{'s' if given != 1 else ''} (and {keyword_only} "
                       f"keyword-only argument{'s' if keyword_only != 1 else ''})")
    verb = "was" if given == 1 and not keyword_only else "were"
    return (f"{name} takes {takes_text} positional argument{'s' if plural else ''} "
            f"but {given_text} {verb} given")


_LOCALS: weakref.WeakKeyDictionary[ast.AST, tuple[frozenset[str], frozenset[str],
                                                  frozenset[str]]]
_LOCALS = weakref.WeakKeyDictionary()


def local_names(node: ast.AST) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The names a def or lambda binds in its own scope (its parameters, what it assigns,
    imports or defines), as Python's compiler finds them; those it declares `global`; and
    those it declares `nonlocal`.

    Reading a local before it is bound is an UnboundLocalError, not a read of the enclosing
    scope's; a global one is read and written in the program's own scope, a nonlocal one in
    the nearest enclosing function's.
    """
    names = _LOCALS.get(node)
    if names is None:
        found: set[str] = set()
        declared: set[str] = set()
        outer: set[str] = set()
        assert isinstance(node, (ast.FunctionDef, ast.Lambda))
        spec = node.args
        for arg in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg]:
            if arg is not None:
                found.add(arg.arg)
        body = node.body if isinstance(node.body, list) else [node.body]
        pending: list[ast.AST] = list(body)
        while pending:
            item = pending.pop()
            if isinstance(item, ast.Name) and isinstance(item.ctx, (ast.Store, ast.Del)):
                found.add(item.id)
            elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(item.name)  # its body is a scope of its own; its decorators are not
                pending.extend(item.decorator_list)
                continue
            elif isinstance(item, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).split(".")[0] for a in item.names)
            elif isinstance(item, ast.ExceptHandler) and item.name:
                found.add(item.name)
            elif isinstance(item, ast.Global):
                declared.update(item.names)
            elif isinstance(item, ast.Nonlocal):
                outer.update(item.names)
            elif isinstance(item, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                   ast.GeneratorExp)):
                continue  # scopes of their own (only their outermost iterable is read here)
            pending.extend(ast.iter_child_nodes(item))
        names = _LOCALS[node] = (frozenset(found - declared - outer), frozenset(declared),
                                 frozenset(outer))
    return names


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

    def make_function(self, node: ast.FunctionDef, scope: Scope, qualname: str | None = None,
                      check_name: bool = True) -> UserFunction:
        if check_name:  # not for an nn.Module's __init__ (classes.py)
            guards.check_name(node.name, self.machine.line)
        return UserFunction(self.machine, node.name, node.args, node.body, scope, node,
                            qualname)

    def make_lambda(self, node: ast.Lambda, scope: Scope) -> UserFunction:
        return UserFunction(self.machine, "<lambda>", node.args, node.body, scope, node)

    def make_class(self, node: ast.ClassDef, scope: Scope) -> type:
        from app.sandbox.classes import make_class  # it makes UserFunctions: no import cycle

        return make_class(self, node, scope)

    def is_module_class(self, fn: object) -> bool:
        """Whether fn is a class the program defined, other than an autograd.Function (calling
        it makes an instance: a module, or a plain object)."""
        return fn in self.classes and isinstance(fn, type) and \
            not issubclass(fn, torch.autograd.Function)
