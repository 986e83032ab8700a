"""SizeGuard: the TorchFunctionMode that measures a program's torch calls before they run.

Tensor sizes are checked in one place, this mode, because torch is called from more places than
the interpreter sees: nn layers call F.linear, `sorted` compares tensors, `x in xs` calls
Tensor.__eq__, optimizers make their state. Each call is measured on the meta device (shapes,
no memory) before it runs, against the checks in sizes.py, and what it returns is counted
against the limits by MemoryMeter.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import torch
import torch._dynamo  # noqa: F401 - see below
from torch._C import _functorch
from torch.overrides import TorchFunctionMode

from app.errors import TooLarge
from app.sandbox import allowlist as al
from app.sandbox.limits import Limits
from app.sandbox.sizes import check_broadcast, check_numel, check_sequence, nested_numel

# The meta device's Python kernels import torch._dynamo (800 modules, 2-4 s) on first use. Imported
# here, it is in the workers' forkserver already, and no program's first check pays for it.


def _to_meta(value: object, scalars: bool, seen: dict[int, object]) -> object:
    """value with its tensors on the meta device; with scalars, 0-dim tensors become numbers.

    seen holds each tensor's copy: torch.cat([x] * 100000) converts x once, not 100,000 times.
    """
    if isinstance(value, torch.Tensor):
        if id(value) not in seen:
            scalar = scalars and value.dim() == 0 and not value.is_meta
            seen[id(value)] = value.item() if scalar else value.detach().to("meta")
        return seen[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v, scalars, seen) for v in value)
    return value


def _at(args: Sequence[Any], kwargs: dict[str, Any], i: int, name: str,
        default: Any = None) -> Any:
    return args[i] if len(args) > i else kwargs.get(name, default)


def _largest(t: Any) -> int:
    return int(t.max()) if isinstance(t, torch.Tensor) and t.numel() else 0


def _one_hot(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    classes = int(_at(args, kwargs, 1, "num_classes", -1))
    return args[0].numel() * (classes if classes >= 0 else _largest(args[0]) + 1)


def _bincount(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    return max(_largest(args[0]) + 1, int(_at(args, kwargs, 2, "minlength", 0)))


def _repeat_interleave(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    repeats = _at(args, kwargs, 1, "repeats")
    if repeats is None:  # torch.repeat_interleave(repeats)
        return int(args[0].sum())
    most = _largest(repeats) if isinstance(repeats, torch.Tensor) else int(repeats)
    return most * args[0].numel()


def _nonzero(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    # One index per dim for each nonzero element (as_tuple: the same numbers, one tensor a dim).
    x = _at(args, kwargs, 0, "input")
    return int(torch.count_nonzero(x)) * max(x.dim(), 1)


def _combinations(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    r = int(_at(args, kwargs, 1, "r", 2))
    return math.comb(args[0].numel(), r) * r


def _concatenated(args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    tensors = _at(args, kwargs, 0, "tensors", ())
    return sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))


# Calls measured from their inputs directly: those whose output size depends on the values in
# a tensor, which the meta device cannot see, and concatenations, which it sees slowly (a meta
# torch.cat of 100,000 tensors takes a second).
_ESTIMATES: dict[str, Callable[[Sequence[Any], dict[str, Any]], int]] = {
    "one_hot": _one_hot, "bincount": _bincount, "repeat_interleave": _repeat_interleave,
    "nonzero": _nonzero, "argwhere": _nonzero,
    "combinations": _combinations, "cat": _concatenated, "concat": _concatenated,
    "stack": _concatenated, "hstack": _concatenated, "vstack": _concatenated,
    "dstack": _concatenated,
}


def _matmul_numel(a: Any, b: Any) -> int | None:
    """The elements a @ b makes, from the shapes alone (None: let the meta device tell)."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or \
            not a.dim() or not b.dim():
        return None
    if a.dim() == 1 and b.dim() == 1:
        return 1
    if a.dim() == 1:
        return math.prod(b.shape[:-2]) * b.shape[-1]
    if b.dim() == 1:
        return math.prod(a.shape[:-1])
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return math.prod(batch) * a.shape[-2] * b.shape[-1]


def _linear_numel(args: Sequence[Any], kwargs: dict[str, Any]) -> int | None:
    x, w = _at(args, kwargs, 0, "input"), _at(args, kwargs, 1, "weight")
    if not (isinstance(x, torch.Tensor) and isinstance(w, torch.Tensor)) or not x.dim() or \
            w.dim() not in (1, 2):
        return None
    return math.prod(x.shape[:-1]) * (w.shape[0] if w.dim() == 2 else 1)  # bias cannot widen it


