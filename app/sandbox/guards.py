"""The checks the interpreter makes before and after each operation: names, sizes, memory."""

from __future__ import annotations

import math
import re
import types
import weakref
from collections.abc import Callable, Sequence

import numpy
import torch
from torch import nn

from app.errors import Disallowed, TooLarge
from app.sandbox import allowlist as al
from app.sandbox.limits import Limits

_ATTRIBUTE_POLICIES: tuple[tuple[type | tuple[type, ...], frozenset[str]], ...] = (
    (torch.Tensor, al.TENSOR_ATTRIBUTES),
    (nn.Module, al.MODULE_ATTRIBUTES),
    (torch.optim.Optimizer, al.OPTIMIZER_ATTRIBUTES),
    ((torch.optim.lr_scheduler.LRScheduler, torch.optim.lr_scheduler.ReduceLROnPlateau),
     al.SCHEDULER_ATTRIBUTES),
    (torch.autograd.function.FunctionCtx, al.CTX_ATTRIBUTES | al.NODE_ATTRIBUTES),
    (torch.autograd.graph.Node, al.NODE_ATTRIBUTES),
    (torch.utils.hooks.RemovableHandle, al.HANDLE_ATTRIBUTES),
    (torch.Size, al.SIZE_ATTRIBUTES),
    (torch.dtype, al.DTYPE_ATTRIBUTES),
    (torch.device, al.DEVICE_ATTRIBUTES),
    (list, al.LIST_ATTRIBUTES),
    (tuple, al.TUPLE_ATTRIBUTES),
    (dict, al.DICT_ATTRIBUTES),
    (str, al.STR_ATTRIBUTES),
    (float, al.FLOAT_ATTRIBUTES),
    (numpy.ndarray, al.NDARRAY_ATTRIBUTES),
)

_BOUND_METHODS = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)


def check_name(name: str, line: int | None) -> None:
    """Refuse private and dunder names, the start of nearly every Python sandbox escape."""
    if name.startswith("_"):
        raise Disallowed(f"names starting with '_' are not allowed: {name}", line=line,
                         hint_key="hint.private_name")


def get_attribute(obj: object, name: str, line: int | None) -> object:
    """obj.name, if the allow-list lets a program read it."""
    check_name(name, line)
    if isinstance(obj, al.Namespace):
        if name in obj.members:
            return obj.members[name]
        raise Disallowed(f"{obj.path}.{name} is not available here", line=line,
                         hint_key="hint.disallowed_name")
    if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
        if name == "apply" and obj is not torch.autograd.Function:
            return obj.apply
    elif isinstance(obj, torch.autograd.function.FunctionCtx) and name in vars(obj):
        return getattr(obj, name)  # an attribute the program itself set on ctx
    else:
        for kinds, names in _ATTRIBUTE_POLICIES:
            if isinstance(obj, kinds):
                if name in names:
                    return getattr(obj, name)
                break
    raise Disallowed(f"'{type(obj).__name__}' attribute '{name}' is not available here",
                     line=line, hint_key="hint.disallowed_name")


def set_attribute(obj: object, name: str, value: object, line: int | None) -> None:
    """obj.name = value, for tensors' grad/requires_grad/data and a ctx's own fields."""
    check_name(name, line)
    if isinstance(obj, torch.Tensor) and name in al.TENSOR_SETTABLE:
        setattr(obj, name, value)
    elif isinstance(obj, torch.autograd.function.FunctionCtx) and not hasattr(type(obj), name):
        setattr(obj, name, value)
    else:
        raise Disallowed(f"cannot set '{name}' on '{type(obj).__name__}'", line=line,
                         hint_key="hint.disallowed_name")


def check_callable(fn: object, allowed: Callable[[object], bool], line: int | None) -> None:
    """Refuse a call unless fn came from the allow-list, the program or an allowed attribute."""
    if any(fn is blocked for blocked in al.NOT_CALLABLE):
        raise Disallowed(f"{getattr(fn, '__name__', 'this')} cannot be called here; "
                         "use torch.tensor(...) to make a tensor", line=line,
                         hint_key="hint.disallowed_name")
    if allowed(fn) or isinstance(fn, (_BOUND_METHODS, nn.Module)):
        return
    raise Disallowed(f"'{type(fn).__name__}' object cannot be called here", line=line,
                     hint_key="hint.disallowed_name")


# --- sizes -------------------------------------------------------------------------------------

def check_int(value: int, limits: Limits, line: int | None) -> int:
    if value.bit_length() > limits.int_bits:
        raise TooLarge(f"integer with {value.bit_length()} bits; the limit is {limits.int_bits}",
                       line=line, hint_key="hint.int_too_large")
    return value


def check_int_op(op: str, a: int, b: int, limits: Limits, line: int | None) -> None:
    """Refuse integer arithmetic whose result would be too big, before computing it."""
    bits = 0.0
    if op == "**" and b > 0 and abs(a) > 1:
        bits = b * math.log2(abs(a))
    elif op == "*":
        bits = a.bit_length() + b.bit_length()
    elif op == "<<" and b > 0:
        bits = a.bit_length() + b
    if bits > limits.int_bits:
        raise TooLarge(f"{a.bit_length()}-bit {op} would make an integer of about {bits:.3g} "
                       f"bits; the limit is {limits.int_bits}", line=line,
                       hint_key="hint.int_too_large")


def check_sequence(length: int, limits: Limits, line: int | None) -> None:
    if length > limits.sequence_len:
        raise TooLarge(f"a string or list of {length} items; the limit is {limits.sequence_len}",
                       line=line, hint_key="hint.sequence_too_large")


