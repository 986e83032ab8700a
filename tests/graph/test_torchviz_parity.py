"""Parity with torchviz: the grad_fn names our graph reaches from an output are the ones
`torchviz.make_dot` draws for the same output in plain PyTorch (issue 3, item 3).

torchviz labels each grad_fn node with its class name and draws an AccumulateGrad's variable as
a light-blue box; we compare the multiset of op names (AccumulateGrad left out) and, separately,
the number of leaves.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections import Counter

import pytest
import torch

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.jobs import graph_of as graph
from gradient_lab.runner.limits import Limits

torchviz = pytest.importorskip("torchviz")

# torchviz 0.0.3 compares versions with distutils' LooseVersion, which warns.
pytestmark = pytest.mark.filterwarnings(
    "ignore:distutils Version classes are deprecated:DeprecationWarning")

# The output each lesson is compared on: the last tensor it binds with a grad_fn.
# S5 (no_grad evaluation) and S17 (gradcheck) bind no tensor with a grad_fn.
LESSON_OUTPUTS = {
    "S1": "loss", "S2": "loss", "S3": "loss", "S4": "z", "S7": "c", "S9": "grad_1",
    "S10": "y", "S19b": "loss", "S20b": "loss", "S21": "loss", "S21b": "loss", "S22": "y",
}

OWN = {
    "mlp_sequential_mse": ("loss", """import torch
import torch.nn.functional as F
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
x = torch.randn(5, 3)
target = torch.randn(5, 1)
loss = F.mse_loss(model(x), target)
"""),
    "softmax_log_softmax": ("loss", """import torch
import torch.nn.functional as F
logits = torch.randn(4, 3, requires_grad=True)
p = F.softmax(logits, dim=1)
loss = -(F.log_softmax(logits, dim=1) * p.detach()).sum() + p[:, 0].mean()
"""),
    "matmul": ("out", """import torch
w = torch.randn(3, 2, requires_grad=True)
x = torch.randn(4, 3)
out = (x @ w).sum()
"""),
    "broadcasting": ("s", """import torch
a = torch.randn(3, 1, requires_grad=True)
b = torch.randn(1, 4, requires_grad=True)
s = (a + b * 2).sum()
"""),
    "indexing": ("t", """import torch
v = torch.arange(6.0, requires_grad=True)
t = v[1:4].sum() + v[0] * v[5]
"""),
    "cat_stack": ("r", """import torch
p = torch.ones(2, requires_grad=True)
q = torch.zeros(2, requires_grad=True)
c = torch.cat([p, q])
s = torch.stack([p, q])
r = c.sum() + s.mean()
"""),
    "pow_exp_log": ("f", """import torch
x = torch.tensor([0.5, 1.5], requires_grad=True)
f = (torch.exp(x) + torch.log(x) + x ** 3).sum()
"""),
    "custom_function": ("y", """import torch
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([3.0], requires_grad=True)
y = Square.apply(x).sum()
"""),
    "retain_grad": ("z", """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
h.retain_grad()
z = (h ** 2).sum()
z.backward()
"""),
    "inplace_nonleaf": ("z", """import torch
x = torch.tensor([1.0, -2.0], requires_grad=True)
y = x * 2
y.add_(1)
y.relu_()
z = y.sum()
"""),
    "shared_leaf_reuse": ("out", """import torch
a = torch.tensor(2.0, requires_grad=True)
b = a * a
out = b * a + torch.sin(a)
"""),
    "tanh_sigmoid_chain": ("loss", """import torch
w = torch.randn(4, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
x = torch.randn(4)
loss = torch.sigmoid(torch.tanh(w * x).sum() + bias) ** 2
"""),
}

# torchviz reads a custom Function's saved_tensors, which backward frees: for these programs
# it draws the graph as it stands just before the named line (backward changes no edge).
TORCHVIZ_BEFORE = {"S10": "y.sum().backward()"}

CROSS_ENTROPY = """import torch
import torch.nn.functional as F
logits = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0, 2, 1, 1])
loss = F.cross_entropy(logits, labels)
"""

CASES = [pytest.param(EXAMPLES[i].program, out, TORCHVIZ_BEFORE.get(i), id=f"lesson-{i}")
         for i, out in LESSON_OUTPUTS.items()]
CASES += [pytest.param(code, out, None, id=name) for name, (out, code) in OWN.items()]
# NLLLoss saves ignore_index=-100 read back as a uint64: tracing must carry it as a number.
CASES += [pytest.param(CROSS_ENTROPY, "loss", None, id="cross_entropy")]

_LABEL = re.compile(r"\s*(\d+) \[label=(.*?)(?: fillcolor=(\w+))?\]\s*", re.S)


def _torchviz(code: str, output: str, before: str | None) -> tuple[Counter[str], int]:
    if before is not None:
        code = code[:code.index(before)]
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<program>", "exec"), namespace)  # noqa: S102 - the test's own code
    tensor = namespace[output]
    assert isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None
    dot = torchviz.make_dot(tensor)
    ops: dict[str, str] = {}
    leaves: set[str] = set()
    for line in dot.body:
        match = _LABEL.fullmatch(line)
        if not match:
            continue
        node, label, colour = match.groups()
        if colour == "lightblue":
            leaves.add(node)
        elif colour is None and label != "AccumulateGrad":
            ops[node] = label
    return Counter(ops.values()), len(leaves)


def _ours(code: str, output: str) -> tuple[Counter[str], int]:
    g = graph(code, "cpu", Limits())
    by_id = {n.id: n for n in g.nodes}
    [start] = [n for n in g.nodes if n.name == output and n.kind == "op"]
    inputs: dict[str, list[str]] = {}
    for e in g.edges:
        if e.kind == "data" and by_id[e.source].kind != "const":
            inputs.setdefault(e.target, []).append(e.source)
    seen, todo = {start.id}, [start.id]
    while todo:
        for source in inputs.get(todo.pop(), []):
            if source not in seen:
                seen.add(source)
                todo.append(source)
    reached = [by_id[i] for i in seen]
    return (Counter(n.op for n in reached if n.kind == "op" and n.op != "AccumulateGrad"),
            sum(n.kind == "leaf" for n in reached))


@pytest.mark.parametrize(("code", "output", "before"), CASES)
def test_grad_fn_names_match_torchviz(code: str, output: str, before: str | None) -> None:
    theirs_ops, theirs_leaves = _torchviz(code, output, before)
    ours_ops, ours_leaves = _ours(code, output)
    assert ours_ops == theirs_ops
    assert ours_leaves == theirs_leaves


def test_enough_programs() -> None:
    assert sum(not c.marks for c in CASES) >= 20
