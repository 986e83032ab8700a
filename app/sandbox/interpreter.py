"""run_program: walk a learner's program over an allow-list. The program never reaches eval/exec.

Each statement and expression is one step of a small tree-walking interpreter. Names, attributes
and calls are checked against allowlist.py; sizes against Limits before anything big is made.
Python's and torch's own exceptions stay as they are while the program runs (so its try/except
sees real RuntimeErrors); the limits' errors are AppErrors, which no program can catch.

statements.py runs the statements, evaluator.py the expressions; runtime.py holds the run's state
and the checked calls, operators and assignment both share; scope.py the variables and the
break/continue/return signals.
"""

from __future__ import annotations

import ast
import functools
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch

from app.errors import AppError, ProgramError, TooLarge
from app.sandbox import hints
from app.sandbox.limits import Limits
from app.sandbox.runtime import Recorder
from app.sandbox.scope import ControlFlow
from app.sandbox.statements import Machine


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

    .. note:: The random generator is seeded (``seed``), and grad mode and anomaly mode restored
       around every run, so the same program gives the same numbers, whichever program ran
       before it in the worker.
    """
    tree = parse(code, limits)
    machine = Machine(limits, recorder)
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
        if torch.is_anomaly_enabled():  # a `with torch.autograd.detect_anomaly()` cut short
            torch.set_anomaly_enabled(False)
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


def _execution(machine: Machine) -> Execution:
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


__all__ = ["Execution", "Produced", "run_program", "parse", "TooLarge"]
