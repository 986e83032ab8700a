"""Ordinary learner code, run through the graph lab's job: it prints what plain Python prints.

Each program is one a learner writes (initialising a model by walking its modules, peeking at a
batch with next(iter(...)), printing an aligned table), checked against the same program run by
Python itself (helpers.plain_stdout). The bounds each new capability keeps are in test_hostile.
"""

from __future__ import annotations

import re

import pytest
import torch

from app import jobs
from app.errors import AppError, ProgramError
from app.sandbox import allowlist as al
from app.sandbox.limits import Limits
from tests.helpers import plain_stdout


def _same_as_python(program: str) -> str:
    """Run program in the lab, assert it printed what Python prints, and return that.

    Python's run starts from seed 0, as every run in the lab does (layers start random).
    """
    printed = jobs.graph(program, "cpu", Limits()).stdout
    torch.manual_seed(0)
    assert printed == plain_stdout(program)
    return printed


# --- isinstance on the listed classes -------------------------------------------------------

_INIT = """import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid())
for m in model.modules():
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        nn.init.zeros_(m.bias)
for name, p in model.named_parameters():
    print(name, p.sum().item())
print(isinstance(model, nn.Module), isinstance(model[1], (nn.ReLU, nn.Tanh)))
print(model(torch.ones(2, 3)))
"""


def test_initialising_the_linear_layers_found_by_isinstance_matches_python() -> None:
    assert "0.bias 0.0" in _same_as_python(_INIT)


def test_initialising_a_model_with_apply_and_watching_it_with_hooks_matches_python() -> None:
    _same_as_python("""import torch
import torch.nn as nn
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.5)
        nn.init.zeros_(m.bias)
        print("init", m)
model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
print(model.apply(init_weights) is model)
x = torch.ones(4, 2, requires_grad=True)
model[0].register_forward_hook(lambda m, inp, out: print("forward", out.shape))
x.register_hook(print)
model(x).sum().backward()
""")


def test_isinstance_accepts_every_listed_nn_optim_and_scheduler_class() -> None:
    names = [f"nn.{n}" for n in sorted(al.NN_CLASSES)] + \
        [f"optim.{n}" for n in sorted(al.OPTIMIZERS)] + \
        [f"optim.lr_scheduler.{n}" for n in sorted(al.LR_SCHEDULERS)]
    program = ("import torch\nfrom torch import nn, optim\n"
               "w = torch.ones(1, requires_grad=True)\n"
               "things = [nn.Linear(1, 1), nn.MSELoss(), optim.Adam([w]), w]\n"
               f"for kind in [{', '.join(names)}]:\n"
               "    print([isinstance(t, kind) for t in things])\n")
    assert _same_as_python(program).count("\n") == len(names)


def test_isinstance_tells_optimizers_and_losses_apart() -> None:
    _same_as_python("""import torch
from torch import nn, optim
w = torch.zeros(2, requires_grad=True)
for opt in [optim.SGD([w], lr=0.1), optim.Adam([w], lr=0.1)]:
    kind = "adaptive" if isinstance(opt, (optim.Adam, optim.AdamW)) else "plain"
    print(kind, isinstance(opt, optim.SGD))
loss_fn = nn.CrossEntropyLoss()
print(isinstance(loss_fn, nn.CrossEntropyLoss), isinstance(loss_fn, nn.MSELoss))
print(isinstance({1}, set), isinstance([1], (list, tuple)))
""")


# --- walking a model; BatchNorm's counter; an optimizer's state_dict --------------------------

def test_modules_named_modules_children_and_named_children_match_python() -> None:
    _same_as_python("""import torch
from torch import nn
block = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
model = nn.Sequential(block, nn.Linear(2, 1))
print(len(list(model.modules())))
for name, m in model.named_modules():
    print(repr(name), m)
for child in model.children():
    print(child)
for name, child in model.named_children():
    print(name, sum(p.numel() for p in child.parameters()))
""")


def test_batchnorm_counts_its_training_batches_as_in_python() -> None:
    _same_as_python("""import torch
from torch import nn
bn = nn.BatchNorm1d(3)
x = torch.arange(12.0).reshape(4, 3)
for step in range(3):
    bn(x)
print(bn.num_batches_tracked, bn.running_mean)
bn.eval()
bn(x)
print(bn.num_batches_tracked.item())
""")


def test_an_optimizers_state_dict_matches_python() -> None:
    _same_as_python("""import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
for step in range(2):
    opt.zero_grad()
    (w ** 2).sum().backward()
    opt.step()
sd = opt.state_dict()
print(sorted(sd.keys()))
print(sd["param_groups"][0]["lr"], sd["param_groups"][0]["params"])
print(sd["state"][0]["momentum_buffer"])
""")


