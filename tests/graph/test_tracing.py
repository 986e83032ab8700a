"""The graph a program built: nodes, edges, backward steps, cuts, gradchecks, NaN."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest
import torch

from gradient_lab.errors import ProgramError
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.graph.model import Graph, Node
from gradient_lab.jobs import graph_of as graph
from gradient_lab.runner.limits import Limits

LIMITS = Limits()
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "programs"


def run(code: str, **limits: object) -> Graph:
    return graph(code, "cpu", dataclasses.replace(LIMITS, **limits))


def by_name(g: Graph) -> dict[str, Node]:
    return {n.name: n for n in g.nodes if n.name}


def test_s1_graph_is_the_tutorials_drawing() -> None:
    g = run(EXAMPLES["S1"].program)
    nodes = by_name(g)
    assert {n: nodes[n].kind for n in ("a", "b", "c", "d", "loss")} == {
        "a": "leaf", "b": "leaf", "c": "op", "d": "op", "loss": "op"}
    assert [nodes[n].op for n in ("c", "d", "loss")] == ["MulBackward0", "AddBackward0",
                                                         "PowBackward0"]
    assert [nodes[n].value for n in ("a", "b", "c", "d", "loss")] == [[2.0], [3.0], [6.0], [7.0],
                                                                      [49.0]]
    ids = {n.id: n for n in g.nodes}
    into = {(ids[e.source].name, ids[e.target].name) for e in g.edges}
    assert {("a", "c"), ("b", "c"), ("c", "d"), ("d", "loss")} <= into
    one = [ids[e.source] for e in g.edges if e.target == nodes["d"].id and ids[e.source].kind
           == "const"]
    assert [c.value for c in one] == [1]  # the constant 1 of d = c + 1
    assert nodes["loss"].is_output and not nodes["c"].is_output


def test_s2_backward_steps_run_in_the_engines_order() -> None:
    program = EXAMPLES["S2"].program
    g = run(program)
    steps = g.backward[0].steps
    # An independent oracle: the autograd profiler's record of the same backward.
    namespace: dict[str, object] = {}
    exec(compile(program.replace("loss.backward()", ""), "<p>", "exec"), namespace)
    with torch.autograd.profiler.profile() as prof:
        namespace["loss"].backward()  # type: ignore[attr-defined]
    engine = [e.name.split(": ")[1].rsplit("::", 1)[-1] for e in prof.function_events
              if e.name.startswith("autograd::engine::evaluate_function")]
    assert [s.op for s in steps] == engine


def test_s2_each_step_shows_the_chain_rule() -> None:
    g = run(EXAMPLES["S2"].program)
    nodes = by_name(g)
    steps = {s.op: s for s in g.backward[0].steps}
    assert steps["PowBackward0"].grad_outputs == [[1.0]]
    assert steps["PowBackward0"].grad_inputs[0].grad == [14.0]  # dloss/dd = 2d = 14
    add = steps["AddBackward0"]
    assert add.grad_outputs == [[14.0]] and add.grad_inputs[0].local == [1.0]
    assert add.grad_inputs[0].target == nodes["c"].id
    mul = {gi.target: gi for gi in steps["MulBackward0"].grad_inputs}
    assert mul[nodes["a"].id].grad == [42.0] and mul[nodes["a"].id].local == [3.0]
    assert mul[nodes["b"].id].grad == [28.0] and mul[nodes["b"].id].local == [2.0]
    assert g.backward[0].leaf_grads == {nodes["a"].id: [42.0], nodes["b"].id: [28.0]}
    assert nodes["d"].grad == [14.0] and nodes["d"].grad_kept is False  # seen, not kept


def test_s2_printing_the_gradients_adds_nothing_to_the_drawing() -> None:
    # print(a.grad) reads a property: the tutorial's drawing is still a, b, c, d, loss, 1, 2.
    g = run(EXAMPLES["S2"].program)
    assert sorted(str(n.name or n.value) for n in g.nodes) == sorted(
        ["a", "b", "c", "d", "loss", "1", "2"])
    assert g.stdout == "tensor([42.])\ntensor([28.])\n"


def test_a_grad_read_is_no_cut_and_data_is_drawn_as_detached() -> None:
    # 《深度学习入门之PyTorch》's gradient descent step: w.data = w.data - 1e-2 * w.grad.data
    program = (CORPUS / "zh__liao_linear_regression_gd.py").read_text()
    g = run(program)
    nodes = by_name(g)
    ids = {n.id: n for n in g.nodes}
    out_of = [(ids[e.source].name, e.kind, ids[e.target].value) for e in g.edges
              if ids[e.source].name in ("w", "b") and ids[e.target].kind == "const"]
    # w.grad is not computed from w; w.data is w before the step, cut from the graph.
    assert sorted((name, kind) for name, kind, _ in out_of) == [("b", "detached"),
                                                                 ("w", "detached")]
    for name, _, value in out_of:
        before = nodes[name].value[0] + 1e-2 * nodes[name].grad[0]  # type: ignore[index]
        assert value == [pytest.approx(before, abs=1e-6)]  # in float32


def test_s3_second_backward_adds_to_the_leaves() -> None:
    g = run(EXAMPLES["S3"].program)
    nodes = by_name(g)
    assert len(g.backward) == 2
    assert g.backward[0].leaf_grads[nodes["a"].id] == [42.0]
    assert g.backward[1].leaf_grads[nodes["a"].id] == [84.0]
    assert g.backward[1].leaf_grads[nodes["b"].id] == [56.0]


def test_s6_detach_is_a_visible_cut_and_the_error_keeps_the_graph() -> None:
    with pytest.raises(ProgramError) as caught:
        run(EXAMPLES["S6"].program)
    partial = caught.value.partial
    assert partial is not None and caught.value.line == 9
    ids = {n["id"]: n for n in partial["nodes"]}
    cut = [(ids[e["source"]]["name"], ids[e["target"]]["name"]) for e in partial["edges"]
           if e["kind"] == "detached"]
    assert cut == [("b", "c")]
    assert partial["backward"][0]["error"].startswith("RuntimeError: element 0")


def test_s7_set_grad_enabled_false_cuts_like_no_grad() -> None:
    g = run(EXAMPLES["S7"].program)
    nodes = by_name(g)
    ids = {n.id: n for n in g.nodes}
    kinds = {(ids[e.source].name, ids[e.target].name): e.kind for e in g.edges}
    assert kinds[("a", "b")] == "no_grad" and nodes["b"].requires_grad is False
    assert kinds[("a", "c")] == "data" and nodes["c"].op == "MulBackward0"


def test_s5_no_grad_builds_no_graph_and_shows_the_cut() -> None:
    g = run(EXAMPLES["S5"].program)
    assert not any(n.kind == "op" for n in g.nodes) and g.backward == []
    ids = {n.id: n for n in g.nodes}
    cuts = {(ids[e.source].name, ids[e.target].name) for e in g.edges if e.kind == "no_grad"}
    assert cuts == {("model.weight", "outputs"), ("model.bias", "outputs")}


_CUTS = """import torch

