"""How trace() describes what it finds, as gradient_lab.graph's dataclasses of plain values.

A tensor becomes a Node, a value an op saved for backward a Saved, and each tensor the program
bound to a name a Variable; program_names finds the names the program gave its tensors and
modules. The tensors' values are read through one TensorReads per trace (gradient_lab.tensors).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from gradient_lab.graph.model import Node, Saved, Variable
from gradient_lab.graph.recording import Produced
from gradient_lab.tensors import (
    TensorReads,
    dtype_name,
    grad_fn_of,
    is_leaf_of,
    numel_budget,
    plain_number,
)


def program_names(namespace: dict[str, object]) -> tuple[dict[int, str], dict[int, str],
                                                         dict[int, str], dict[str, str]]:
    """The program's names, by id: each tensor's first name (parameters as model.0.weight),
    each module's last name, and the module holding each parameter, by that module's last;
    and each module name's class (model.0: Sequential)."""
    tensors: dict[int, str] = {}
    modules: dict[int, str] = {}
    owners: dict[int, str] = {}
    classes: dict[str, str] = {}
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor):
            tensors.setdefault(id(value), name)
        elif isinstance(value, torch.nn.Module):
            try:
                named = list(value.named_modules(prefix=name))
            except AttributeError:  # a module whose __init__ left out super().__init__()
                named = [(name, value)]
            for sub, module in named:
                modules[id(module)] = sub
                classes[sub] = type(module).__name__
            seen: set[int] = set()
            for sub, module in named:  # named_parameters(), without walking the modules again
                for key, param in vars(module).get("_parameters", {}).items():
                    if param is not None and id(param) not in seen:
                        seen.add(id(param))
                        tensors.setdefault(id(param), f"{sub}.{key}")
                        owners[id(param)] = sub
    return tensors, modules, owners, classes


def describe_tensor(kind: str, name: str | None, op: str | None, t: torch.Tensor | None,
                    line: int | None, origin: str, numel: int, plain: TensorReads) -> Node:
    """A node for t, its id left for the trace to give; t is None for an op whose tensor the
    program never held."""
    if t is None:
        return Node("", kind, name, op, None, None, None, requires_grad=True, line=line,
                    origin=origin)
    return Node("", kind, name, op, list(t.shape), dtype_name(t.dtype), plain(t, numel),
                grad=plain(_kept_grad(t), numel), requires_grad=t.requires_grad,
                is_leaf=is_leaf_of(t), retains_grad=t.retains_grad, line=line, origin=origin)


def _kept_grad(t: torch.Tensor) -> torch.Tensor | None:
    """t.grad where torch keeps it: .grad of a non-leaf warns, and is None unless
    retain_grad() was called."""
    return t.grad if is_leaf_of(t) or t.retains_grad else None


def describe_saved(name: str, value: object, numel: int, plain: TensorReads) -> Saved:
    """A value an op saved for backward: a tensor's values and shape, or a plain value."""
    # Plain numbers, not torch.tensor(value): nll_loss saves ignore_index=-100 as the uint64
    # 18446744073709551516, which no tensor dtype holds.
    if type(value) is int or value is None:  # reduction, dim, alpha: plain as they are
        return Saved(name, value, None)
    if type(value) is tuple and all(type(v) is int for v in value):  # sizes and strides
        return Saved(name, list(value), None)
    if isinstance(value, torch.Tensor):
        return Saved(name, plain(value, numel), list(value.shape))
    if isinstance(value, (int, float, bool)):
        return Saved(name, plain_number(value), None)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
        return Saved(name, [plain_number(v) for v in value], None)
    return Saved(name, str(value), None)


def describe_variables(namespace: dict[str, object], made: dict[int, Produced],
                       plain: TensorReads) -> dict[str, Variable]:
    """Each tensor the program bound to a name, with the line that made it.

    A tensor bound to several names is described once, under its first; the others say whose
    it is (`alias_of`), so a program that binds one tensor to thousands of names does not send
    it thousands of times. The values each sends in full shrink as there are more of them.
    """
    tensors = [(name, value) for name, value in namespace.items()
               if isinstance(value, torch.Tensor)]
    numel = numel_budget(len({id(value) for _, value in tensors}))
    first: dict[int, str] = {}
    described: dict[str, Variable] = {}
    for name, t in tensors:
        if id(t) in first:
            described[name] = replace(described[first[id(t)]], value=None, grad=None,
                                      alias_of=first[id(t)])
            continue
        first[id(t)] = name
        line = made[id(t)].line if id(t) in made else None
        described[name] = _variable(t, line, plain, numel)
    return described


def _variable(t: torch.Tensor, line: int | None, plain: TensorReads, numel: int) -> Variable:
    fn = grad_fn_of(t)
    return Variable(value=plain(t, numel), grad=plain(_kept_grad(t), numel),
                    requires_grad=t.requires_grad, is_leaf=is_leaf_of(t),
                    grad_fn=None if fn is None else type(fn).__name__,
                    shape=list(t.shape), dtype=dtype_name(t.dtype), line=line)
