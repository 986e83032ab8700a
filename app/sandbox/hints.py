"""Turn an error from the learner's program into ours: torch's own message, plus a hint key."""

from __future__ import annotations

from app.errors import AppError, ProgramError, TooLarge
from app.sandbox import sizes

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
    ("out of memory", "hint.too_large"),
    ("must match the size", "hint.shape_mismatch"),
    ("cannot be multiplied", "hint.shape_mismatch"),
    ("shape mismatch", "hint.shape_mismatch"),
    ("grad can be implicitly created only for scalar outputs", "hint.scalar_backward"),
    ("'NoneType' object has no attribute", "hint.none_attribute"),  # w.grad.zero_() too early
    ("CUDA error", "hint.cuda_error"),  # after "out of memory", which CUDA errors can be too
)


def from_exception(exc: BaseException, line: int | None) -> AppError:
    """An AppError for exc, keeping torch's message word for word (cut at 2,000 characters)."""
    if isinstance(exc, AppError):
        return exc
    text = text_of(exc)
    message = f"{type(exc).__name__}: {text}"
    if out_of_memory(exc, text):
        return TooLarge(message, line=line, hint_key="hint.too_large")
    if isinstance(exc, RecursionError):
        return TooLarge(message, line=line, hint_key="hint.recursion")
    hint = next((key for words, key in _HINTS if words in text), None)
    if hint is None and isinstance(exc, NameError):
        hint = "hint.name_error"
    return ProgramError(message, line=line, hint_key=hint)


def out_of_memory(exc: BaseException, text: str) -> bool:
    """Whether exc, whose text_of() is `text`, says an allocation failed: MemoryError,
    torch.OutOfMemoryError, CUDA's "out of memory" (also as AcceleratorError, when the GPU
    itself is full), and on the CPU what the worker's address-space limit makes malloc say."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError" or \
        any(words in text for words in _OUT_OF_MEMORY)


_OUT_OF_MEMORY = ("out of memory", "can't allocate memory", "Failed to allocate")
_MESSAGE_CHARS = 2_000


def text_of(exc: BaseException) -> str:
    """str(exc), cut at 2,000 characters, and never built when it would be far longer:
    str(KeyError(key)) is repr(key), which can be a value far too big to write out."""
    try:
        if sizes.text_size(exc.args, _MESSAGE_CHARS) > _MESSAGE_CHARS:
            return "(the value in this message is too long to show)"
        text = str(exc)
    except Exception:  # noqa: BLE001 - a program's value that cannot be written (a module
        # missing its super().__init__(), one that holds itself): the error still has its kind
        return "(the value in this message could not be written)"
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "..."
