"""Graph: what trace() returns, as dataclasses of plain values.

The program's variables, the nodes and edges of the graph autograd built, and each backward
call's steps. Fields use the contract's names (gradient_lab.web.schemas' GraphResponse), so
gradient_lab.wire writes a Graph as the reply's JSON just as it is.

Saved, Edge, GradIn and Step are not frozen, as Node is not: trace() makes one for each saved
value, edge, backward step and gradient (2,000 of them for a 300-node graph), and a frozen
dataclass sets each field through object.__setattr__, which made building them cost three
times as much. Nothing changes them once trace() has returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    alias_of: str | None = None  # another name of the same tensor: its values are there


@dataclass(slots=True)
class Saved:
    name: str
    value: Any
    shape: list[int] | None


@dataclass(slots=True)
class Node:
    id: str
    kind: str
    name: str | None
    op: str | None
    shape: list[int] | None
    dtype: str | None
    value: Any
    grad: Any = None
    grad_kept: bool = False
    requires_grad: bool = False
    is_leaf: bool = False
    retains_grad: bool = False
    is_output: bool = False
    line: int | None = None
    module: str | None = None
    origin: str = "forward"
    saved: list[Saved] = field(default_factory=list)
    nonfinite: bool = False
    made: int | None = None  # the order the program made it in (None: never held)


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    kind: str
    input: int | None


@dataclass(slots=True)
class GradIn:
    target: str | None
    grad: Any
    local: Any


@dataclass(slots=True)
class Step:
    node: str
    op: str
    grad_outputs: list[Any]
    grad_inputs: list[GradIn]


@dataclass(frozen=True, slots=True)
class Backward:
    index: int
    kind: str
    line: int
    roots: list[str]
    create_graph: bool
    retain_graph: bool
    steps: list[Step]
    leaf_grads: dict[str, Any]
    error: str | None
    # each leaf, and each constant tensor, as this call's forward used it
    leaf_values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Gradcheck:
    line: int
    passed: bool
    message: str | None
    analytical: Any
    numerical: Any


@dataclass(frozen=True, slots=True)
class Nonfinite:
    node: str
    where: str


@dataclass(frozen=True, slots=True)
class ParamStep:
    """One parameter through optimizer.step() (zero_grad(): its .grad before and after)."""

    node: str | None
    name: str
    before: Any
    grad: Any
    after: Any
    state: dict[str, Any]
    largest: dict[str, Any] | None = None  # step: the element that moved most, read from all


@dataclass(frozen=True, slots=True)
class OptimizerStep:
    """What optimizer.step() or a zero_grad() did, after backward call `after_call`."""

    kind: str
    line: int
    optimizer: str
    after_call: int | None
    settings: dict[str, Any]
    params: list[ParamStep]
    set_to_none: bool | None


@dataclass(frozen=True, slots=True)
class Graph:
    device: str
    stdout: str
    variables: dict[str, Variable]
    nodes: list[Node]
    edges: list[Edge]
    backward: list[Backward]
    gradchecks: list[Gradcheck]
    first_nonfinite: Nonfinite | None
    truncated: bool
    omitted: str | None = None  # why no graph is drawn: it is past the node limit
    optimizer_steps: list[OptimizerStep] = field(default_factory=list)
    modules: dict[str, str] = field(default_factory=dict)  # each module name's class