def _addmm_numel(args: Sequence[Any], kwargs: dict[str, Any]) -> int | None:
    a, b = _at(args, kwargs, 1, "mat1"), _at(args, kwargs, 2, "mat2")
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() == b.dim() == 2:
        return a.shape[0] * b.shape[1]
    return None


# The growing calls a learner's loop makes most, sized from their inputs' shapes: the meta
# device runs nn.Linear's linear and addmm through Python decompositions, a third of a
# millisecond each (a 500-step MLP loop ran 5x slower than plain torch, most of it there).
# Each returns at least what the call makes, or None where it cannot tell: the meta device does.
_SHAPES: dict[str, Callable[[Sequence[Any], dict[str, Any]], int | None]] = {
    "linear": _linear_numel, "addmm": _addmm_numel,
    "matmul": lambda args, kwargs: _matmul_numel(args[0], args[1]),
    "rmatmul": lambda args, kwargs: _matmul_numel(args[1], args[0]),
    "mm": lambda args, kwargs: _matmul_numel(args[0], args[1]),
    "bmm": lambda args, kwargs: _matmul_numel(args[0], args[1]),
}


def _growing_numel(func: Callable[..., object], name: str, args: Sequence[Any],
                   kwargs: dict[str, Any]) -> int:
    """How many elements func(*args, **kwargs) would make, measured without making them."""
    shaped = _SHAPES.get(name)
    if shaped is not None and not any(isinstance(a, torch.Tensor) and a.is_meta for a in args):
        try:
            numel = shaped(args, kwargs)
        except Exception:  # noqa: BLE001 - shapes torch would refuse: the meta device says so
            numel = None
        if numel is not None:
            return numel
    estimate = _ESTIMATES.get(name)
    if estimate is not None and not any(isinstance(a, torch.Tensor) and a.is_meta for a in args):
        return estimate(args, kwargs)
    factory = name in al.FACTORIES
    seen: dict[int, object] = {}
    meta_args = [_to_meta(a, factory, seen) for a in args]
    meta_kwargs = {k: _to_meta(v, factory, seen) for k, v in kwargs.items()}
    if factory:
        meta_kwargs["device"] = "meta"
    result = func(*meta_args, **meta_kwargs)
    results = result if isinstance(result, (list, tuple)) else (result,)
    return sum(r.numel() for r in results if isinstance(r, torch.Tensor))


def _pieces(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    """How many tensors split, chunk, tensor_split or unbind would return."""
    x = args[0]
    dim = int(_at(args, kwargs, 1 if name == "unbind" else 2, "dim", 0))
    size = x.shape[dim] if x.dim() else 1
    if name == "unbind":
        return size
    sections = args[1] if len(args) > 1 else next(v for k, v in kwargs.items() if k != "dim")
    if not isinstance(sections, int):
        return len(sections) + 1
    if name == "split":
        return -(-size // max(sections, 1))
    return min(sections, size) if name == "chunk" else sections


_SPLITS = frozenset("split chunk tensor_split unbind".split())


def _advanced_index(key: object) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, (torch.Tensor, list)) for p in parts)


def _unbatched(t: torch.Tensor) -> torch.Tensor:
    """The tensor behind torch.vmap's one-sample view of it; t itself outside vmap."""
    while _functorch.is_batchedtensor(t):
        t = _functorch.get_unwrapped(t)
    return t


