"""trace(execution) -> Graph: what the program left, as frozen dataclasses of plain values."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import torch

from app.errors import TooLarge
from app.sandbox.interpreter import Execution
from app.tensors import to_plain


@dataclass(frozen=True, slots=True)
class Variable:
    """A tensor the program bound to a name, as the learner would inspect it."""

    value: Any
    grad: Any
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    shape: list[int]
    dtype: str
    line: int | None


@dataclass(frozen=True, slots=True)
class Graph:
    device: str
    stdout: str
    variables: dict[str, Variable]


def trace(execution: Execution, device: torch.device, max_nodes: int) -> Graph:
    """Every variable bound to a tensor, in the order the program first bound it."""
    roots = [v.grad_fn for v in execution.namespace.values()
             if isinstance(v, torch.Tensor) and v.grad_fn is not None]
    _count_nodes(roots, max_nodes)
    lines = {id(p.tensor): p.line for p in execution.tensors}
    variables = {
        name: _variable(value, lines.get(id(value)))
        for name, value in execution.namespace.items()
        if isinstance(value, torch.Tensor)
    }
    return Graph(device=str(device), stdout=execution.stdout, variables=variables)


def _variable(t: torch.Tensor, line: int | None) -> Variable:
    # .grad of a non-leaf warns and is None unless retain_grad() was called: read it only
    # where torch keeps it.
    grad = t.grad if (t.is_leaf or t.retains_grad) else None
    return Variable(
        value=to_plain(t),
        grad=to_plain(grad),
        requires_grad=t.requires_grad,
        is_leaf=t.is_leaf,
        grad_fn=None if t.grad_fn is None else type(t.grad_fn).__name__,
        shape=list(t.shape),
        dtype=str(t.dtype).removeprefix("torch."),
        line=line,
    )


def _count_nodes(roots: list[Any], limit: int) -> int:
    """Walk grad_fn like torch's own graph iteration (deque + seen); refuse past limit nodes."""
    seen = {id(fn) for fn in roots}
    queue = deque(roots)
    while queue:
        fn = queue.popleft()
        for parent, _ in fn.next_functions:
            if parent is not None and id(parent) not in seen:
                seen.add(id(parent))
                if len(seen) > limit:
                    raise TooLarge(f"the graph has more than {limit:,} nodes",
                                   hint_key="hint.graph_too_large")
                queue.append(parent)
    return len(seen)
