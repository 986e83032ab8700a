"""The tutorial's examples (S1-S22, the Chinese autograd tutorial the lab follows) as data.

Each program is the tutorial's own code with its lost characters restored. The graph lab offers
them as ready examples; the tests run each one and compare with plain PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    section: str
    title_en: str
    title_zh: str
    program: str
    fails_at: int | None = None  # the line where the program's intended error happens
    refused: bool = False  # the lab's limits refuse it (plain Python would try, and crash)


_S1 = """import torch

a = torch.tensor([2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
c = a * b       # c = 2 * 3 = 6
d = c + 1       # d = 6 + 1 = 7
loss = d ** 2   # loss = 7^2 = 49
"""

_S2 = _S1 + """
loss.backward()
print(a.grad)  # tensor([42.])
print(b.grad)  # tensor([28.])
"""

_S3 = _S2 + """
# a second forward and backward without zeroing: the gradients add up
loss = (a * b + 1) ** 2
loss.backward()
print(a.grad)  # tensor([84.])
print(b.grad)  # tensor([56.])
"""

_S4 = """import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
z = y.mean()
print(f"x is a leaf: {x.is_leaf}")    # True
print(f"x.grad_fn: {x.grad_fn}")      # None
print(f"y is a leaf: {y.is_leaf}")    # False
print(f"y.grad_fn: {y.grad_fn}")      # MulBackward0
print(f"z.grad_fn: {z.grad_fn}")      # MeanBackward0
"""

_S5 = """import torch

model = torch.nn.Linear(4, 2)
val_inputs = torch.randn(8, 4)
val_labels = torch.randint(0, 2, (8,))

with torch.no_grad():
    outputs = model(val_inputs)
    predictions = outputs.argmax(dim=1)
    accuracy = (predictions == val_labels).float().mean()

print(outputs.requires_grad)  # False: nothing inside no_grad is tracked
print(accuracy)
"""

_S6 = """import torch

a = torch.tensor([1.0], requires_grad=True)
b = a * 2
c = b.detach()   # shares b's data, but is cut from the graph
d = c * 3        # not tracked
print(c.requires_grad)  # False
print(c.grad_fn)        # None
d.backward()     # RuntimeError: d does not require grad
"""

_S7 = """import torch

a = torch.tensor([1.0], requires_grad=True)
torch.set_grad_enabled(False)
b = a * 2        # not tracked
torch.set_grad_enabled(True)
c = a * 2        # tracked again
print(b.requires_grad, b.grad_fn)  # False None
print(c.requires_grad, c.grad_fn)
"""

_S8 = """import torch

t = torch.tensor([1.0], requires_grad=True)
print(t.detach().cpu().numpy())  # the right way
t.numpy()                        # RuntimeError: requires grad
"""

_S9 = """import torch

x = torch.tensor([3.0], requires_grad=True)
y = x ** 3
grad_1 = torch.autograd.grad(y, x, create_graph=True)[0]  # 3x^2 = 27
print(grad_1)
grad_2 = torch.autograd.grad(grad_1, x)[0]                # 6x = 18
print(grad_2)
"""

_MYRELU = """class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
"""

_S10 = "import torch\n\n" + _MYRELU + """

my_relu = MyReLU.apply
x = torch.randn(5, requires_grad=True)
y = my_relu(x)
y.sum().backward()
print(x.grad)
"""

_S17 = "import torch\nfrom torch.autograd import gradcheck\n\n" + _MYRELU + """

my_custom_function = MyReLU.apply
input = (torch.randn(3, 4, dtype=torch.double, requires_grad=True),)
test = gradcheck(my_custom_function, input, eps=1e-6, atol=1e-4)
print(test)  # True: the analytic gradient matches the numeric one
"""

_S18 = """import torch

x = torch.tensor([1.0, 2.0])   # requires_grad is False
loss = (x * 2).sum()
loss.backward()   # RuntimeError: element 0 of tensors does not require grad
"""

_S19 = """import torch

w = torch.tensor([2.0], requires_grad=True)
loss = (w * 3) ** 2
loss.backward()
loss.backward()   # RuntimeError: Trying to backward through the graph a second time
"""

_S19_FIX = """import torch

w = torch.tensor([2.0], requires_grad=True)
loss = (w * 3) ** 2
loss.backward(retain_graph=True)  # keep the graph's buffers
print(w.grad)   # tensor([36.])
loss.backward()
print(w.grad)   # tensor([72.]): the gradients accumulate
"""

_S20 = """import torch

# On a GPU this is "CUDA out of memory"; here the lab refuses it before allocating.
x = torch.randn(100000, 100000)
"""

_S20_ACCUMULATE = """import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(3, 1)
data = torch.randn(16, 3)
target = torch.randn(16, 1)
accumulation_steps = 4

# four micro-batches of 4, each loss divided by accumulation_steps
model.zero_grad()
for i in range(accumulation_steps):
    inputs, labels = data[i * 4:i * 4 + 4], target[i * 4:i * 4 + 4]
    loss = F.mse_loss(model(inputs), labels) / accumulation_steps
    loss.backward()
accumulated = model.weight.grad.clone()

# one batch of 16
model.zero_grad()
F.mse_loss(model(data), target).backward()
full = model.weight.grad.clone()

print((accumulated - full).abs().max())  # about 1e-7: the same update
"""

_S21 = """import torch

x = torch.tensor([0.0, 1.0], requires_grad=True)
y = torch.log(x)      # log(0) = -inf: the first non-finite value
loss = (y * 2).sum()
loss.backward()
print(x.grad)         # tensor([inf, 2.])
"""

_S21_MONITOR = """import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

model = nn.Linear(2, 1)
x = torch.randn(8, 2) * 100   # unnormalised inputs
target = torch.randn(8, 1)
optimizer = optim.SGD(model.parameters(), lr=0.1)   # too large for these inputs
for step in range(6):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    total_norm = 0
    for p in model.parameters():
        if p.grad is not None:
            param_norm = p.grad.data.norm(2)
            total_norm += param_norm.item() ** 2
    total_norm = total_norm ** 0.5
    print(f"step {step}: loss {loss.item():.3g}, gradient norm {total_norm:.3g}")
    optimizer.step()
"""

_S22 = """import torch

x = torch.tensor([1.5], requires_grad=True)
# The graph is built as the program runs: change x to -1.5 and the other branch builds another.
if x.item() > 0:
    y = x ** 2
else:
    y = -x * 3
for i in range(2):
    y = y * 2
y.backward()
print(x.grad)
"""

EXAMPLES: dict[str, Example] = {example.id: example for example in (
    Example("S1", "2.1", "A computation graph", "计算图", _S1),
    Example("S2", "2.3", "backward() and the chain rule", "backward() 与链式法则", _S2),
    Example("S3", "2.3", "Gradients accumulate", "梯度会累加", _S3),
    Example("S4", "3.1", "Leaves, grad_fn and requires_grad", "叶子节点、grad_fn 与 requires_grad",
           _S4),
    Example("S5", "3.2", "torch.no_grad() for evaluation", "评估时使用 torch.no_grad()", _S5),
    Example("S6", "3.2", "detach() cuts the graph", "detach() 切断计算图", _S6, fails_at=9),
    Example("S7", "3.2", "torch.set_grad_enabled", "torch.set_grad_enabled", _S7),
    Example("S8", "3.2", "From a tensor to NumPy", "张量转 NumPy", _S8, fails_at=5),
    Example("S9", "3.3", "Higher-order gradients", "高阶梯度", _S9),
    Example("S10", "3.3", "A custom autograd.Function: MyReLU", "自定义 autograd.Function：MyReLU",
           _S10),
    Example("S17", "5.2", "gradcheck", "梯度检查 gradcheck", _S17),
    Example("S18", "5.3", "backward on a tensor with no grad_fn",
           "对没有 grad_fn 的张量调用 backward", _S18, fails_at=5),
    Example("S19", "5.3", "backward twice", "两次 backward", _S19, fails_at=6),
    Example("S19b", "5.3", "retain_graph=True", "retain_graph=True", _S19_FIX),
    Example("S20", "5.3", "Out of memory: a tensor too large", "显存不足：张量过大", _S20,
           fails_at=4, refused=True),
    Example("S20b", "5.3", "Gradient accumulation", "梯度累积", _S20_ACCUMULATE),
    Example("S21", "5.3", "Hunting a NaN: log(0)", "排查 NaN：log(0)", _S21),
    Example("S21b", "5.3", "Monitoring the gradient norm", "监控梯度范数", _S21_MONITOR),
    Example("S22", "2.2", "A dynamic graph: if and for", "动态图：if 与 for", _S22),
)}
