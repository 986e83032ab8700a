"""Turn an error from the learner's program into ours: torch's own message, plus a hint key."""

from __future__ import annotations

import errno

from gradient_lab.errors import AppError, ProgramError, TooLarge

# (text in the exception's message, hint key): the tutorial's §5.3 mistakes first.
_HINTS: tuple[tuple[str, str], ...] = (
    ("does not require grad and does not have a grad_fn", "hint.no_grad_fn"),
    ("backward through the graph a second time", "hint.backward_twice"),
    ("Can't call numpy() on Tensor that requires grad", "hint.numpy_requires_grad"),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "hint.inplace_leaf"),
    ("modified by an inplace operation", "hint.inplace_modified"),
    ("you can only change requires_grad flags of leaf variables", "hint.requires_grad_nonleaf"),
    ("Only Tensors of floating point and complex dtype can require gradients",
     "hint.int_requires_grad"),
    ("returned nan values in its", "hint.anomaly_nan"),  # under detect_anomaly()
    ("cannot be converted to Scalar", "hint.item_many"),
    ("data-dependent control flow", "hint.vmap_control_flow"),  # a surface's if or max()
    ("must match the size", "hint.shape_mismatch"),
    ("cannot be multiplied", "hint.shape_mismatch"),
    ("shape mismatch", "hint.shape_mismatch"),
    ("grad can be implicitly created only for scalar outputs", "hint.scalar_backward"),
    ("'NoneType' object has no attribute", "hint.none_attribute"),  # w.grad.zero_() too early
    ("CUDA error", "hint.cuda_error"),
    ("Permission denied", "hint.walled"),  # torch's C++ opening a file: not an OSError
    ("Operation not permitted", "hint.walled"),
)
# Names a program uses without importing them, when it was written for a notebook that had.
_MODULE_NAMES = frozenset(("torch", "nn", "F", "optim", "np", "numpy", "math", "random"))
_OUT_OF_MEMORY = ("out of memory", "can't allocate memory", "Failed to allocate")
_MESSAGE_CHARS = 2_000


def from_exception(exc: BaseException, line: int | None) -> AppError:
    """An AppError for exc, keeping its message word for word (cut at 2,000 characters)."""
    if isinstance(exc, AppError):
        return exc
    text = text_of(exc)
    message = f"{type(exc).__name__}: {text}"
    if out_of_memory(exc, text):
        # Where memory runs out depends on what else the machine holds: never kept.
        return TooLarge(message, line=line, hint_key="hint.too_large", repeatable=False)
    if isinstance(exc, RecursionError):
        return TooLarge(message, line=line, hint_key="hint.recursion")
    return ProgramError(message, line=line, hint_key=_hint(exc, text))


def _hint(exc: BaseException, text: str) -> str | None:
    if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
        return "hint.walled"  # the kernel's walls: no files, network or processes
    if isinstance(exc, ModuleNotFoundError):
        return "hint.module_missing"
    if isinstance(exc, NameError) and exc.name in _MODULE_NAMES:
        return "hint.missing_import"
    hint = next((key for words, key in _HINTS if words in text), None)
    if hint is None and isinstance(exc, NameError):
        return "hint.name_error"
    return hint


def out_of_memory(exc: BaseException, text: str) -> bool:
    """Whether exc says an allocation failed: MemoryError, torch's OutOfMemoryError, CUDA's
    "out of memory", and on the CPU what the address-space limit makes the allocator say."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError" or \
        any(words in text for words in _OUT_OF_MEMORY)


def text_of(exc: BaseException) -> str:
    """str(exc), cut at 2,000 characters; a value that cannot be written still has its kind."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - e.g. a module whose __init__ left out super().__init__()
        return "(the value in this message could not be written)"
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "..."
