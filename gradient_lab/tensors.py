"""Tensors as plain values for JSON, and the one place a device is picked."""

from __future__ import annotations

import cmath
import contextlib
import math
from typing import Any

import torch

from gradient_lab.errors import ProgramError

Plain = float | int | bool | str | None | list[Any] | dict[str, Any]


def plain_number(x: Any) -> Any:
    # JSON has no NaN or infinity; JavaScript's Number() reads these strings back.
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, complex):
        return [plain_number(x.real), plain_number(x.imag)]
    return x


def grad_fn_of(t: torch.Tensor) -> Any:
    """t.grad_fn; None for a view whose base an in-place op changed since (x, y = p, then
    p.add_(1) under no_grad: torch raises on reading the view's grad_fn or is_leaf, though
    the program never reads them). Such a view has no place in the graph."""
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def is_leaf_of(t: torch.Tensor) -> bool:
    """t.is_leaf; False for a view as in grad_fn_of."""
    try:
        return t.is_leaf
    except RuntimeError:
        return False


def version_of(t: torch.Tensor) -> int | None:
    """t._version, which each in-place change moves on; None for a tensor that keeps none
    (an inference tensor)."""
    try:
        return int(t._version)
    except RuntimeError:
        return None


def all_finite(t: torch.Tensor) -> bool:
    """No NaN or infinity in t, of any size, dtype or device."""
    with torch._C.DisableTorchFunction():
        return _finite(t.detach())


def _finite(t: torch.Tensor) -> bool:
    if not (t.is_floating_point() or t.is_complex()):
        return True
    # A NaN or an infinity makes the sum NaN or infinite: one reduction clears most tensors,
    # and only finite values whose sum overflows need the exact check.
    return cmath.isfinite(t.detach().sum().item()) or bool(torch.isfinite(t).all())


def _plain_list(x: Any) -> Any:
    if isinstance(x, list):
        return [_plain_list(v) for v in x]
    return plain_number(x)


def to_plain(t: torch.Tensor | None, max_numel: int = 1_000) -> Plain:
    """A number or nested list; a summary (shape, min, max, mean, head) past max_numel elements.

    .. note:: These are the app's reads, not a program's calls: while a program runs (the graph
       recorder reads gradients), its SizeGuard would otherwise measure and meter each of the
       ten-odd torch calls here against the program's limits.
    """
    return plain_and_finite(t, max_numel)[0]


def plain_and_finite(t: torch.Tensor | None, max_numel: int = 1_000) -> tuple[Plain, bool | None]:
    """to_plain(t), and whether t has no NaN or infinity when that came out of reading it
    (None when it did not: a summary, or no tensor). A tensor whose values cannot be read as
    numbers (a subclass such as MaskedTensor) has none to show."""
    with torch._C.DisableTorchFunction():
        try:
            return _to_plain(t, max_numel)
        except (RuntimeError, TypeError, ValueError):
            return None, None


def _to_plain(t: torch.Tensor | None, max_numel: int) -> tuple[Plain, bool | None]:
    if t is None:
        return None, None
    if t.is_meta or not _has_storage(t):  # a shape but no values (a meta tensor, a wrapper)
        return None, None
    if not t.is_cpu:
        t = t.detach().cpu()
    numel = t.numel()
    if numel <= max_numel:
        values = t.tolist()  # no detach needed: reading records nothing for autograd
        finite = _finite(t)
        if not finite or t.is_complex():
            return _plain_list(values), finite  # NaN and infinities spelled out; complex as pairs
        return values, finite
    # Reductions read the tensor where it lies: an expanded view (a stride of 0) of a billion
    # elements would not fit in memory as a copy.
    view = t.detach().abs() if t.is_complex() else t.detach()
    if view.dtype == torch.bool:
        view = view.to(torch.uint8)
    return {
        "summary": True,
        "shape": list(t.shape),
        "numel": numel,
        "min": plain_number(view.amin().item()),
        "max": plain_number(view.amax().item()),
        "mean": plain_number(torch.mean(view, dtype=torch.float64).item()),
        "head": _plain_list(_head(t.detach(), 8)),
    }, None


def _head(t: torch.Tensor, n: int) -> list[Any]:
    """The first n values in row-major order, without copying the tensor."""
    if t.is_contiguous():
        return t.reshape(-1)[:n].tolist()
    values = []
    for k in range(min(n, t.numel())):
        index = []
        for size in reversed(t.shape):
            k, i = divmod(k, size)
            index.append(i)
        values.append(t[tuple(reversed(index))].item())
    return values


HEAT_NUMEL = 4_096  # values of one tensor a heat map draws one by one
HEAT_GRID = 64  # past those, block means: at most this many cells a side


def heat_cells(t: torch.Tensor) -> int:
    """How many numbers plain_heat(t) sends: every value, or one a block."""
    rows, cols = _as_matrix(t.shape)
    if rows * cols <= HEAT_NUMEL:
        return rows * cols
    (down, across), _ = _blocks(rows, cols)
    return down * across


def plain_heat(t: torch.Tensor | None) -> Plain:
    """to_plain(t) with every value up to HEAT_NUMEL of them; past that its summary, and
    `heat`: the tensor as a matrix (a 1-D one a row; more dimensions, the first by the rest)
    cut into blocks of `block` [rows, cols], each block's mean a cell, at most HEAT_GRID a
    side. A step() of a real layer (784x10, 7,840 values) still draws as a heat map."""
    plain = to_plain(t, HEAT_NUMEL)
    if not isinstance(plain, dict) or t is None:
        return plain
    with torch._C.DisableTorchFunction(), contextlib.suppress(RuntimeError, TypeError):
        plain["heat"] = _block_means(t.detach())
    return plain