def _samples(values: Sequence[object]) -> int:
    """How many samples torch.vmap runs at once: 1, unless a tensor among values is batched.

    .. note:: Under vmap a tensor's shape is one sample's (the descent lab maps a learner's
       surface over 10,000 grid points), so every size here is multiplied by this.
    """
    most = 1
    for t in values:
        if isinstance(t, torch.Tensor) and _functorch.is_batchedtensor(t):
            most = max(most, _unbatched(t).numel() // max(t.numel(), 1))
    return most


class MemoryMeter:
    """Bytes held by the program's live tensors, so one program cannot take the worker's memory.

    Past the limit, before it refuses, the meter has the run let go of what only its records
    hold (`let_go`), then collects garbage: what stays is what the program itself holds, which
    is what the limit is for. A plain Python session would not keep those either.
    """

    def __init__(self, limits: Limits, let_go: Callable[[], None] | None = None) -> None:
        self.limits = limits
        self.live = 0
        self.let_go = let_go
        # id(t) -> a weak reference whose callback, when t is freed, takes it off the count of
        # its memory and its entry out (so an id reused later is a new tensor). Cheaper than
        # weakref.finalize plus a WeakValueDictionary, and a tensor passes here twice.
        self._held: dict[int, weakref.ref[torch.Tensor]] = {}
        # The memory tensors own, by address: [tensors alive on it, bytes counted]. t.detach()
        # and t.data are not views, yet share t's memory: history.append(w.detach()) 300 times
        # holds one tensor's bytes, not 300 (it was refused as 1.2 GB).
        self._memory: dict[int, list[int]] = {}

    def add(self, t: torch.Tensor, line: int | None) -> None:
        if id(t) in self._held:
            return
        # These reads are the runner's, not the program's: with a SizeGuard active each one
        # would go through its __torch_function__ (four calls, ~15 us, per tensor recorded).
        with torch._C.DisableTorchFunction():
            full = _unbatched(t)  # under vmap, t is one sample of it
            check_numel(full.numel(), "this tensor", self.limits, line)
            if t._base is not None or t.is_meta:
                return  # a view shares its base's memory
            nbytes = full.numel() * full.element_size()
            try:
                address = full.data_ptr()
            except RuntimeError:  # no single block of memory (a sparse tensor): its own
                address = -id(t)
        key = id(t)
        self._held[key] = weakref.ref(t, partial(self._free, key, address))
        shared = self._memory.get(address)
        if shared is None:
            self._memory[address] = [1, nbytes]
        else:  # memory counted already: only what this tensor reaches beyond it is new
            shared[0] += 1
            nbytes, shared[1] = max(0, nbytes - shared[1]), max(nbytes, shared[1])
        self.live += nbytes
        if self.live > self.limits.tensor_memory_bytes:
            self._over(line)

    def _over(self, line: int | None) -> None:
        limit = self.limits.tensor_memory_bytes
        for free in (self.let_go, gc.collect):  # each frees tensors at once: see _free
            if free is not None:
                free()
            if self.live <= limit:
                return
        raise TooLarge(f"the program's tensors hold {self.live / 2**20:.0f} MiB; the limit is "
                       f"{limit / 2**20:.0f} MiB", line=line, hint_key="hint.too_large")

    def _free(self, key: int, address: int, _: object) -> None:
        del self._held[key]
        shared = self._memory[address]
        shared[0] -= 1
        if not shared[0]:
            del self._memory[address]
            self.live -= shared[1]


class SizeGuard(TorchFunctionMode):
    """Measures every torch call made while a program runs, before it runs, and meters its result.

    .. note:: torch pops a mode while its handler runs, so the meta-device measuring below does
       not come back here; torch's own internals inside one call are not seen, only its inputs
       and what it returns.
    """

    def __init__(self, limits: Limits, meter: MemoryMeter, line: Callable[[], int | None]) -> None:
        super().__init__()
        self.limits = limits
        self.meter = meter
        self.line = line

    def __torch_function__(self, func: Callable[..., Any], types: object,
                           args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "").strip("_")  # Tensor.__matmul__ is matmul's
        line = self.line()
        self._measure(func, name, args, kwargs, line)
        result = func(*args, **kwargs)
        for t in result if isinstance(result, (list, tuple)) else (result,):
            if isinstance(t, torch.Tensor):
                self.meter.add(t, line)
        return result

    def _measure(self, func: Callable[..., Any], name: str, args: Sequence[Any],
                 kwargs: dict[str, Any], line: int | None) -> None:
        limits = self.limits
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        samples = _samples(tensors)
        if name in al.GROWING_CALLS or (name == "getitem" and _advanced_index(args[1])):
            try:
                numel = _growing_numel(func, name, args, kwargs)
            except Exception:  # noqa: BLE001 - torch reports the real error when the call runs
                return
            check_numel(numel * samples, f"{name}(...)", limits, line)
        elif name in ("tensor", "as_tensor"):
            nested_numel(_at(args, kwargs, 0, "data"), limits, line)
        elif name == "new_tensor":
            nested_numel(_at(args, kwargs, 1, "data"), limits, line)
        elif name == "setitem" and isinstance(args[2], (list, tuple)):
            nested_numel(args[2], limits, line)
        elif name == "tolist":
            check_sequence(args[0].numel(), limits, line)
        elif name in _SPLITS:
            try:
                pieces = _pieces(name, args, kwargs)
            except Exception:  # noqa: BLE001 - torch reports the real error when the call runs
                return
            check_sequence(pieces, limits, line)
        elif len(tensors) > 1:
            check_broadcast(tensors, limits, line, samples)
