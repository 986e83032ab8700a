"""TensorText prints every tensor exactly as torch does: compared, not assumed."""

from __future__ import annotations

import random
import warnings

import pytest
import torch
from torch import _tensor_str

from app.sandbox.interpreter import run_program
from app.sandbox.limits import Limits
from app.sandbox.runtime import AppReads
from app.sandbox.tensor_text import PrintWidths, TensorText

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INTEGERS = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
SHAPES = [(), (1,), (3,), (7,), (2, 3), (4, 1), (1, 5), (2, 2, 3), (40, 30), (1001,), (0,),
          (3, 0), (1, 1, 1), (2, 1, 3, 2), (25,), (3, 17), (10, 100), (0, 2, 0)]


class _Cube(torch.autograd.Function):
    """A learner's own autograd.Function: torch names its grad_fn _CubeBackward."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors  # type: ignore[attr-defined]
        return grad * 3 * x ** 2


def _values(rng: random.Random, n: int) -> list[float]:
    """Numbers of one of the kinds that change torch's layout: whole, tiny, huge, mixed, odd."""
    kind = rng.choice(["whole", "unit", "tiny", "huge", "wide", "odd", "zeros", "signed"])
    out = []
    for _ in range(n):
        if kind == "whole":
            v = float(rng.randint(-1000, 1000))
        elif kind == "unit":
            v = rng.uniform(-1, 1)
        elif kind == "tiny":
            v = rng.uniform(-1, 1) * 10 ** rng.randint(-9, -3)
        elif kind == "huge":
            v = rng.uniform(-1, 1) * 10 ** rng.randint(6, 12)
        elif kind == "wide":
            v = rng.uniform(-1, 1) * 10 ** rng.randint(-6, 6)
        elif kind == "zeros":
            v = rng.choice([0.0, -0.0, 0.0, 1.0])
        elif kind == "signed":
            v = rng.choice([-1.0, 1.0]) * rng.choice([0.5, 2.0, 1e-4, 9999.5, 1e8, 123.456])
        else:
            v = rng.choice([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.5, 42.0,
                            65504.0, 1e-45, 3.4e38])
        out.append(v)
    return out


def _tensor(rng: random.Random) -> torch.Tensor:
    shape = rng.choice(SHAPES)
    n = 1
    for size in shape:
        n *= size
    dtype = rng.choice(FLOATS + INTEGERS)
    values = _values(rng, n)
    t = torch.tensor(values, dtype=torch.float64).reshape(shape)
    if dtype in INTEGERS:
        t = torch.nan_to_num(t, nan=0.0, posinf=100.0, neginf=-100.0).clamp(-1e6, 1e6)
        t = t.round().to(dtype) if dtype is not torch.bool else t > 0
    else:
        t = t.to(dtype)
    if dtype in FLOATS and rng.random() < 0.4:
        t = _as_lessons_hold_it(rng, t)
    elif rng.random() < 0.05:  # a Parameter that cannot require grad, as int ones must not
        t = torch.nn.Parameter(t, requires_grad=False)
    if t.dim() >= 2 and rng.random() < 0.3:
        t = t.transpose(0, 1)  # not contiguous
    return t


def _as_lessons_hold_it(rng: random.Random, t: torch.Tensor) -> torch.Tensor:
    """t as a leaf that requires grad, a Parameter, or an op's output, each with its suffix."""
    leaf = t.detach().requires_grad_()
    kind = rng.choice(["leaf", "parameter", "mul", "add", "pow", "sum", "custom", "view"])
    if kind == "parameter":
        return torch.nn.Parameter(t.detach())
    if kind == "mul":
        return leaf * 3
    if kind == "add":
        return leaf + 1
    if kind == "pow":
        return leaf ** 2
    if kind == "sum":
        return leaf.sum()
    if kind == "custom":
        return _Cube.apply(leaf)  # type: ignore[no-any-return]
    if kind == "view":
        return leaf.unsqueeze(0)
    return leaf


_TORCH_STR = _tensor_str._str


def _torch_text(t: torch.Tensor) -> tuple[str, str, str]:
    assert _tensor_str._Formatter is not PrintWidths and _tensor_str._str is _TORCH_STR
    return str(t), repr(t), f"{t}"


