"""torch's own text for a tensor (print, f-strings), with its widths worked out in Python.

torch prints a tensor in two passes. The first, torch._tensor_str._Formatter, decides how every
number will look: whether all are whole (`42.`), whether to switch to scientific notation, and
the widest number's width. It does so with a dozen torch ops and a torch.ceil per element, so
`print(a.grad)` took 120 us, a sixth of the tutorial's S2 program. PrintWidths decides the same
three things from the values' Python floats in a few microseconds, for the tensors a lesson
prints (on the CPU, of a plain real dtype, at most 1,000 values); torch's second pass writes the
text, as before. Any other tensor goes through torch's own _Formatter.

The two agree because every step has an exact Python twin: tolist() gives each float16,
bfloat16, float32 or float64 value as the double torch's own comparisons and min/max work in,
and formatting a 0-d tensor formats its item(). tests/test_tensor_text.py holds torch's text
and ours equal over a few thousand tensors of every such dtype and many shapes and ranges.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Any

import torch
from torch import _tensor_str

_TorchFormatter: Any = _tensor_str._Formatter
_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
_INTEGERS = frozenset({torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                       torch.int64})
_MOST = 1_000  # torch prints at most this many before it summarises with "..."


class PrintWidths(_TorchFormatter):  # type: ignore[misc]
    """torch's _Formatter, with __init__'s pass over the values done on Python floats."""

    def __init__(self, tensor: torch.Tensor) -> None:
        dtype = tensor.dtype
        if (type(tensor) not in (torch.Tensor, torch.nn.Parameter) or not tensor.is_cpu
                or tensor.layout != torch.strided or tensor.numel() > _MOST
                or (dtype not in _FLOATS and dtype not in _INTEGERS)):
            _TorchFormatter.__init__(self, tensor)
            return
        self.floating_dtype = dtype.is_floating_point
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        with torch._C.DisableTorchFunction():
            values = tensor.detach().reshape(-1).tolist()
        if not self.floating_dtype:
            self.max_width = max(1, *(len(f"{v}") for v in values)) if values else 1
            return
        shown = [v for v in values if v != 0 and math.isfinite(v)]  # torch: isfinite & ne(0)
        if not shown:
            return
        smallest, largest = min(map(abs, shown)), max(map(abs, shown))
        self.int_mode = all(v == math.ceil(v) for v in shown)
        options = _tensor_str.PRINT_OPTS
        self.sci_mode = (largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
                         if options.sci_mode is None else options.sci_mode)
        precision = options.precision
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in shown)
        elif self.int_mode:  # whole numbers get a "." after them: one more character
            widths = (len(f"{v:.0f}") + 1 for v in shown)
        else:
            widths = (len(f"{v:.{precision}f}") for v in shown)
        self.max_width = max(1, *widths)


class TensorText:
    """A context in which str(), repr() and format() of a tensor use PrintWidths.

    It swaps the class torch's printing looks up, and puts torch's back on leaving; a sandbox
    worker runs one program at a time, on one thread.
    """

    def __enter__(self) -> None:
        _tensor_str._Formatter = PrintWidths  # type: ignore[misc]

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _tensor_str._Formatter = _TorchFormatter  # type: ignore[misc]
