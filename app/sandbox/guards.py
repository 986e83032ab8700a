"""The allow-list policy: the names, attributes and calls a program may use (sizes: how big)."""

from __future__ import annotations

import types
from collections.abc import Callable

import numpy
import torch
from torch import nn

from app.errors import Disallowed
from app.sandbox import allowlist as al

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
    (set, al.SET_ATTRIBUTES),
    (dict, al.DICT_ATTRIBUTES),
    (str, al.STR_ATTRIBUTES),
    (float, al.FLOAT_ATTRIBUTES),
    (numpy.ndarray, al.NDARRAY_ATTRIBUTES),
    (torch.finfo, al.FINFO_ATTRIBUTES),
    (torch.iinfo, al.IINFO_ATTRIBUTES),
)

# The class attribute that marks one of the program's own classes (classes.py): its methods' and
# fields' names, which a program may read on its instances, with what the instances hold. No
# program can name it.
PROGRAM_METHODS = "_program_methods"
PROGRAM_FIELDS = "_program_fields"  # those of them that are fields (hidden = 16), not methods

_BOUND_METHODS = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)


def check_name(name: str, line: int | None) -> None:
    """Refuse private and dunder names, the start of nearly every Python sandbox escape.

    A lone `_` is Python's name for a value thrown away (for _ in range(3)): as a variable it
    reaches nothing, and as an attribute no allow-list holds it.
    """
    if name.startswith("_") and name != "_":
        raise Disallowed(f"names starting with '_' are not allowed: {name}", line=line,
                         hint_key="hint.main_guard" if name == "__name__" else
                         "hint.private_name")


def get_attribute(obj: object, name: str, line: int | None) -> object:
    """obj.name, if the allow-list lets a program read it.

    .. note:: An attribute of None raises Python's own AttributeError, not a refusal: it is the
       classic `w.grad.zero_()` before backward(), which a program may catch as in Python.
    """
    check_name(name, line)
    if obj is None:
        raise AttributeError(f"'NoneType' object has no attribute '{name}'")
    if isinstance(obj, al.Namespace):
        if name in obj.members:
            return obj.members[name]
        raise Disallowed(f"{obj.path}.{name} is not available here", line=line,
                         hint_key=al.REFUSAL_HINTS.get(name, "hint.disallowed_name"))
    if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
        if name == "apply" and obj is not torch.autograd.Function:
            return obj.apply
    elif isinstance(obj, torch.autograd.function.FunctionCtx) and name in vars(obj):
        return getattr(obj, name)  # an attribute the program itself set on ctx
    elif type(obj) in al.RETURN_TYPE_FIELDS:
        if name in al.RETURN_TYPE_FIELDS[type(obj)]:
            return getattr(obj, name)
    elif isinstance(obj, nn.Module) and PROGRAM_METHODS in vars(type(obj)):
        return _program_attribute(obj, name, line)
    elif isinstance(obj, torch.optim.Optimizer) and name == "step" and "step" in vars(obj):
        return types.MethodType(_scheduled_step, obj)
    else:
        for kinds, names in _ATTRIBUTE_POLICIES:
            if isinstance(obj, kinds):
                if name in names:
                    return getattr(obj, name)
                break
        else:  # not a kind of value the list knows: perhaps one of the program's own classes'
            if PROGRAM_METHODS in vars(type(obj)):
                return _program_attribute(obj, name, line)
    raise Disallowed(f"'{type(obj).__name__}' attribute '{name}' is not available here",
                     line=line, hint_key=al.REFUSAL_HINTS.get(name, "hint.disallowed_name"))


def _program_attribute(obj: object, name: str, line: int | None) -> object:
    """An attribute of an instance of one of the program's own classes (classes.py): one of the
    class's methods or fields, what the program set on it (self.fc1 = ...), or, on a module,
    what a module may read."""
    held = vars(obj)
    if name in vars(type(obj))[PROGRAM_METHODS] or name in held or \
            isinstance(obj, nn.Module) and (name in al.MODULE_ATTRIBUTES or any(
                name in held.get(kind, ()) for kind in _MODULE_STORES)):
        return getattr(obj, name)
    if hasattr(type(obj), name):  # nn.Module's, but not on the list
        raise Disallowed(f"'{type(obj).__name__}' attribute '{name}' is not available here",
                         line=line, hint_key=al.REFUSAL_HINTS.get(name, "hint.disallowed_name"))
    raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")


_MODULE_STORES = ("_parameters", "_modules", "_buffers")  # where nn.Module keeps what it holds


def _scheduled_step(optimizer: torch.optim.Optimizer, *args: object, **kwargs: object) -> object:
    """optimizer.step() once an lr scheduler has wrapped it.

    A scheduler replaces its optimizer's step with a plain function on the instance, which
    notes that step was called (to warn if the scheduler steps first) and calls the method.
    Read as it is, that function is no bound method, so check_callable refused the call
    every training loop with a scheduler makes. Only torch sets an optimizer's attributes
    (set_attribute lets a program set none), so this calls torch's own wrapper.
    """
    return vars(optimizer)["step"](*args, **kwargs)


def set_attribute(obj: object, name: str, value: object, line: int | None) -> None:
    """obj.name = value, for tensors' grad/requires_grad/data and the fields of a ctx or of an
    instance of the program's own classes."""
    check_name(name, line)
    if obj is None:  # w.grad.data = ... before backward(): Python's error, as get_attribute's
        raise AttributeError(f"'NoneType' object has no attribute '{name}'")
    if isinstance(obj, torch.Tensor) and name in al.TENSOR_SETTABLE:
        setattr(obj, name, value)
    elif isinstance(obj, torch.autograd.function.FunctionCtx) and not hasattr(type(obj), name):
        setattr(obj, name, value)
    elif PROGRAM_METHODS in vars(type(obj)) and (
            not hasattr(type(obj), name) or name in vars(type(obj))[PROGRAM_FIELDS]):
        # self.fc1 = nn.Linear(...), or its own value of a class field; not a method
        setattr(obj, name, value)  # nn.Module's __setattr__ registers modules and parameters
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


def check_operand(value: object, line: int | None) -> None:
    """Refuse NumPy values in operators: NumPy would broadcast (or turn a nested list into an
    array) without the size checks torch calls get."""
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        raise Disallowed("NumPy arrays can be printed or read (.tolist(), .item()); for "
                         "arithmetic, use tensors: torch.from_numpy(a)", line=line,
                         hint_key="hint.disallowed_name")