def test_torch_and_tensor_text_write_the_same_text_for_thousands_of_tensors() -> None:
    rng = random.Random(20261129)
    for _ in range(3000):
        t = _tensor(rng)
        expected = _torch_text(t)
        with TensorText():
            ours = (str(t), repr(t), f"{t}")
        assert ours == expected, (t.dtype, t.shape)


def _lessons_tensors() -> dict[str, torch.Tensor]:
    """Tensors as the tutorial prints them; each is small, plain, on the CPU."""
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    (a * b * 7).sum().backward()
    w = torch.nn.Parameter(torch.tensor([[0.5, -1.25], [3.0, 1e-5]]))
    assert a.grad is not None and b.grad is not None
    return {"a.grad": a.grad, "b.grad": b.grad, "leaf": a, "mul": a * b, "sum": (a * b).sum(),
            "pow": a ** 2, "custom": _Cube.apply(a), "parameter": w, "matmul": w @ w,
            "0-d": torch.tensor(1.5), "int": torch.arange(5), "bool": torch.arange(3) > 0,
            "uint8": torch.tensor([7, 255], dtype=torch.uint8),
            "half": torch.tensor([1.5, -2.0], dtype=torch.float16),
            "bfloat16": torch.tensor([[1e10]], dtype=torch.bfloat16),
            "double": torch.tensor([1 / 3], dtype=torch.float64),
            "empty": torch.tensor([]), "empty int": torch.zeros(0, 3, dtype=torch.int64),
            "wide": torch.linspace(-1e3, 1e3, 1000).reshape(10, 100)}


def test_a_lessons_tensors_are_written_without_torchs_second_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {name: _torch_text(t) for name, t in _lessons_tensors().items()}

    def second_pass(*args: object, **kwargs: object) -> str:
        raise AssertionError("torch's _str_intern ran")

    monkeypatch.setattr(_tensor_str, "_str_intern", second_pass)
    for name, t in _lessons_tensors().items():
        with AppReads():
            ours = (str(t), repr(t), f"{t}")
        assert ours == expected[name], name


class _Subclass(torch.Tensor):
    pass


