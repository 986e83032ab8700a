"""The graph lab in a notebook: `show(loss)` and `with record() as run: ...; run.show()`.

The learner's own kernel runs the learner's own code, records it with the graph lab's recorder
and traces it with its tracer (capture.py); the cell's output is the page's own view of the
graph, inlined into one self-contained, sandboxed HTML output (output.py, bundle.py).
"""

from __future__ import annotations

import sys

import torch

from gradient_lab.notebook.capture import Run, record, trace_tensor
from gradient_lab.notebook.output import display

__all__ = ["Run", "record", "show"]


def show(tensor: torch.Tensor, *, lang: str = "en", height: int | None = None) -> None:
    """Draw the graph behind `tensor` in the cell's output, and step through its backward.

    Before `tensor.backward()`, the steps are what it will do (every .grad is left as it was);
    after it, the graph is drawn with each leaf's .grad, and its freed steps are gone: record
    the cell (`record()`) to step through a backward that has run. `lang` is "en" or "zh-CN".
    """
    frame = sys._getframe(1)
    namespace = {**frame.f_globals, **frame.f_locals}
    del frame
    graph, note = trace_tensor(tensor, namespace)
    display(graph, note, lang=lang, height=height)