def largest_change(before: torch.Tensor, after: torch.Tensor) -> dict[str, Any] | None:
    """Where `after` moved furthest from `before` (a NaN counts as furthest), read from every
    value: its index, the two values and the change; None for no floating values to compare."""
    with torch._C.DisableTorchFunction():
        if (before.shape != after.shape or before.numel() == 0
                or not before.is_floating_point() or not after.is_floating_point()):
            return None
        change = (after.detach() - before.detach()).abs().reshape(-1)
        k = int(change.nan_to_num(math.inf).argmax())
        index = [int(i) for i in torch.unravel_index(torch.tensor(k), before.shape)]
        was, now = before.reshape(-1)[k].item(), after.detach().reshape(-1)[k].item()
        return {"index": index, "before": plain_number(was), "after": plain_number(now),
                "update": plain_number(now - was)}


def _as_matrix(shape: torch.Size | list[int]) -> tuple[int, int]:
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    return shape[0], math.prod(shape[1:])


def _blocks(rows: int, cols: int) -> tuple[tuple[int, int], list[int]]:
    """The grid of blocks over a rows x cols matrix: (cells down, across), and a block's size."""
    block = [-(-rows // HEAT_GRID), -(-cols // HEAT_GRID)]  # ceil: at most HEAT_GRID a side
    return (-(-rows // block[0]), -(-cols // block[1])), block


def _block_means(t: torch.Tensor) -> dict[str, Any]:
    rows, cols = _as_matrix(t.shape)
    _, block = _blocks(rows, cols)
    m = t.abs() if t.is_complex() else t
    if m.dtype not in (torch.float32, torch.float64):
        m = m.float()
    # With no padding, a block past the edge (ceil_mode) is the mean of the values it holds.
    means = torch.nn.functional.avg_pool2d(m.reshape(1, 1, rows, cols), block, block,
                                           ceil_mode=True)[0, 0]
    return {"block": block, "values": _plain_list(means.tolist())}


def numel_budget(tensors: int, total: int = 100_000) -> int:
    """How many values each of `tensors` tensors may send in full, so a big graph's JSON stays
    bounded (300 nodes x 1,000 values was 6 MB): at most 1,000, at least 16, then summarised."""
    return max(16, min(1_000, total // max(tensors, 1)))


def pick_device(name: str) -> torch.device:
    """"auto" is CUDA when this machine has it, else the CPU; "cuda" without CUDA is an error."""
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ProgramError("CUDA was asked for, but this server has no GPU",
                               hint_key="hint.no_cuda")
        return torch.device("cuda")
    return torch.device("cpu")


def cuda_broken() -> bool:
    """Whether this process's CUDA context has failed for good.

    A kernel that fails a check (a device-side assert: an index out of range) or touches an
    illegal address leaves CUDA unusable in the process: every later CUDA call raises the same
    error, so nothing more can be read from the GPU. False where CUDA never started.
    """
    if not torch.cuda.is_initialized():
        return False
    try:
        torch.cuda.synchronize()
    except RuntimeError:  # torch.AcceleratorError is one
        return True
    return False


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def dtype_name(dtype: torch.dtype) -> str:
    """"float32" for torch.float32: the name a learner writes after torch."""
    if dtype not in _DTYPE_NAMES:
        _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
    return _DTYPE_NAMES[dtype]


class TensorReads:
    """to_plain and all_finite, once per piece of memory, for one trace: a saved tensor is often
    some node's value as well, and the variables table shows the nodes' tensors again.

    Every read happens after the program, so the same memory, read as the same shape, strides
    and dtype, holds the same values. Each tensor read is held until the trace ends, so neither
    its id nor its memory can be reused by another meanwhile.
    """

    def __init__(self) -> None:
        self._by_id: dict[tuple[int, int], Plain] = {}
        self._by_memory: dict[tuple[Any, ...], tuple[Plain, bool | None]] = {}
        self._finite: dict[int, bool] = {}
        self._held: list[torch.Tensor] = []

    def __call__(self, t: torch.Tensor | None, numel: int) -> Plain:
        """to_plain(t, numel)."""
        if t is None:
            return None
        by_id = id(t), numel
        seen = self._by_id.get(by_id, _UNREAD)
        if seen is not _UNREAD:
            return seen
        if t.layout != torch.strided or not _has_storage(t):
            return to_plain(t, numel)
        key = (t.data_ptr(), t.storage_offset(), t.shape, t.stride(), t.dtype, t.device, numel)
        read = self._by_memory.get(key)
        if read is None:
            read = self._by_memory[key] = plain_and_finite(t, numel)
        plain, finite = read
        if finite is not None:
            self._finite.setdefault(id(t), finite)
        self._by_id[by_id] = plain
        self._held.append(t)
        return plain

    def finite(self, t: torch.Tensor) -> bool:
        """all_finite(t) (True for a tensor of integers or bools)."""
        if id(t) not in self._finite:  # a meta tensor has no values: none of them NaN
            self._finite[id(t)] = not t.is_floating_point() or t.is_meta or all_finite(t)
            self._held.append(t)
        return self._finite[id(t)]


_UNREAD: Any = object()


def _has_storage(t: torch.Tensor) -> bool:
    """Whether t's values lie in memory of its own (not a torch.func wrapper's, say)."""
    try:
        t.data_ptr()
    except RuntimeError:
        return False
    return True
