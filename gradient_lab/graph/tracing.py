"""trace(execution, recorder) -> Graph: the graph PyTorch built, as graph.model's dataclasses.

Nodes are tensors, as in the tutorial's drawing: leaves (AccumulateGrad's variable), tensors
made by a grad_fn, and constants (numbers and tensors that don't require grad) feeding an op.
The walk is breadth first over grad_fn from the roots, in the program's order, so ids repeat.
"""

from __future__ import annotations

from typing import Any

import torch

from gradient_lab.errors import TooLarge
from gradient_lab.graph.describing import (
    describe_saved,
    describe_tensor,
    describe_variables,
    program_names,
)
from gradient_lab.graph.model import (
    Backward,
    Edge,
    Gradcheck,
    GradIn,
    Graph,
    Node,
    Nonfinite,
    OptimizerStep,
    ParamStep,
    Step,
)
from gradient_lab.graph.recording import (
    GraphRecorder,
    OptimizerEvent,
    Produced,
    graph_too_large,
    saved_tensors,
    walk,
)
from gradient_lab.runner.child.program import Execution
from gradient_lab.tensors import (
    TensorReads,
    grad_fn_of,
    is_leaf_of,
    numel_budget,
    plain_number,
    version_of,
)


def trace(execution: Execution, recorder: GraphRecorder, device: torch.device) -> Graph:
    """The variables, and the graph reachable from them and from every backward call.

    A graph past the node limit is left out (`omitted` says why): the program ran, and its
    output and variables are still what it made.
    """
    try:
        return _Builder(execution, recorder).build(device)
    except TooLarge as too_large:
        builder = _Builder(execution, recorder)
        variables = describe_variables(execution.namespace, builder.made, builder.plain)
        return Graph(device=str(device), stdout=execution.stdout, variables=variables, nodes=[],
                     edges=[], backward=[], gradchecks=[], first_nonfinite=None,
                     truncated=recorder.untraced_calls > 0, omitted=too_large.message)


