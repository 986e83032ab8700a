"""TensorText prints every tensor exactly as torch does: compared, not assumed."""

from __future__ import annotations

import random

import pytest
import torch
from torch import _tensor_str

from app.sandbox.interpreter import run_program
from app.sandbox.limits import Limits
from app.sandbox.tensor_text import PrintWidths, TensorText

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INTEGERS = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
SHAPES = [(), (1,), (3,), (7,), (2, 3), (4, 1), (1, 5), (2, 2, 3), (40, 30), (1001,), (0,),
          (3, 0)]


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
    if dtype in FLOATS and rng.random() < 0.3:  # requires_grad and a grad_fn in the text
        t = (t.detach().requires_grad_() * 1) if rng.random() < 0.5 else t.requires_grad_()
    if t.dim() >= 2 and rng.random() < 0.3:
        t = t.transpose(0, 1)  # not contiguous
    return t


def _torch_text(t: torch.Tensor) -> str:
    assert _tensor_str._Formatter is not PrintWidths
    return str(t)


def test_torch_and_tensor_text_write_the_same_text_for_thousands_of_tensors() -> None:
    rng = random.Random(20261129)
    for _ in range(3000):
        t = _tensor(rng)
        expected = (_torch_text(t), repr(t), f"{t}")
        with TensorText():
            ours = (str(t), repr(t), f"{t}")
        assert ours == expected, (t.dtype, t.shape)


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


def test_torchs_formatter_is_back_after_the_context_even_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError), TensorText():
        assert _tensor_str._Formatter is PrintWidths
        _ = 1 / 0
    assert _tensor_str._Formatter is not PrintWidths


def test_a_programs_print_is_torchs_text() -> None:
    code = ("import torch\na = torch.tensor([2.0, 1e-5], requires_grad=True)\n"
            "b = (a * 3).sum()\nprint(a, b)\nprint(f'{a.grad} {torch.arange(4)}')\n")
    out = run_program(code, limits=Limits(), device=torch.device("cpu")).stdout
    a = torch.tensor([2.0, 1e-5], requires_grad=True)
    b = (a * 3).sum()
    assert out == f"{a!s} {b!s}\nNone {torch.arange(4)}\n"
