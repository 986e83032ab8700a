"""app.tensors: tensors as the plain values the JSON carries, NaN and infinities spelled out."""

from __future__ import annotations

import math

import pytest
import torch

from app.tensors import all_finite, to_plain


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 3)])
def test_one_non_finite_value_anywhere_is_found_and_spelled_out(
        dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    for bad, word in ((math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")):
        t = torch.ones(shape, dtype=dtype)
        t.view(-1)[-1] = bad
        assert not all_finite(t)
        flat = _flatten(to_plain(t))
        assert flat[-1] == word and all(v == 1.0 for v in flat[:-1])


def test_finite_values_that_overflow_a_sum_are_still_finite() -> None:
    # float64 values whose sum overflows to inf: the quick check must not call them infinite.
    t = torch.tensor([1.7e308, 1.7e308], dtype=torch.float64)
    assert all_finite(t)
    assert to_plain(t) == [1.7e308, 1.7e308]
    big = torch.full((3, 3), 3.0e38)  # float32's largest; summed as doubles it cannot overflow
    assert all_finite(big) and to_plain(big) == big.tolist()


def test_integers_bools_and_complex_values() -> None:
    assert to_plain(torch.tensor([1, 2])) == [1, 2]
    assert to_plain(torch.tensor(True)) is True
    assert to_plain(torch.tensor([1 + 2j])) == [[1.0, 2.0]]
    assert not all_finite(torch.tensor([complex(math.inf, 0)]))
    assert all_finite(torch.tensor([1, 2]))


def test_past_the_budget_a_summary_and_past_the_quick_check_torch_decides() -> None:
    t = torch.zeros(5000)
    t[4321] = math.nan
    assert not all_finite(t)
    summary = to_plain(t, max_numel=10)
    assert isinstance(summary, dict) and summary["summary"] and summary["numel"] == 5000
    values = to_plain(t, max_numel=5000)
    assert isinstance(values, list) and values[4321] == "NaN" and values[0] == 0.0


def _flatten(x: object) -> list[object]:
    if isinstance(x, list):
        return [v for item in x for v in _flatten(item)]
    return [x]