class _Builder:
    def __init__(self, execution: Execution, recorder: GraphRecorder) -> None:
        self.execution = execution
        self.recorder = recorder
        self.limit = recorder.limits.graph_nodes
        # The namespace holds every value named, so an id is its value's alone.
        self._name_of, self.module_names, self.owners, self.module_classes = program_names(
            execution.namespace)
        self.made = recorder.produced
        # A grad_fn's Python object is only reused while someone holds it: keep each one, so
        # that the walk's next_functions hands back the same objects and ids match.
        self.by_fn: dict[int, tuple[Any, torch.Tensor, int | None]] = {}  # (fn, tensor, line)
        for p in self.made.values():
            fn = grad_fn_of(p.tensor)
            if fn is not None and id(fn) not in self.by_fn:
                self.by_fn[id(fn)] = (fn, p.tensor, p.line or None)
        for t, _ in recorder.module_outputs.values():
            fn = grad_fn_of(t)
            if fn is not None and id(fn) not in self.by_fn:
                self.by_fn[id(fn)] = (fn, t, None)
        self.order: list[Node] = []
        self.nodes: dict[int, Node] = {}  # looked up by id(grad_fn), id(tensor) or id(const)
        self.of_tensor: dict[int, Node] = {}
        self.edges: list[Edge] = []
        self._edge_keys: set[tuple[str, str, str, int | None]] = set()  # _edge's, not a walk's
        self._linked: set[int] = set()  # id(fn) whose edges from its inputs are in
        self._keep: list[object] = []  # ids are only unique while their objects live
        self.parents: dict[int, tuple[tuple[Any, int], ...]] = {}  # id(fn): its next_functions
        self.numel = 1_000  # values each tensor sends in full; build() sets it by graph size
        self.plain = TensorReads()

    def build(self, device: torch.device) -> Graph:
        calls = self.recorder.calls
        results = {id(r) for c in calls for r in c.results}
        forward = [t for t in self.execution.namespace.values() if isinstance(t, torch.Tensor)]
        walks = [(self._walk([grad_fn_of(t) for t in forward + [r for c in calls
                                                                 for r in c.roots]
                              if id(t) not in results]), "forward")]
        walks += [(self._walk([grad_fn_of(r) for r in c.results]), f"backward {c.index + 1}")
                  for c in calls]
        # Every node reachable from the variables and each call: a walk counts each once, and
        # only a grad call's results (create_graph=True) lead into another walk's nodes.
        reachable = len(walks[0][0]) if not any(fns for fns, _ in walks[1:]) else \
            len({id(fn) for fns, _ in walks for fn in fns})
        if reachable > self.limit:
            raise graph_too_large(self.limit)
        self.numel = numel_budget(reachable + len(forward))
        for fns, origin in walks:
            self._grad_graph(fns, origin)
        for t in forward:
            if t.requires_grad and is_leaf_of(t) and id(t) not in self.of_tensor:
                self._leaf(t)
        self._constants_and_cuts()
        self._modules()
        order = {key: i for i, key in enumerate(self.made)}
        for key, node in self.of_tensor.items():
            node.made = order.get(key)
        used = {e.source for e in self.edges}
        roots = {self.of_tensor[id(r)].id for c in calls for r in c.roots
                 if id(r) in self.of_tensor}
        for node in self.order:
            node.is_output = node.id in roots or (node.kind != "const" and node.id not in used)
        variables = describe_variables(self.execution.namespace, self.made, self.plain)
        return Graph(device=str(device), stdout=self.execution.stdout, variables=variables,
                     nodes=self.order, edges=self.edges,
                     backward=[self._backward(c) for c in calls],
                     gradchecks=[Gradcheck(g.line, g.passed, g.message, g.analytical,
                                           g.numerical) for g in self.recorder.gradchecks],
                     first_nonfinite=self._first_nonfinite(),
                     truncated=self.recorder.untraced_calls > 0,
                     optimizer_steps=[self._optimizer_step(e)
                                      for e in self.recorder.optimizer_events],
                     modules=self._module_classes())

    # --- nodes ---------------------------------------------------------------------------------

    def _add(self, key: int, obj: object, node: Node) -> Node:
        if len(self.order) >= self.limit:
            raise graph_too_large(self.limit)
        node.id = f"n{len(self.order)}"
        self.order.append(node)
        self.nodes[key] = node
        self._keep.append(obj)
        return node

    def _walk(self, roots: list[Any]) -> list[Any]:
        return walk(roots, self.limit, self.parents)

    def _grad_graph(self, fns: list[Any], origin: str) -> None:
        nodes, recorded, numel, plain = self.nodes, self.recorder.saved, self.numel, self.plain
        for fn in fns:
            key = id(fn)
            if key in nodes:
                continue
            op = type(fn).__name__
            if op == "AccumulateGrad":
                node = self._leaf(fn.variable)
            elif key in self.by_fn:
                _, t, line = self.by_fn[key]
                node = self._add(key, fn, describe_tensor(
                    "op", self._name_of.get(id(t)), op, t, line, origin, numel, plain))
                self.of_tensor[id(t)] = node
            else:
                node = self._add(key, fn, describe_tensor(
                    "op", None, op, None, None, origin, numel, plain))
            nodes[key] = node
            saved = recorded[key][1] if key in recorded else saved_tensors(fn)
            node.saved = [describe_saved(name, value, numel, plain) for name, value in saved]
        # A node's edges from its inputs are one per input, so only a node an earlier walk
        # reached (a grad call's results lead back into the forward graph) repeats them.
        edges, linked = self.edges, self._linked
        for fn in fns:
            if id(fn) in linked:
                continue
            linked.add(id(fn))
            target = nodes[id(fn)].id
            for index, (parent, _) in enumerate(self.parents[id(fn)]):
                if parent is not None:
                    edges.append(Edge(nodes[id(parent)].id, target, "data", index))

    def _leaf(self, t: torch.Tensor) -> Node:
        node = self.of_tensor.get(id(t))
        if node is None:
            made = self.made.get(id(t))
            node = self._add(id(t), t, describe_tensor(
                "leaf", self._name_of.get(id(t)), None, t, made.line if made else None,
                "forward", self.numel, self.plain))
            node.grad_kept = True
            self.of_tensor[id(t)] = node
        return node

    def _const(self, value: object) -> Node:
        if isinstance(value, torch.Tensor):
            node = self.of_tensor.get(id(value))
            if node is None:
                made = self.made.get(id(value))
                node = self._add(id(value), value, describe_tensor(
                    "const", self._name_of.get(id(value)), None, value,
                    made.line if made else None, "forward", self.numel, self.plain))
                self.of_tensor[id(value)] = node
            return node
        holder = [value]  # numbers are shared by Python; each use gets its own node
        return self._add(id(holder), holder, Node(
            "", "const", None, None, [], type(value).__name__,
            plain_number(value) if isinstance(value, (int, float)) else None))

    def _constants_and_cuts(self) -> None:
        of_tensor = self.of_tensor
        for made in list(self.made.values()):
            t = made.tensor
            node = of_tensor.get(id(t))
            if node is None:
                node = self._cut(made)
            if node is None or node.kind == "leaf":
                continue
            for x in made.inputs:
                # A number, or a tensor that does not require grad: a constant, or a cut
                # (detach, no_grad) that already has its node, which feeds this one all the same.
                if isinstance(x, (int, float)) or (isinstance(x, torch.Tensor)
                                                  and not x.requires_grad and x is not t):
                    const = of_tensor.get(id(x)) if isinstance(x, torch.Tensor) else None
                    if const is None:
                        const = self._const(x)
                        const.line = const.line or node.line
                    self._edge(const.id, node.id, "data", None)

    def _cut(self, made: Produced) -> Node | None:
        """A node for a tensor that the grad walks did not reach but the graph fed: cut from
        it (detach, no_grad), or computed from a cut tensor."""
        t = made.tensor
        if grad_fn_of(t) is not None:
            # in a graph, but one no walk drew (a training loop's earlier steps): not a cut,
            # and drawing each as one would add nodes for every step the loop took
            return None
        sources = [self.of_tensor[id(x)] for x in made.inputs
                   if isinstance(x, torch.Tensor) and id(x) in self.of_tensor and x is not t]
        if not made.grad_enabled and id(t) in self.recorder.module_outputs:
            # model(x) under no_grad: the cut runs from the layer's parameters (S5)
            module = self.recorder.module_outputs[id(t)][1]
            sources += [self._leaf(p) for p in module.parameters() if p.requires_grad]
        if not sources or made.op in ("grad", "backward"):
            return None
        node = self._const(t)
        # x.data is the detach of PyTorch before 0.4, still in many tutorials.
        kind = "detached" if made.op.startswith("detach") or made.op == "data" else (
            "no_grad" if any(s.requires_grad for s in sources) else "data")
        for source in dict.fromkeys(s.id for s in sources):
            self._edge(source, node.id, kind, None)
        return node

    def _modules(self) -> None:
        of_tensor = self.of_tensor
        for t, module in self.recorder.module_outputs.values():
            node = of_tensor.get(id(t))
            if node is not None and node.module is None:
                node.module = self.module_names.get(id(module), type(module).__name__)
        for key, owner in self.owners.items():
            if key in of_tensor:
                of_tensor[key].module = owner
        if not any(node.module for node in self.order):
            return  # no module was called: nothing to spread
        # An op inside a module call (t(), expand, ...) that the program never held takes the
        # module of what it feeds, when that is one module.
        inner = {node.id: node for node in self.order
                 if node.kind == "op" and node.module is None and node.value is None}
        if not inner:
            return
        by_id = {node.id: node for node in self.order}
        consumers: dict[str, set[str | None]] = {}
        for edge in self.edges:
            if edge.source in inner:
                consumers.setdefault(edge.source, set()).add(by_id[edge.target].module)
        for source, mods in consumers.items():
            if len(mods) == 1 and None not in mods:
                inner[source].module = next(iter(mods))

    def _module_classes(self) -> dict[str, str]:
        """The class of each module a node is in and of each module around it (model.0, model)."""
        names = {node.module for node in self.order if node.module}
        around = {name.rsplit(".", i)[0] for name in names for i in range(name.count(".") + 1)}
        return {name: self.module_classes[name] for name in sorted(around)
                if name in self.module_classes}

    def _edge(self, source: str, target: str, kind: str, index: int | None) -> None:
        key = (source, target, kind, index)
        if key not in self._edge_keys:
            self._edge_keys.add(key)
            self.edges.append(Edge(source, target, kind, index))

    # --- backward calls ------------------------------------------------------------------------

    def _backward(self, call: Any) -> Backward:
        nodes, parents = self.nodes, self.parents
        steps = []
        for step in call.steps:
            fn = step.fn
            node = nodes.get(id(fn))
            if node is None:
                continue
            if node.kind == "op" and step.grad_outputs:
                node.grad = step.grad_outputs[0]
                node.grad_kept = node.retains_grad
            grads = []
            if step.grad_inputs:  # an AccumulateGrad's step has none
                nexts = parents.get(id(fn))
                for (parent, _), (grad, local) in zip(
                        fn.next_functions if nexts is None else nexts, step.grad_inputs,
                        strict=False):
                    target = nodes.get(id(parent))  # None is no node's object, nor its id
                    grads.append(GradIn(None if target is None else target.id, grad, local))
            steps.append(Step(node.id, type(fn).__name__, step.grad_outputs, grads))
        leaf_grads = {nodes[key].id: grad for key, (_, grad) in call.leaf_grads.items()
                      if key in nodes}
        leaf_values = {nodes[key].id: value for key, (_, value) in call.leaf_values.items()
                       if key in nodes}
        # A constant the program changed in place after this call shows as the call used it;
        # one unchanged since has that value as its node's already.
        leaf_values |= {nodes[key].id: value for key, (t, version, value)
                        in call.constant_values.items()
                        if key in nodes and version_of(t) != version}
        roots = [self.of_tensor[id(r)].id for r in call.roots if id(r) in self.of_tensor]
        return Backward(call.index, call.kind, call.line, roots, call.create_graph,
                        call.retain_graph, steps, leaf_grads, call.error, leaf_values)

    def _optimizer_step(self, event: OptimizerEvent) -> OptimizerStep:
        params = []
        for update in event.params:
            node = self.of_tensor.get(id(update.param))
            name = self._name_of.get(id(update.param)) or (node.name if node else None)
            params.append(ParamStep(node.id if node else None, name or "param", update.before,
                                    update.grad, update.after, update.state, update.largest))
        return OptimizerStep(event.kind, event.line, type(event.owner).__name__,
                             event.after_call, event.settings, params, event.set_to_none)

    def _first_nonfinite(self) -> Nonfinite | None:
        for made in self.made.values():
            node = self.of_tensor.get(id(made.tensor))
            if node is not None and not self.plain.finite(made.tensor):
                node.nonfinite = True
                return Nonfinite(node.id, "value")
        for call in self.recorder.calls:
            for step in call.steps:
                if step.nonfinite and id(step.fn) in self.nodes:
                    self.nodes[id(step.fn)].nonfinite = True
                    return Nonfinite(self.nodes[id(step.fn)].id, "grad")
        return None