x = torch.tensor(2.0, requires_grad=True)
y = x * 3
z = y.detach() * x
with torch.no_grad():
    w = x * 10
loss = z + w
loss.backward()
"""


def test_a_cut_value_feeds_the_op_that_uses_it() -> None:
    g = run(_CUTS)
    nodes = by_name(g)
    ids = {n.id: n for n in g.nodes}
    edges = {(ids[e.source].name or ids[e.source].value, ids[e.target].name, e.kind)
             for e in g.edges}
    # y.detach() is cut from y, and still feeds z; w, made under no_grad, still feeds loss.
    detached = next(e for e in g.edges if e.kind == "detached" and ids[e.source].name == "y")
    assert ids[detached.target].value == 6.0 and ids[detached.target].kind == "const"
    assert (6.0, "z", "data") in edges
    assert ("x", "w", "no_grad") in edges and ("w", "loss", "data") in edges
    assert not nodes["w"].is_output and nodes["loss"].is_output
    floating = [n for n in g.nodes if n.kind == "const"
                and not any(e.source == n.id for e in g.edges)]
    assert floating == []


def test_s9_create_graph_builds_the_derivatives_own_graph() -> None:
    g = run(EXAMPLES["S9"].program)
    nodes = by_name(g)
    assert nodes["grad_1"].origin == "backward 1" and nodes["grad_1"].value == [27.0]
    assert nodes["y"].origin == "forward"
    assert [b.kind for b in g.backward] == ["grad", "grad"]
    assert g.backward[0].create_graph and not g.backward[1].create_graph
    last = g.backward[1].steps[-1]
    assert last.grad_inputs[0].target == nodes["x"].id and last.grad_inputs[0].grad == [18.0]


def test_s10_custom_function_shows_as_its_backward_node() -> None:
    g = run(EXAMPLES["S10"].program)
    ops = [n.op for n in g.nodes if n.kind == "op"]
    assert "MyReLUBackward" in ops
    assert "MyReLUBackward" in [s.op for s in g.backward[0].steps]


def test_gradcheck_reports_pass_and_failure_with_both_jacobians() -> None:
    assert [c.passed for c in run(EXAMPLES["S17"].program).gradchecks] == [True]
    wrong = ("import torch\n"
             "class Square(torch.autograd.Function):\n    @staticmethod\n"
             "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n"
             "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
             "        return g * x\n"
             "x = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)\n"
             "ok = torch.autograd.gradcheck(Square.apply, (x,), raise_exception=False)\n")
    check = run(wrong).gradchecks[0]
    assert check.passed is False
    assert check.analytical == [[1.0, 0.0], [0.0, 2.0]]  # the wrong backward: g * x
    numerical = [v for row in check.numerical for v in row]
    assert numerical == pytest.approx([2.0, 0.0, 0.0, 4.0], abs=1e-4)  # the true 2x


def test_s19_second_backward_error_is_recorded_on_that_call() -> None:
    with pytest.raises(ProgramError) as caught:
        run(EXAMPLES["S19"].program)
    calls = caught.value.partial["backward"]  # type: ignore[index]
    assert calls[0]["error"] is None and "second time" in calls[1]["error"]


_XY = "import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x ** 3\n"


@pytest.mark.parametrize("call", [
    "y.backward(torch.ones(3))",
    "y.backward(torch.ones(3), True)",
    "y.backward(torch.ones(3), None, True)",
    "y.backward(gradient=torch.ones(3), retain_graph=True)",
    "y.backward(torch.tensor([1.0, 0.5, 2.0]), inputs=[x])",
    "y.backward(torch.ones(3), None, False, [x])",  # inputs, positionally
    "y.sum().backward()",
    "y.backward()",  # not a scalar
    "y.backward(torch.ones(3), gradient=torch.ones(3))",
    "y.backward(torch.ones(3), inputs=[x], sideways=True)",
    "y.backward(torch.ones(2))",
])
def test_every_form_of_tensor_backward_gives_what_torch_gives(call: str) -> None:
    namespace: dict[str, object] = {}
    try:
        with warnings.catch_warnings():  # create_graph=True warns of a reference cycle
            warnings.simplefilter("ignore")
            exec(compile(_XY + call + "\n", "<p>", "exec"), namespace)  # the oracle, not the app
    except Exception as error:  # noqa: BLE001 - the program's own error is what is compared
        with pytest.raises(ProgramError) as caught:
            run(_XY + call + "\n")
        assert caught.value.message == f"{type(error).__name__}: {error}"
        return
    g = run(_XY + call + "\n")
    x = namespace["x"]
    assert isinstance(x, torch.Tensor) and x.grad is not None
    assert g.variables["x"].grad == x.grad.tolist()
    assert g.backward[0].create_graph == ("True" in call and "None, True" in call)
    assert [s.op for s in g.backward[0].steps][-1] == "AccumulateGrad"


@pytest.mark.parametrize("n", [3, 200])  # checked on the plain list, and with torch
def test_the_local_derivative_is_left_out_where_the_incoming_gradient_has_a_zero(n: int) -> None:
    g = run("import torch\n"
            f"x = torch.linspace(-1.0, 1.0, {n}, requires_grad=True)\n"
            "y = x * 3\n"
            "w = torch.ones(" + str(n) + ")\n"
            "w[0] = 0.0\n"
            "z = (y * w).sum()\n"
            "z.backward()\n")
    steps = {s.op: s for s in g.backward[0].steps}
    mul = steps["MulBackward0"]  # y * w: the gradient into y is w, with a zero
    assert mul.grad_outputs and all(gi.local is None for gi in mul.grad_inputs)
    mul_x = [s for s in g.backward[0].steps if s.op == "MulBackward0"][1]  # x * 3
    assert mul_x.grad_inputs[0].local is None  # its incoming gradient (w) has the zero


def test_the_local_derivative_is_grad_in_over_grad_out_in_the_tensors_dtype() -> None:
    g = run("import torch\n"
            "x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)\n"
            "y = torch.sin(x)\n"
            "z = (y * torch.tensor([3.0, 7.0, 11.0])).sum()\n"
            "z.backward()\n")
    x = torch.tensor([0.1, 0.2, 0.3])
    sin = next(s for s in g.backward[0].steps if s.op == "SinBackward0")
    grad_out = torch.tensor([3.0, 7.0, 11.0])
    assert sin.grad_inputs[0].local == ((grad_out * torch.cos(x)) / grad_out).tolist()


def test_first_nonfinite_value_is_flagged() -> None:
    g = run("import torch\nx = torch.tensor([0.0, 1.0], requires_grad=True)\ny = x * 2\n"
            "z = torch.log(x)\n"
            "w = z.sum()\nw.backward()\n")
    nodes = by_name(g)
    assert g.first_nonfinite is not None
    assert g.first_nonfinite.node == nodes["z"].id and g.first_nonfinite.where == "value"
    assert nodes["z"].nonfinite and not nodes["y"].nonfinite


def test_nonfinite_gradient_alone_is_flagged_as_grad() -> None:
    g = run("import torch\nx = torch.tensor([0.0], requires_grad=True)\ny = torch.sqrt(x)\n"
            "y.backward()\n")
    assert g.first_nonfinite is not None and g.first_nonfinite.where == "grad"


def test_module_calls_group_their_ops_and_parameters() -> None:
    g = run("import torch\nfrom torch import nn\n"
            "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))\n"
            "x = torch.randn(4, 2)\nloss = model(x).sum()\nloss.backward()\n")
    modules = {n.op or n.name: n.module for n in g.nodes if n.kind != "const"}
    assert modules["model.0.weight"] == "model.0" and modules["ReluBackward0"] == "model.1"
    assert modules["SumBackward0"] is None


def test_the_graph_names_the_class_of_each_module_its_nodes_are_in_and_around() -> None:
    program = (CORPUS / "d2lzh__parameters_nested_blocks.py").read_text(encoding="utf-8")
    g = run(program + "unused = nn.Tanh()\n")
    namespace: dict[str, object] = {}
    exec(compile(program, "<p>", "exec"), namespace)
    rgnet = namespace["rgnet"]
    assert isinstance(rgnet, torch.nn.Module)
    assert g.modules == {f"rgnet.{k}".removesuffix("."): type(m).__name__
                         for k, m in rgnet.named_modules()}
    assert g.modules["rgnet.0.block 2"] == "Sequential" and g.modules["rgnet.0.block 2.1"] == "ReLU"


def test_retain_grad_keeps_a_non_leaf_gradient() -> None:
    g = run("import torch\na = torch.ones(2, requires_grad=True)\nb = a * 3\nb.retain_grad()\n"
            "b.sum().backward()\n")
    b = by_name(g)["b"]
    assert b.retains_grad and b.grad_kept and b.grad == [1.0, 1.0]


def test_traced_gradients_equal_plain_torch() -> None:
    program = ("import torch\nw = torch.tensor([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)\n"
               "x = torch.tensor([1.0, 2.0])\nh = torch.tanh(w @ x)\nloss = (h ** 2).mean()\n"
               "loss.backward()\n")
    g = run(program)
    namespace: dict[str, object] = {}
    exec(compile(program, "<p>", "exec"), namespace)
    assert by_name(g)["w"].grad == namespace["w"].grad.tolist()  # type: ignore[attr-defined]


def test_same_program_same_ids() -> None:
    first, second = run(EXAMPLES["S3"].program), run(EXAMPLES["S3"].program)
    assert [dataclasses.asdict(n) for n in first.nodes] == [dataclasses.asdict(n)
                                                          for n in second.nodes]
    assert first.edges == second.edges


def test_a_graph_over_the_node_limit_is_left_out() -> None:
    g = run("import torch\nx = torch.ones(1, requires_grad=True)\n"
            "for i in range(50):\n    x = x * 1.0\n", graph_nodes=20)
    assert g.omitted == "the graph has more than 20 nodes" and g.nodes == []
    assert g.variables["x"].grad_fn == "MulBackward0"


def test_a_long_training_loop_traces_only_the_first_backward_calls() -> None:
    g = run("import torch\nw = torch.ones(1, requires_grad=True)\nfor i in range(30):\n"
            "    (w * 2).sum().backward()\n")
    assert len(g.backward) == 20 and g.truncated


def test_a_big_graph_sends_summaries_not_every_value() -> None:
    g = run("import torch\nx = torch.randn(1000, requires_grad=True)\ny = x\n"
            "for i in range(150):\n"
            "    y = y * 1.01 + 0.1\ny.sum().backward()\n")
    assert len(g.nodes) > 300
    assert len(json.dumps(dataclasses.asdict(g))) < 2_000_000
    leaf = by_name(g)["x"]
    assert leaf.value["summary"] is True and leaf.value["numel"] == 1000


def test_a_small_graph_sends_every_value() -> None:
    x = by_name(run("import torch\nx = torch.arange(1000.0, requires_grad=True)\n"
                    "y = (x * 2).sum()\n"))["x"]
    assert x.value == [float(i) for i in range(1000)]


def test_a_long_training_loop_draws_no_more_nodes_than_a_short_one() -> None:
    # Each step's output is in a graph no walk drew (only the first backward calls are traced):
    # it is no detach() cut, and drawing it as one added two nodes a step, past the limit.
    program = ("import torch\nimport torch.nn as nn\n"
               "X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])\n"
               "Y = torch.tensor([[0.0], [1.0], [1.0], [0.0]])\n"
               "model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\n"
               "opt = torch.optim.Adam(model.parameters(), lr=0.05)\n"
               "loss_fn = nn.BCEWithLogitsLoss()\n"
               "for epoch in range(STEPS):\n    opt.zero_grad()\n"
               "    loss = loss_fn(model(X), Y)\n    loss.backward()\n    opt.step()\n")
    sizes = {steps: len(graph(program.replace("STEPS", str(steps)), "cpu", Limits()).nodes)
             for steps in (30, 600)}
    assert sizes[30] == sizes[600] < 200


# --- a program's own classes, and the odd things learners' loops do ------------------------

def test_the_graph_names_the_layers_of_a_programs_own_model() -> None:
    g = run("""import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.fc2 = nn.Linear(3, 1)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