# --- next and iter ---------------------------------------------------------------------------

def test_next_of_iter_over_parameters_and_lists_matches_python() -> None:
    _same_as_python("""import torch
from torch import nn
model = nn.Linear(3, 2)
first = next(iter(model.parameters()))
print(first.shape, next(model.parameters()).shape)
print(next(model.named_parameters())[0])
it = iter([10, 20])
print(next(it), next(it), next(it, "done"))
try:
    next(it)
except StopIteration:
    print("exhausted")
batches = iter(torch.arange(6.0).reshape(3, 2))
print(next(batches), next(batches))
letters = iter("ab")
print(next(letters), list(letters))
""")


def test_a_loop_drawing_batches_with_next_matches_python() -> None:
    _same_as_python("""import torch
data = [(torch.tensor([float(i)]), torch.tensor([2.0 * i])) for i in range(4)]
w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.05)
it = iter(data)
for step in range(6):
    batch = next(it, None)
    if batch is None:
        it = iter(data)
        batch = next(it)
    x, y = batch
    loss = ((w * x - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
""")


# --- set.add, list.sort, str padding and splitlines ------------------------------------------

def test_set_add_collects_distinct_labels_as_in_python() -> None:
    _same_as_python("""labels = [3, 1, 3, 2, 1]
seen = set()
for y in labels:
    seen.add(y)
print(sorted(seen), len(seen))
""")


def test_list_sort_with_key_and_reverse_matches_python() -> None:
    _same_as_python("""results = [("adam", 0.12), ("sgd", 0.31), ("rmsprop", 0.12)]
results.sort(key=lambda r: r[1])
print(results)
results.sort(key=lambda r: r[1], reverse=True)
print(results)
def by_name(r):
    return r[0]
results.sort(key=by_name)
print(results)
names = ["momentum", "lr", "beta"]
names.sort(key=len)
print(names)
nums = [3, -1, 2]
nums.sort()
print(nums)
nums.sort(key=abs, reverse=True)
print(nums)
nums.sort(key=str)
print(nums)
try:
    nums.sort(abs)
except TypeError as e:
    print(e)
""")


def test_a_table_aligned_with_ljust_rjust_center_and_zfill_matches_python() -> None:
    _same_as_python("""import torch
losses = {"sgd": 0.3141, "adam": 0.0271, "rmsprop": 0.1}
print("optimizer".center(20, "="))
for name, loss in losses.items():
    print(name.ljust(10) + f"{loss:.3f}".rjust(8) + "|")
for step in [1, 10, 100]:
    print("ckpt_" + str(step).zfill(4), "-5".zfill(4), "ab".center(5), "ab".rjust(1))
print(repr("x".ljust(torch.tensor(3))))
""")


def test_splitlines_of_a_multiline_string_matches_python() -> None:
    _same_as_python('''log = """epoch 1 loss 0.9
epoch 2 loss 0.5\\r\\nepoch 3 loss 0.2
"""
for line in log.splitlines():
    print(line.split()[-1])
print(log.splitlines(True), "".splitlines())
''')


# --- tensor indices, logic and number types ---------------------------------------------------

def test_nonzero_argwhere_and_the_logical_functions_match_python() -> None:
    _same_as_python("""import torch
x = torch.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 0.0]])
print(torch.nonzero(x))
print(x.nonzero())
print(torch.nonzero(x, as_tuple=True))
print(x.nonzero(as_tuple=True)[1])
print(torch.argwhere(x), x.argwhere())
print(torch.nonzero(torch.tensor(5)), torch.nonzero(torch.zeros(3)))
pos, small = x > 0, x.abs() < 2
print(torch.logical_and(pos, small), pos.logical_or(small))
print(torch.logical_xor(pos, small), torch.logical_not(pos), small.logical_not())
print(pos.logical_and(small).logical_xor(x != 0))
""")


def test_dtype_info_strides_and_inference_mode_match_python() -> None:
    _same_as_python("""import torch
print(torch.get_default_dtype())
f = torch.finfo(torch.float32)
print(f.eps, f.max, f.min, f.tiny, f.bits, f.resolution, f.smallest_normal, f.dtype)
print(torch.finfo(torch.float16).eps, torch.finfo().bits)
i = torch.iinfo(torch.int64)
print(i.max, i.min, i.bits, i.dtype, torch.iinfo(torch.uint8).max)
print(torch.finfo(torch.bfloat16))
x = torch.ones(2, 3)
print(x.stride(), x.t().stride(), x.stride(1), x.is_inference())
with torch.inference_mode():
    y = x * 2
print(y.is_inference())
eps = torch.finfo(x.dtype).eps
print(torch.log(torch.tensor([0.0]) + eps))
""")