def check_sequence_op(op: str, a: object, b: object, limits: Limits, line: int | None) -> None:
    """Refuse repetition and concatenation of strings, lists and tuples past the limit."""
    seq = (str, list, tuple, bytes)
    if op == "*" and isinstance(a, seq) and isinstance(b, int):
        check_sequence(len(a) * max(b, 0), limits, line)
    elif op == "*" and isinstance(b, seq) and isinstance(a, int):
        check_sequence(len(b) * max(a, 0), limits, line)
    elif op == "+" and isinstance(a, seq) and isinstance(b, seq):
        check_sequence(len(a) + len(b), limits, line)


_SPEC_NUMBER = re.compile(r"\d+")


def check_format_spec(spec: str, limits: Limits, line: int | None) -> None:
    """An f-string width or precision allocates that many characters: bound it."""
    for number in _SPEC_NUMBER.findall(spec):
        if len(number) > 6 or int(number) > 1000:
            raise TooLarge(f"format width {number} is over 1000", line=line,
                           hint_key="hint.sequence_too_large")


def check_numel(numel: int, what: str, limits: Limits, line: int | None) -> None:
    if numel > limits.tensor_numel:
        raise TooLarge(f"{what} would have {numel:,} elements; the limit is "
                       f"{limits.tensor_numel:,}", line=line, hint_key="hint.too_large")


def check_broadcast(tensors: Sequence[torch.Tensor], limits: Limits, line: int | None) -> None:
    """Refuse an elementwise op whose broadcast result is too big: ones(n, 1) * ones(1, n)."""
    shape: list[int] = []
    for t in tensors:
        dims = list(t.shape)
        if len(dims) > len(shape):
            shape = [1] * (len(dims) - len(shape)) + shape
        offset = len(shape) - len(dims)
        for i, size in enumerate(dims):
            here = shape[offset + i]
            if size != here and 1 not in (size, here):
                return  # not broadcastable: torch raises its own error
            shape[offset + i] = max(size, here) if 0 not in (size, here) else 0
    check_numel(math.prod(shape), "the result", limits, line)


def matmul_numel(a: torch.Tensor, b: torch.Tensor) -> int:
    try:
        return torch.matmul(a.to("meta"), b.to("meta")).numel()
    except RuntimeError:
        return 0


def _to_meta(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return value.detach().to("meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    return value


def precheck_growing(fn: Callable[..., object], name: str, args: Sequence[object],
                     kwargs: dict[str, object], limits: Limits, line: int | None) -> None:
    """Run a call that can make something larger than its inputs on the meta device first.

    .. note:: meta tensors carry shapes and dtypes but no memory, so `torch.ones(10**6, 10**6)`
       is measured without being allocated. A call that fails on meta is left to torch.
    """
    meta_args = [_to_meta(a) for a in args]
    meta_kwargs = {k: _to_meta(v) for k, v in kwargs.items()}
    target: Callable[..., object] = fn
    if isinstance(fn, _BOUND_METHODS) and isinstance(getattr(fn, "__self__", None), torch.Tensor):
        target = getattr(_to_meta(fn.__self__), name)
    elif name not in ("pad", "one_hot") and not any(isinstance(a, torch.Tensor) for a in args):
        meta_kwargs["device"] = "meta"  # a factory: torch.ones(...), torch.arange(...)
    try:
        result = target(*meta_args, **meta_kwargs)
    except Exception:  # noqa: BLE001 - torch reports the real error when the call runs
        return
    results = result if isinstance(result, (list, tuple)) else (result,)
    numel = sum(r.numel() for r in results if isinstance(r, torch.Tensor))
    check_numel(numel, f"{name}(...)", limits, line)


def precheck_module(cls: type, args: Sequence[object], kwargs: dict[str, object],
                    limits: Limits, line: int | None) -> None:
    """Build an nn layer on the meta device first and count its parameters."""
    try:
        module = cls(*args, **kwargs, device="meta")
    except Exception:  # noqa: BLE001 - torch reports the real error when the call runs
        return
    numel = sum(p.numel() for p in module.parameters())
    check_numel(numel, f"{cls.__name__}(...)'s parameters", limits, line)


def nested_numel(data: object, limits: Limits, line: int | None) -> None:
    """torch.tensor([[0] * n] * n) is n² elements from a list of n: measure before converting."""
    numel, level = 1, data
    while isinstance(level, (list, tuple)):
        numel *= len(level)
        if not level:
            break
        level = level[0]
    check_numel(numel, "torch.tensor(...)", limits, line)


class MemoryMeter:
    """Bytes held by the program's live tensors, so one program cannot take the worker's memory."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.live = 0
        self._seen: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()

    def add(self, t: torch.Tensor, line: int | None) -> None:
        check_numel(t.numel(), "this tensor", self.limits, line)
        if t._base is not None or t.is_meta or id(t) in self._seen:
            return  # a view shares its base's memory
        nbytes = t.numel() * t.element_size()
        self._seen[id(t)] = t
        self.live += nbytes
        weakref.finalize(t, self._free, nbytes)
        if self.live > self.limits.tensor_memory_bytes:
            raise TooLarge(f"the program's tensors hold {self.live / 2**20:.0f} MiB; the limit is "
                           f"{self.limits.tensor_memory_bytes / 2**20:.0f} MiB", line=line,
                           hint_key="hint.too_large")

    def _free(self, nbytes: int) -> None:
        self.live -= nbytes
