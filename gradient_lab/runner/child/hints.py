"""Turn an error from the learner's program into ours: torch's own message, plus a hint key."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from types import TracebackType

from gradient_lab.errors import AppError, ProgramError, TooLarge


@dataclass(frozen=True, slots=True)
class Hint:
    """When a hint fits: the error's type, words from its message (any of them), and, where the
    words alone would say too little, the torch functions it came from (one is enough)."""

    kind: type[BaseException] | tuple[type[BaseException], ...]
    words: tuple[str, ...] = ("",)
    where: tuple[str, ...] = ()


_RANKING_LOSSES = ("margin_ranking_loss", "cosine_embedding_loss", "hinge_embedding_loss",
                   "triplet_margin_loss", "soft_margin_loss", "multilabel_margin_loss",
                   "multilabel_soft_margin_loss")
# Every hint a program's error can get, the first that fits wins: the tutorial's §5.3 mistakes
# first, then what real learners' programs raise most (tests/corpus/broken/, each with its source).
HINTS: dict[str, Hint] = {
    "hint.no_grad_fn": Hint(RuntimeError, ("does not require grad and does not have a grad_fn",)),
    "hint.backward_twice": Hint(RuntimeError, ("backward through the graph a second time",)),
    "hint.numpy_requires_grad": Hint(RuntimeError,
                                     ("Can't call numpy() on Tensor that requires grad",)),
    "hint.inplace_leaf": Hint(RuntimeError, (
        "a leaf Variable that requires grad is being used in an in-place operation",)),
    "hint.inplace_modified": Hint(RuntimeError, ("modified by an inplace operation",)),
    "hint.requires_grad_nonleaf": Hint(RuntimeError, (
        "you can only change requires_grad flags of leaf variables",)),
    "hint.int_requires_grad": Hint(RuntimeError, (
        "Only Tensors of floating point and complex dtype can require gradients",)),
    "hint.anomaly_nan": Hint(RuntimeError, ("returned nan values in its",)),  # detect_anomaly()
    "hint.item_many": Hint((RuntimeError, ValueError), (
        "cannot be converted to Scalar", "only one element tensors can be converted")),
    "hint.vmap_control_flow": Hint(RuntimeError, ("data-dependent control flow",)),  # surfaces
    # CUDA asked for where the lab has none: a CPU build, or a CUDA build with no GPU.
    "hint.cuda_missing": Hint((AssertionError, RuntimeError), (
        "Torch not compiled with CUDA enabled", "Found no NVIDIA driver",
        "No CUDA GPUs are available", "torch.cuda.is_available() is False")),
    "hint.ranking_target": Hint(RuntimeError, where=_RANKING_LOSSES),
    "hint.class_target_shape": Hint(RuntimeError, ("0D or 1D target tensor expected",)),
    "hint.indices_long": Hint(RuntimeError, (
        "expected target dtype to be Long", "expected scalar type Long",
        "'indices' to have one of the following scalar types")),
    "hint.dtype_mismatch": Hint((RuntimeError, ValueError), (
        "have the same dtype", "expected scalar type", "should be the same",
        "Found dtype", "can't be cast to the desired output type",
        "does not match weight dtype", "not implemented for 'Long'", "not implemented for 'Int'",
        "Input dtype must be either a floating point")),
    "hint.target_out_of_range": Hint(IndexError, ("Target", "index out of range in self"),
                                     where=("cross_entropy", "nll_loss", "embedding")),
    "hint.shape_mismatch": Hint((RuntimeError, ValueError), (
        "must match the size", "cannot be multiplied", "shape mismatch",
        "to match target batch_size", "must be the same as input size", "Using a target size",
        "must be equal to input_size", "should also be 3-D", "Expected hidden",
        "input to conv", "channels, but got")),
    "hint.scalar_backward": Hint(RuntimeError, (
        "grad can be implicitly created only for scalar outputs",)),
    # APIs of older PyTorch, Python 2 and NumPy 1, as old tutorials and answers still write them.
    "hint.zero_dim_index": Hint(IndexError, ("invalid index of a 0-dim tensor",)),
    "hint.iterator_next": Hint(AttributeError, ("object has no attribute 'next'",)),
    "hint.scheduler_verbose": Hint(TypeError, ("unexpected keyword argument 'verbose'",)),
    "hint.legacy_function": Hint(RuntimeError, ("Legacy autograd function",)),
    "hint.numpy_removed": Hint(AttributeError, (
        "was removed in the NumPy 2.0 release", "was a deprecated alias")),
    "hint.numpy_scalar": Hint(OverflowError, ("out of bounds for",)),  # NumPy 2's NEP 50
    "hint.item_backward": Hint(AttributeError, ("'float' object has no attribute 'backward'",)),
    "hint.module_not_parameters": Hint((TypeError, ValueError, AttributeError), (
        "object is not iterable", "optimizer can only optimize Tensors",
        "can't optimize a non-leaf Tensor",
        "object has no attribute 'grad'"), where=(  # an nn.Sequential iterates its layers
        "clip_grad_norm_", "clip_grad_value_", "Optimizer.__init__", "Optimizer.add_param_group")),
    "hint.function_backward": Hint(RuntimeError, (
        "returned an incorrect number of gradients", "returned an invalid gradient")),
    "hint.none_attribute": Hint(AttributeError, ("'NoneType' object has no attribute",)),
    "hint.method_not_called": Hint(AttributeError, (
        "'builtin_function_or_method' object has no attribute",
        "'method' object has no attribute")),
    "hint.tensor_attribute": Hint(AttributeError, (
        "'Tensor' object has no attribute", "'Parameter' object has no attribute")),
    "hint.cuda_error": Hint(RuntimeError, ("CUDA error",)),
    # torch.compile's default backend writes and builds code, which the walls refuse.
    "hint.compile": Hint(Exception, ("Permission denied", "Operation not permitted"),
                         where=("compile_fx", "cpp_compiler_search", "write_atomic")),
    # torch's C++ opening a file: not an OSError
    "hint.walled": Hint(Exception, ("Permission denied", "Operation not permitted")),
}
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
    if _fits(HINTS["hint.compile"], exc, text):
        return "hint.compile"  # a wall met inside torch.compile: the feature, not a file
    if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
        return "hint.walled"  # the kernel's walls: no files, network or processes
    if isinstance(exc, ModuleNotFoundError):
        return "hint.module_missing"
    if isinstance(exc, NameError) and exc.name in _MODULE_NAMES:
        return "hint.missing_import"
    hint = next((key for key, fits in HINTS.items() if _fits(fits, exc, text)), None)
    if hint is None and isinstance(exc, NameError):
        return "hint.name_error"
    return hint


def _fits(hint: Hint, exc: BaseException, text: str) -> bool:
    return isinstance(exc, hint.kind) and any(words in text for words in hint.words) and \
        (not hint.where or not set(hint.where).isdisjoint(_functions(exc.__traceback__)))


def _functions(tb: TracebackType | None) -> set[str]:
    """The torch functions an error passed through, by name and by qualified name: by their
    module, so not the program's own of those names (its module is `__main__`)."""
    names: set[str] = set()
    while tb is not None:
        frame = tb.tb_frame
        if str(frame.f_globals.get("__name__")).partition(".")[0] == "torch":
            names.update((frame.f_code.co_name, frame.f_code.co_qualname))
        tb = tb.tb_next
    return names


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