def _unusual_tensors() -> dict[str, torch.Tensor]:
    """Tensors whose text torch builds from more than the values and the autograd suffixes."""
    x = torch.tensor([1.0, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # nested tensors are a prototype
        nested = torch.nested.nested_tensor([x, x[:1]])
    return {"complex": torch.tensor([1 + 2j]), "summarised": torch.arange(1001.0),
            "neg bit": torch._neg_view(x), "zero tensor": torch._efficientzerotensor(2),
            "sparse": x.to_sparse(), "meta": torch.empty(2, device="meta"),
            "uint16": torch.tensor([3], dtype=torch.uint16),
            "float8": torch.tensor([1.0]).to(torch.float8_e4m3fn),
            "nested": nested, "subclass": x.as_subclass(_Subclass)}


def _count_torchs_second_pass(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    seen: list[object] = []
    second_pass = _tensor_str._str_intern

    def counted(inp: torch.Tensor, **kwargs: object) -> str:
        seen.append(inp)
        return second_pass(inp, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(_tensor_str, "_str_intern", counted)
    return seen


@pytest.mark.parametrize("name", ["complex", "summarised", "neg bit", "zero tensor", "sparse",
                                  "meta", "uint16", "float8", "nested", "subclass"])
def test_unusual_tensors_are_left_to_torch(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _unusual_tensors()[name]
    expected = repr(t)
    seen = _count_torchs_second_pass(monkeypatch)
    with TensorText():
        assert repr(t) == expected
    assert any(inp is t for inp in seen)


def test_text_given_by_the_caller_is_left_to_torch() -> None:
    t = torch.tensor([1.0, 2.0], requires_grad=True)  # as MaskedTensor's repr passes its own
    expected = t.__repr__(tensor_contents="[--, 2.]")
    with TensorText():
        assert t.__repr__(tensor_contents="[--, 2.]") == expected == (
            "tensor([--, 2.], requires_grad=True)")


def test_tensors_under_vmap_and_forward_ad_are_left_to_torch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[tuple[torch.Tensor, str]] = []

    def record(x: torch.Tensor) -> torch.Tensor:
        printed.append((x, repr(x)))
        return x * 2

    def run() -> list[tuple[torch.Tensor, str]]:
        printed.clear()
        torch.vmap(record)(torch.ones(3, 2))
        torch.func.grad(lambda x: record(x).sum())(torch.ones(2))
        with warnings.catch_warnings():
            # forward AD's first use scripts its decompositions, which torch.jit warns about
            warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
            with torch.autograd.forward_ad.dual_level():
                record(torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2)))
                record(torch.ones(2))  # plain, but torch's _str unpacks duals at this level
        return printed[:]

    expected = [text for _, text in run()]
    seen = _count_torchs_second_pass(monkeypatch)
    with TensorText():
        ours = run()
    assert [text for _, text in ours] == expected
    assert all(any(inp is x for inp in seen) for x, _ in ours)


def test_views_write_the_grad_fn_torch_rebuilds_for_them() -> None:
    def views() -> list[torch.Tensor]:
        torch.manual_seed(0)
        a = torch.randn(3, requires_grad=True).clone()
        after_inplace = a[:2]
        a.mul_(2)
        b = torch.randn(3, requires_grad=True).clone()
        with torch.no_grad():
            invalid = b[:2]
            invalid.mul_(2)  # torch writes grad_fn=<Invalid> for this one (#99968)
        c = torch.randn(2, 3, requires_grad=True)
        return [after_inplace, a, invalid, c.t(), c[1], c[[0, 1]], c.expand(2, 2, 3)]

    with TensorText():  # fresh views for each: reading grad_fn may rebuild it
        ours = [repr(t) for t in views()]
    assert ours == [repr(t) for t in views()]
    assert "grad_fn=<Invalid>" in ours[2]


@pytest.mark.parametrize("options", [{"precision": 2}, {"precision": 8}, {"linewidth": 30},
                                     {"sci_mode": True}, {"sci_mode": False}, {"threshold": 5},
                                     {"edgeitems": 0}, {"edgeitems": 1, "threshold": 3}])
def test_print_options_are_honoured(options: dict[str, object]) -> None:
    rng = random.Random(str(options))
    with _tensor_str.printoptions(**options):  # type: ignore[arg-type]
        for _ in range(150):
            t = _tensor(rng)
            expected = _torch_text(t)
            with TensorText():
                assert (str(t), repr(t), f"{t}") == expected, (t.dtype, t.shape)


def test_the_default_dtype_decides_the_dtype_suffix() -> None:
    rng = random.Random(64)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for _ in range(300):
            t = _tensor(rng)
            expected = _torch_text(t)
            with TensorText():
                assert (str(t), repr(t), f"{t}") == expected, (t.dtype, t.shape)
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_the_widths_match_torchs_formatter_field_for_field(dtype: torch.dtype) -> None:
    rng = random.Random(str(dtype))
    for _ in range(200):
        values = _values(rng, rng.randint(1, 12))
        t = torch.tensor(values, dtype=torch.float64)
        t = t.to(dtype) if dtype in FLOATS else torch.nan_to_num(t).clamp(-1e4, 1e4).to(dtype)
        theirs, ours = _tensor_str._Formatter(t), PrintWidths(t)
        assert (ours.floating_dtype, ours.int_mode, ours.sci_mode, ours.max_width) == (
            theirs.floating_dtype, theirs.int_mode, theirs.sci_mode, theirs.max_width), values


def test_torchs_printing_is_back_after_the_context_even_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError), TensorText():
        assert _tensor_str._Formatter is PrintWidths and _tensor_str._str is not _TORCH_STR
        _ = 1 / 0
    assert _tensor_str._Formatter is not PrintWidths and _tensor_str._str is _TORCH_STR


def test_a_programs_print_is_torchs_text() -> None:
    code = ("import torch\na = torch.tensor([2.0, 1e-5], requires_grad=True)\n"
            "b = (a * 3).sum()\nprint(a, b)\nprint(f'{a.grad} {torch.arange(4)}')\n")
    out = run_program(code, limits=Limits(), device=torch.device("cpu")).stdout
    a = torch.tensor([2.0, 1e-5], requires_grad=True)
    b = (a * 3).sum()
    assert out == f"{a!s} {b!s}\nNone {torch.arange(4)}\n"
