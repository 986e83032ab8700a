"""tensors.py: tensors as the plain values the JSON carries, NaN and infinities spelled out."""

from __future__ import annotations

import math

import pytest
import torch

from gradient_lab.tensors import (
    all_finite,
    heat_cells,
    largest_change,
    plain_and_finite,
    plain_heat,
    to_plain,
)


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


@pytest.mark.parametrize("numel", [1, 10, 1000, 100_000])
def test_reading_a_tensor_says_whether_it_is_finite(numel: int) -> None:
    for dtype in (torch.float32, torch.complex64, torch.int64, torch.bool):
        t = torch.ones(numel, dtype=dtype)
        assert plain_and_finite(t)[1] is (True if numel <= 1000 else None), dtype
        assert all_finite(t), dtype
        if dtype.is_floating_point or dtype.is_complex:
            worst = complex(0, -math.inf) if dtype.is_complex else -math.inf
            for bad in (math.nan, math.inf, worst):
                t[numel // 2] = bad
                assert plain_and_finite(t)[1] is (False if numel <= 1000 else None), (dtype, bad)
                assert not all_finite(t), (dtype, bad)


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


def test_a_heat_map_sends_every_value_up_to_4096_of_them() -> None:
    t = torch.randn(64, 64)
    assert plain_heat(t) == t.tolist() and heat_cells(t) == 4096


@pytest.mark.parametrize(("shape", "block"), [
    ((10, 784), [1, 13]),  # an MNIST Linear's weight: 13 columns a cell, the last holding 4
    ((100, 1000), [2, 16]),
    ((10_000,), [1, 157]),  # one row
    ((20, 16, 5, 5), [1, 7]),  # a conv weight: its first dimension by the rest
])
def test_past_4096_values_each_cell_is_the_mean_of_its_block(
        shape: tuple[int, ...], block: list[int]) -> None:
    t = torch.randn(shape)
    plain = plain_heat(t)
    assert isinstance(plain, dict) and plain["summary"] and plain["shape"] == list(shape)
    assert plain["heat"]["block"] == block
    m = t.reshape(1, -1) if t.dim() == 1 else t.reshape(shape[0], -1)
    bh, bw = block
    expected = [[m[i:i + bh, j:j + bw].mean().item() for j in range(0, m.shape[1], bw)]
                for i in range(0, m.shape[0], bh)]
    values = plain["heat"]["values"]
    assert max(len(values), len(values[0])) <= 64
    assert sum(len(row) for row in values) == heat_cells(t)
    assert torch.tensor(values) == pytest.approx(torch.tensor(expected), abs=1e-6)


def test_the_largest_change_is_read_from_every_value() -> None:
    before = torch.zeros(100, 1000)
    after = before.clone()
    after[73, 901] = -0.25  # inside a block whose mean barely moves
    after[5, 5] = 0.125
    assert largest_change(before, after) == {"index": [73, 901], "before": 0.0,
                                             "after": -0.25, "update": -0.25}
    after[1, 2] = math.nan  # a NaN is the change to name
    assert largest_change(before, after)["index"] == [1, 2]  # type: ignore[index]
    assert largest_change(torch.zeros(3, dtype=torch.long), torch.ones(3, dtype=torch.long)) is None
