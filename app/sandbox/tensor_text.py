"""torch's own text for a tensor (print, f-strings, str, repr), written in plain Python.

torch prints a tensor in two passes. The first, torch._tensor_str._Formatter, decides how every
number will look: whether all are whole (`42.`), whether to switch to scientific notation, and
the widest number's width. It does so with a dozen torch ops and a torch.ceil per element, so
`print(a.grad)` took 120 us, a sixth of the tutorial's S2 program. The second pass,
torch._tensor_str._str, enters no_grad, dispatch-mode and functorch guards, slices the tensor
row by row, formats each number and adds the suffixes (`dtype=`, `requires_grad=True`,
`grad_fn=<MulBackward0>`); with the first pass replaced it still took 25 us a tensor.

For the tensors a lesson prints (a plain Tensor or Parameter on the CPU, strided, of a real or
bool dtype, few enough values that torch does not summarise them) _text writes the same text
from one tolist(), and print(a.grad) takes 7 us. Every other tensor, and every tensor whose
text torch builds from other parts (vmap and forward-AD wrappers, dispatch modes, the neg bit,
zero tensors), goes through torch's own _str, whose first pass is PrintWidths when the values
allow.

The two agree because every step has an exact Python twin: tolist() gives each float16,
bfloat16, float32 or float64 value as the double that torch's own comparisons, min/max and
formatting work in, and the layout, line breaking and suffixes follow _str_intern line for
line. tests/test_tensor_text.py holds torch's text and ours equal over thousands of tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import TracebackType
from typing import Any

import torch
from torch import _tensor_str
from torch._C import _functorch
from torch.autograd import forward_ad

_TorchFormatter: Any = _tensor_str._Formatter
_torch_str: Callable[..., str] = _tensor_str._str
_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
_INTEGERS = frozenset({torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                       torch.int64})
_DTYPES = _FLOATS | _INTEGERS
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # _str_intern writes both as "tensor(...)"
_PREFIX = "tensor("
_MOST = 1_000  # torch prints at most this many before it summarises with "..."


def _numbers(values: list[Any], floating: bool,
             options: Any) -> tuple[bool, bool, list[str], int]:
    """(int_mode, sci_mode, each value's text unpadded, max_width), as torch's _Formatter has them.

    .. note:: The width counts only the nonzero finite values (torch masks the rest out), so a
       -0.0 or a nan can be wider than the column and is then written unpadded, as in torch.
    """
    if not floating:
        texts = [f"{v}" for v in values]  # an int's str, or True/False
        return True, False, texts, max(map(len, texts), default=1)
    shown = [v for v in values if v != 0 and math.isfinite(v)]  # torch: isfinite & ne(0)
    int_mode, sci_mode = True, False
    if shown:
        magnitudes = [abs(v) for v in shown]
        smallest, largest = min(magnitudes), max(magnitudes)
        int_mode = all(map(float.is_integer, shown))  # torch: value == torch.ceil(value)
        sci_mode = (largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
                    if options.sci_mode is None else options.sci_mode)
    if sci_mode:
        spec = f".{options.precision}e"
        texts = [format(v, spec) for v in values]
    elif int_mode:  # whole numbers get a "." after them; inf and nan do not
        texts = [f"{v:.0f}." if math.isfinite(v) else f"{v:.0f}" for v in values]
    else:
        spec = f".{options.precision}f"
        texts = [format(v, spec) for v in values]
    if len(shown) == len(values):
        return int_mode, sci_mode, texts, max(map(len, texts), default=1)
    widths = (len(text) for v, text in zip(values, texts, strict=True)
              if v != 0 and math.isfinite(v))
    return int_mode, sci_mode, texts, max(widths, default=1)


class PrintWidths(_TorchFormatter):  # type: ignore[misc]
    """torch's _Formatter, with __init__'s pass over the values done on Python floats.

    The tensors _text does not write itself still reach it, summarised ones among them
    (torch hands it only the values it will show).
    """

    def __init__(self, tensor: torch.Tensor) -> None:
        dtype = tensor.dtype
        if (type(tensor) not in _PLAIN or not tensor.is_cpu or tensor.layout != torch.strided
                or tensor.numel() > _MOST or dtype not in _DTYPES):
            _TorchFormatter.__init__(self, tensor)
            return
        with torch._C.DisableTorchFunction():
            values = tensor.detach().reshape(-1).tolist()
        self.floating_dtype = dtype.is_floating_point
        self.int_mode, self.sci_mode, _, self.max_width = _numbers(
            values, self.floating_dtype, _tensor_str.PRINT_OPTS)


def _nested(cells: list[str], shape: tuple[int, ...], indent: int, per_line: int) -> str:
    """The bracketed rows of a non-empty tensor of dim >= 1, as _tensor_str_with_formatter.

    cells are its padded numbers in row-major order; per_line is how many fit on a line of
    the innermost rows, which all sit at the same indent.
    """
    if len(shape) == 1:
        lines = [", ".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    step = len(cells) // shape[0]
    rows = [_nested(cells[i:i + step], shape[1:], indent + 1, per_line)
            for i in range(0, len(cells), step)]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(rows) + "]"


def _writes_plainly(t: torch.Tensor) -> bool:
    """Whether _str_intern would take its plain branch for t, with nothing but t to print.

    .. note:: A tensor under vmap or torch.func is a plain-typed, CPU, strided wrapper whose
       text torch builds from the tensor inside; forward AD adds a tangent; a dispatch mode
       would see our tolist() where torch's _str turns it off. All of those go to torch.
    """
    return (type(t) in _PLAIN and t.dtype in _DTYPES and t.layout == torch.strided
            and t.is_cpu and not t.is_nested and not t.is_neg() and not t._is_zerotensor()
            and forward_ad._current_level < 0
            and torch._C._get_default_device() == "cpu"
            and not torch._C._len_torch_dispatch_stack()
            and _functorch.peek_interpreter_stack() is None
            and not _functorch.is_functorch_wrapped_tensor(t)
            and not torch._is_functional_tensor(t))


def _text(t: torch.Tensor, options: Any) -> str:
    """torch's repr of a tensor for which _writes_plainly holds and that is not summarised."""
    dtype, dim = t.dtype, t.dim()
    suffixes = []
    if t.numel() == 0:
        body = "[]"
        if dim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if dtype != torch.get_default_dtype():  # int64 and bool too: no values to tell by
            suffixes.append(f"dtype={dtype}")
    else:
        if not options.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if dtype not in (torch.get_default_dtype(), torch.int64, torch.bool):
            suffixes.append(f"dtype={dtype}")
        values = t.tolist()
        for _ in range(dim - 1):
            values = [v for row in values for v in row]
        _, _, texts, width = _numbers(values if dim else [values], dtype.is_floating_point,
                                      options)
        cells = [text.rjust(width) for text in texts]
        if dim == 0:
            body = cells[0]
        else:  # torch: elements_per_line, for the innermost rows' indent
            indent = len(_PREFIX) + dim - 1
            per_line = max(1, math.floor((options.linewidth - indent) / (width + 2)))
            body = _nested(cells, tuple(t.shape), len(_PREFIX), per_line)
    try:
        grad_fn = t.grad_fn
        name = None if grad_fn is None else type(grad_fn).__name__
        if name == "CppFunction":
            name = grad_fn.name().rsplit("::", 1)[-1]  # type: ignore[union-attr]
    except RuntimeError:  # torch's answer for an in-place view made under no_grad (#99968)
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text: str = _tensor_str._add_suffixes(_PREFIX + body, suffixes, len(_PREFIX), False)
    return text


def _str(self: torch.Tensor, *, tensor_contents: Any = None) -> str:
    """torch._tensor_str._str, through _text wherever that writes the same text."""
    options = _tensor_str.PRINT_OPTS
    if (tensor_contents is None and _writes_plainly(self)
            and self.numel() <= options.threshold):  # above it, torch summarises with "..."
        return _text(self, options)
    return _torch_str(self, tensor_contents=tensor_contents)


class TensorText:
    """A context in which str(), repr() and format() of a tensor go through _str and PrintWidths.

    It swaps the two names torch's printing looks up, and puts torch's back on leaving. Both
    write torch's text, so a print on another thread that overlaps a context sees the same
    text either way.
    """

    def __enter__(self) -> None:
        _tensor_str._Formatter = PrintWidths  # type: ignore[misc]
        _tensor_str._str = _str

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _tensor_str._Formatter = _TorchFormatter  # type: ignore[misc]
        _tensor_str._str = _torch_str