# --- an attribute of None ---------------------------------------------------------------------

_GRAD_TOO_EARLY = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    w.grad.zero_()
except AttributeError as e:
    print("caught:", e)
try:
    w.grad.data = torch.zeros(2)
except AttributeError as e:
    print("caught:", e)
(w * 3).sum().backward()
w.grad.zero_()
print(w.grad)
"""


def test_reading_an_attribute_of_none_raises_attribute_error_a_program_can_catch() -> None:
    printed = _same_as_python(_GRAD_TOO_EARLY)
    assert "caught: 'NoneType' object has no attribute 'zero_'" in printed


def test_an_uncaught_attribute_of_none_is_pythons_error_with_a_hint() -> None:
    program = "import torch\nw = torch.ones(2, requires_grad=True)\nw.grad.zero_()\n"
    with pytest.raises(ProgramError) as caught:
        jobs.graph(program, "cpu", Limits())
    try:
        plain_stdout(program)
    except AttributeError as error:
        expected = f"AttributeError: {error}"
    assert caught.value.message == expected
    assert (caught.value.line, caught.value.hint_key) == (3, "hint.none_attribute")


# --- the device line most PyTorch code starts with ------------------------------------------

_DEVICE = """import torch
import torch.nn as nn
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(2, 1).to(device)
x = torch.ones(3, 2, device=device)
print(device.type, model(x).device.type, torch.cuda.is_available())
"""


def test_cuda_is_available_says_false_to_a_program_run_on_the_cpu() -> None:
    assert jobs.graph(_DEVICE, "cpu", Limits()).stdout == "cpu cpu False\n"


@pytest.mark.cuda
def test_cuda_is_available_says_true_to_a_program_run_on_the_gpu() -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA on this machine")
    assert jobs.graph(_DEVICE, "cuda", Limits()).stdout == "cuda cuda True\n"


# --- a model of the program's own: class Net(nn.Module) ----------------------------------------

_NET = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    '''A two-layer net.'''
    def __init__(self, hidden=8):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, 1)
        self.scale = 2.0
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc2(torch.tanh(self.fc1(x))) * self.scale

    def num_params(self):
        return sum(p.numel() for p in self.parameters())

class Old(nn.Module):
    def __init__(self):
        super(Old, self).__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x):
        return (self.w * x).sum()

net = Net()
print(net)
print(net.num_params(), isinstance(net, Net), isinstance(net, nn.Module))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(16, 2)
y = x.sum(dim=1, keepdim=True)
for step in range(20):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
print(round(loss.item(), 5), net.calls, [n for n, _ in net.named_parameters()])
o = Old()
out = o(torch.tensor([1.0, 2.0, 3.0]))
out.backward()
print(out, o.w.grad, list(o.state_dict().keys()))
try:
    print(net.nothing)
except AttributeError as e:
    print(e)
class NoInit(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(1, 1)
try:
    NoInit()
except AttributeError as e:
    print(e)
try:
    net.forward()
except TypeError as e:
    print(e)
"""


def test_a_model_class_of_the_programs_own_trains_and_prints_as_in_python() -> None:
    # super().__init__() and super(Old, self).__init__(), parameters, buffers, plain fields,
    # a method of its own, isinstance, and the errors Python and torch give
    _same_as_python(_NET)


def test_the_graph_names_the_layers_of_a_programs_own_model() -> None:
    graph = jobs.graph("""import torch
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
""", "cpu", Limits())
    leaves = {node.name for node in graph.nodes if node.kind == "leaf"}
    assert leaves == {"net.fc1.weight", "net.fc1.bias", "net.fc2.weight", "net.fc2.bias"}
    assert {node.line for node in graph.nodes if node.op == "AddmmBackward0"} == {9}
    # relu is no layer's output, but the Net call made it: drawn in the Net's box
    assert {node.module for node in graph.nodes if node.op == "ReluBackward0"} == {"net"}


# --- convolutions --------------------------------------------------------------------------

