"""Turn an error from the learner's program into ours: torch's own message, plus a hint key."""

from __future__ import annotations

from app.errors import AppError, ProgramError, TooLarge

# (text in the exception's message, hint key): the tutorial's §5.3 mistakes first.
_HINTS: tuple[tuple[str, str], ...] = (
    ("does not require grad and does not have a grad_fn", "hint.no_grad_fn"),
    ("backward through the graph a second time", "hint.backward_twice"),
    ("Can't call numpy() on Tensor that requires grad", "hint.numpy_requires_grad"),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "hint.inplace_leaf"),
    ("out of memory", "hint.too_large"),
    ("must match the size", "hint.shape_mismatch"),
    ("cannot be multiplied", "hint.shape_mismatch"),
    ("shape mismatch", "hint.shape_mismatch"),
    ("grad can be implicitly created only for scalar outputs", "hint.scalar_backward"),
)


def from_exception(exc: BaseException, line: int | None) -> AppError:
    """An AppError for exc, keeping torch's message word for word."""
    if isinstance(exc, AppError):
        return exc
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MemoryError) or "out of memory" in str(exc):
        return TooLarge(message, line=line, hint_key="hint.too_large")
    if isinstance(exc, RecursionError):
        return TooLarge(message, line=line, hint_key="hint.recursion")
    hint = next((key for text, key in _HINTS if text in str(exc)), None)
    if hint is None and isinstance(exc, NameError):
        hint = "hint.name_error"
    return ProgramError(message, line=line, hint_key=hint)
