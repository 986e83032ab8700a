"""The graph lab's models: POST /api/graph's request, and the graph it answers with."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gradient_lab.web.schemas.common import Device


class GraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The PyTorch program to run.")
    device: Device = Field("auto", description="Where to run it; auto picks CUDA when present.")


class VariableOut(BaseModel):
    value: Any = Field(description="A number, nested lists, or a summary for large tensors.")
    grad: Any
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None = Field(description="The grad_fn class name, e.g. MulBackward0.")
    shape: list[int]
    dtype: str
    line: int | None = Field(description="The line that produced this tensor.")
    alias_of: str | None = Field(None, description="Another name of the same tensor, which "
                                                   "carries its value and grad (here null).")


class SavedOut(BaseModel):
    name: str = Field(description="The saved attribute, as torchviz's show_saved reads it: self.")
    value: Any
    shape: list[int] | None


class NodeOut(BaseModel):
    id: str = Field(description="n0, n1, ... in walk order: the same program gives the same ids.")
    kind: Literal["leaf", "op", "const"]
    name: str | None = Field(description="The learner's variable bound to this tensor, if any.")
    op: str | None = Field(description="grad_fn class name (MulBackward0); null for leaves.")
    shape: list[int] | None
    dtype: str | None
    value: Any
    grad: Any = Field(description="For leaves: .grad. For ops: the gradient that reached the "
                                  "node in the last traced backward, kept or not.")
    grad_kept: bool = Field(description="True when .grad holds it (leaves, retain_grad()).")
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    is_output: bool = Field(description="A root: a backward call started here, or no op uses it.")
    line: int | None
    module: str | None = Field(description="The nn.Module call this op belongs to (model.0).")
    origin: str = Field(description="'forward', or 'backward N' for nodes built by create_graph.")
    saved: list[SavedOut]
    nonfinite: bool
    made: int | None = Field(
        default=None, description="The order the program made this tensor in (0 first); "
        "null for one it never held. Module calls are numbered by it.")


class EdgeOut(BaseModel):
    source: str = Field(description="The input, in forward direction.")
    target: str = Field(description="The op (or cut tensor) that consumes it.")
    kind: Literal["data", "detached", "no_grad"]
    input: int | None = Field(description="Position in the target's next_functions.")


class GradInOut(BaseModel):
    target: str | None = Field(description="The input node this gradient is sent to.")
    grad: Any
    local: Any = Field(description="d(output)/d(input) for scalar and elementwise ops, else null.")


class StepOut(BaseModel):
    node: str
    op: str
    grad_outputs: list[Any] = Field(description="The gradient(s) that arrived at this node.")
    grad_inputs: list[GradInOut] = Field(description="What it sent to each input.")


class BackwardOut(BaseModel):
    index: int
    kind: Literal["backward", "grad"]
    line: int
    roots: list[str]
    create_graph: bool
    retain_graph: bool
    steps: list[StepOut]
    leaf_grads: dict[str, Any] = Field(description="Each leaf's .grad right after this call.")
    error: str | None = Field(description="Set when this call raised (backward twice, ...).")
    leaf_values: dict[str, Any] = Field(
        default_factory=dict, description="Each leaf's value, and each constant tensor's, as "
        "this call's forward used it (a training loop's step() moves a leaf afterwards, and a "
        "program may change a constant in place; the node's value is the last).")


class GradcheckOut(BaseModel):
    line: int
    passed: bool
    message: str | None
    analytical: Any
    numerical: Any


class NonfiniteOut(BaseModel):
    node: str
    where: Literal["value", "grad"]


class ParamStepOut(BaseModel):
    node: str | None = Field(description="The parameter's leaf in the graph, if drawn.")
    name: str
    before: Any = Field(description="step: the value before; zero_grad: the .grad before.")
    grad: Any = Field(description="step: the .grad it read; zero_grad: null.")
    after: Any = Field(description="step: the value after; zero_grad: the .grad after.")
    state: dict[str, Any] = Field(description="The optimizer's state for it after the step: "
                                              "momentum_buffer, exp_avg, exp_avg_sq, step.")
    largest: dict[str, Any] | None = Field(
        default=None, description="step: the element that moved most, found among all of "
                                  "them: index, before, after, update.")


class OptimizerStepOut(BaseModel):
    kind: Literal["step", "zero_grad"]
    line: int
    optimizer: str = Field(description="The class: SGD, Adam, or a module for its zero_grad().")
    after_call: int | None = Field(description="The backward call it follows (null: none yet).")
    settings: dict[str, Any] = Field(description="The first parameter group's lr, momentum, ...")
    params: list[ParamStepOut]
    set_to_none: bool | None = Field(description="zero_grad: whether .grad became None.")


class GraphResponse(BaseModel):
    device: str
    stdout: str
    variables: dict[str, VariableOut]
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    backward: list[BackwardOut]
    gradchecks: list[GradcheckOut]
    first_nonfinite: NonfiniteOut | None
    truncated: bool = Field(description="True when more backward calls ran than were traced.")
    omitted: str | None = Field(None, description="Why the graph is not drawn (past the node "
                                                  "limit); the run's output and variables "
                                                  "still are.")
    optimizer_steps: list[OptimizerStepOut] = Field(
        default_factory=list, description="What each optimizer.step() and zero_grad() did.")
    modules: dict[str, str] = Field(
        default_factory=dict, description="The class of each module the nodes are in, and of "
                                          "the modules around those (model.0: Sequential).")