_CNN = """import torch
import torch.nn as nn
import torch.nn.functional as F
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv1(x))))
        x = F.avg_pool2d(F.relu(self.conv2(x)), 1)
        return self.fc(torch.flatten(self.gap(x), 1))
net = CNN()
x = torch.randn(2, 1, 8, 8)
loss = F.cross_entropy(net(x), torch.tensor([0, 2]))
loss.backward()
print(loss, net.conv1.weight.grad.shape, net.conv1.weight.grad.abs().sum())
sig = torch.randn(1, 2, 16)
print(F.conv1d(sig, torch.ones(3, 2, 5)).shape, F.max_pool1d(sig, 2).shape)
print(nn.AvgPool1d(4)(sig).shape, nn.Conv1d(2, 1, 3)(sig).shape)
"""


def test_a_small_cnn_trains_one_step_as_in_python() -> None:
    _same_as_python(_CNN)


def test_map_and_filter_are_lazy_and_checked_as_in_python() -> None:
    _same_as_python("""import torch
xs = ["1.5", "2", "-3"]
vals = list(map(float, xs))
print(vals, torch.tensor(list(map(float, xs))))
print(list(map(lambda a, b: a * b, [1, 2, 3], [4, 5])))
print(list(filter(lambda v: v > 0, vals)), list(filter(None, [0, 1, [], [2]])))
ts = [torch.tensor(1.0), torch.tensor(-2.0)]
print(sum(map(torch.abs, ts)), any(map(lambda t: t < 0, ts)))
m = map(str, range(3))
print(next(m), list(m))
try:
    map(abs)
except TypeError as e:
    print(e)
""")


def test_type_of_a_value_prints_and_compares_as_in_python() -> None:
    _same_as_python("""import torch
import torch.nn as nn
x = torch.ones(2)
print(type(x), type(x.shape), type(x.dtype), type(1.5), type([1]), type(x.tolist()))
print(type(x) == torch.Tensor, type([]) == list, type(()) is tuple, type({}) != dict)
print(type("a") is str, isinstance([], list), isinstance({}, (dict, list)), type(x.grad))
m = nn.Linear(1, 1)
print(type(m), type(m) is nn.Linear, type(m.weight))
class Net(nn.Module):
    def forward(self, x):
        return x
print(type(Net()), Net, type(Net()) is Net)
""")


# --- mistakes a learner makes with a model class, as Python reports them -----------------------

_NO_SUPER = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        self.k = 3
    def forward(self, x):
        return x
n = Net()
print("made", n.k)
"""


def test_a_model_whose_init_forgot_super_runs_as_far_as_python_gets() -> None:
    # its fields work; the graph lab's trace of it must not fail where Python did not
    _same_as_python(_NO_SUPER)
    with pytest.raises(ProgramError) as caught:
        jobs.graph(_NO_SUPER + "print(n)\n", "cpu", Limits())
    assert caught.value.message == "AttributeError: 'Net' object has no attribute '_modules'"
    assert caught.value.line == 10
    assert caught.value.status == 400


def test_an_error_whose_value_cannot_be_written_is_still_a_400() -> None:
    with pytest.raises(ProgramError) as caught:
        jobs.graph(_NO_SUPER + "d = {}\nd[n]\n", "cpu", Limits())
    assert caught.value.message.startswith("KeyError: (the value in this message could not")


@pytest.mark.parametrize("init", ["self = other\n        super().__init__()",
                                  "super(torch, print).__init__()"])
def test_super_init_on_anything_but_the_instance_is_pythons_type_error(init: str) -> None:
    program = f"""import torch
import torch.nn as nn
other = nn.Linear(2, 2)
class Net(nn.Module):
    def __init__(self):
        {init}
try:
    Net()
except TypeError as e:
    print(e)
print(other)
"""
    assert _same_as_python(program).startswith("super(")  # TypeError: super(...) ...


def test_a_model_on_the_meta_device_is_drawn_without_values() -> None:
    graph = jobs.graph("""import torch
import torch.nn as nn
n = nn.Linear(2, 2).to("meta")
y = n(torch.ones(2, 2, device="meta"))
print(y.shape)
""", "cpu", Limits())
    assert graph.stdout == "torch.Size([2, 2])\n"
    assert graph.first_nonfinite is None


def test_ops_after_a_forward_that_raised_are_not_drawn_inside_its_module() -> None:
    graph = jobs.graph("""import torch
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
""", "cpu", Limits())
    assert [node.module for node in graph.nodes if node.name in ("a", "b")] == [None, None]


def test_a_stop_iteration_in_maps_function_ends_it_as_in_python() -> None:
    _same_as_python("""def f(v):
    if v > 2:
        raise StopIteration
    return v * 10