net = Net()
loss = net(torch.ones(1, 2)).sum()
loss.backward()
""")
    leaves = {node.name for node in g.nodes if node.kind == "leaf"}
    assert leaves == {"net.fc1.weight", "net.fc1.bias", "net.fc2.weight", "net.fc2.bias"}
    assert {node.line for node in g.nodes if node.op == "AddmmBackward0"} == {9}
    # relu is no layer's output, but the Net call made it: drawn in the Net's box
    assert {node.module for node in g.nodes if node.op == "ReluBackward0"} == {"net"}


def test_a_model_on_the_meta_device_is_drawn_without_values() -> None:
    g = run("""import torch
import torch.nn as nn
n = nn.Linear(2, 2).to("meta")
y = n(torch.ones(2, 2, device="meta"))
print(y.shape)
""")
    assert g.stdout == "torch.Size([2, 2])\n"
    assert g.first_nonfinite is None


def test_ops_after_a_forward_that_raised_are_not_drawn_inside_its_module() -> None:
    g = run("""import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        h = self.fc(x)
        raise ValueError("no")
n = Net()
try:
    n(torch.ones(2))
except ValueError:
    pass
a = torch.ones(2, requires_grad=True)
b = a * 3
""")
    assert [node.module for node in g.nodes if node.name in ("a", "b")] == [None, None]


def test_a_descent_loop_that_unpacks_its_parameter_draws_without_error() -> None:
    # x, y = p are views; opt.step() changes p in place under no_grad. torch then refuses to
    # read the views' grad_fn, which the program never asks for, but the graph lab does.
    program = """import torch
p = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([p], lr=0.01)
for i in range(3):
    x, y = p
    loss = (x - 1) ** 2 + 10 * (y + 2) ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
print(p, loss)
"""
    g = run(program)
    assert g.variables["x"].grad_fn is None and g.variables["loss"].grad_fn
    with pytest.raises(ProgramError) as caught:  # and its partial graph, after an error
        run(program + "1 / 0\n")
    assert caught.value.partial is not None


def test_a_tensor_too_big_to_copy_is_summarised_where_it_lies() -> None:
    # An expanded view: 10^8 elements over three numbers, whose copy would take 400 MB.
    g = run("import torch\nt = torch.ones(3).as_strided((10**8,), (0,))\n")
    value = g.variables["t"].value
    assert value["numel"] == 10**8 and value["head"] == [1.0] * 8 and value["mean"] == 1.0