print(list(map(f, [1, 2, 3, 4])), list(filter(f, [1, 2, 3])))
""")


def test_a_models_method_may_run_under_no_grad_as_in_python() -> None:
    _same_as_python("""import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)
    def forward(self, x):
        return self.fc(x)
    @torch.no_grad()
    def predict(self, x):
        return self.forward(x) > 0
net = Net()
x = torch.ones(3, 2)
print(net.predict(x).requires_grad, net(x).requires_grad, torch.is_grad_enabled())
""")


def test_a_models_class_fields_are_shared_until_an_instance_sets_its_own() -> None:
    _same_as_python("""import torch
import torch.nn as nn
class Net(nn.Module):
    hidden = 4
    calls = 0
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, self.hidden)
    def forward(self, x):
        self.calls += 1
        return self.fc(x)
a, b = Net(), Net()
a(torch.ones(2))
a(torch.ones(2))
print(a.calls, b.calls, a.hidden, a.fc.out_features)
""")


def test_a_model_written_the_older_way_with_module_init_by_name_matches_python() -> None:
    _same_as_python("""import torch
import torch.nn as nn
class Old(nn.Module):
    def __init__(self):
        nn.Module.__init__(self)
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return (self.w * x).sum()
other = nn.Linear(1, 1)
class Wrong(nn.Module):
    def __init__(self):
        nn.Module.__init__(other)
        nn.Module.__init__(5)
m = Old()
print(m, m(torch.tensor([1.0, 2.0])))
try:
    Wrong()
except AttributeError as e:
    print(e)
""")


def test_a_descent_loop_that_unpacks_its_parameter_draws_without_error() -> None:
    # x, y = p are views; opt.step() changes p in place under no_grad. torch then refuses to
    # read the views' grad_fn, which the program never asks for, but the graph lab did.
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
    graph = jobs.graph(program, "cpu", Limits())
    assert graph.stdout == plain_stdout(program)
    assert graph.variables["x"].grad_fn is None and graph.variables["loss"].grad_fn
    with pytest.raises(ProgramError) as caught:  # and its partial graph, after an error
        jobs.graph(program + "1 / 0\n", "cpu", Limits())
    assert caught.value.partial is not None


def test_reversed_type_checks_and_conversions_print_as_in_python() -> None:
    _same_as_python("""import torch
xs = [1, 2, 3]
r = reversed(xs)
print(next(r), list(r), reversed(torch.tensor([1, 2, 3])), list(reversed(range(3))))
try:
    reversed({1, 2})
except TypeError as e:
    print(e)
print(type(xs) in (list, tuple), type(1.5) in [int, str], type({}) not in (list, dict))
try:
    a, b = torch.tensor(1.0)
except TypeError as e:
    print(e)
print(f"{'é'!a} {'x'!r} {3!s}")
""")


def test_a_function_prints_with_its_qualified_name_as_in_python() -> None:
    printed = jobs.graph("def outer():\n    def inner():\n        pass\n    return inner\n"
                         "print(outer, outer())\n", "cpu", Limits()).stdout
    assert re.fullmatch(r"<function outer at 0x[0-9a-f]+> "
                        r"<function outer.<locals>.inner at 0x[0-9a-f]+>\n", printed)


def test_a_main_guard_gets_a_hint_to_leave_it_out() -> None:
    with pytest.raises(AppError) as caught:
        jobs.graph('if __name__ == "__main__":\n    print(1)\n', "cpu", Limits())
    assert caught.value.hint_key == "hint.main_guard"


def test_a_helper_class_of_the_programs_own_works_as_in_python() -> None:
    # no base: EarlyStopping and AverageMeter, with fields, methods and super().__init__()
    _same_as_python("""import torch
class EarlyStopping:
    '''Stop when the loss has not improved for `patience` checks.'''
    min_delta = 0.0
    def __init__(self, patience=2):
        self.patience = patience
        self.best = None
        self.bad = 0
    def step(self, loss):
        if self.best is None or loss < self.best - self.min_delta:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience
class AverageMeter:
    def __init__(self):
        super().__init__()
        self.reset()
    def reset(self):
        self.total, self.count = 0.0, 0
    def update(self, value, n=1):
        self.total += value * n
        self.count += n
    def avg(self):
        return self.total / self.count
stop = EarlyStopping()
meter = AverageMeter()
for epoch, loss in enumerate([0.9, 0.5, 0.6, 0.7, 0.4]):
    meter.update(torch.tensor(loss))
    if stop.step(loss):
        print("stop at", epoch, "best", stop.best)
        break
print(meter.avg(), isinstance(stop, EarlyStopping), type(stop), stop.min_delta)
try:
    print(stop.missing)
except AttributeError as e:
    print(e)
""")
