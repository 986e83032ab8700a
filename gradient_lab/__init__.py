"""Gradient Lab: see how PyTorch computes gradients and how optimizers use them.

In a notebook: `from gradient_lab import show`, then `show(loss)`; or record a whole cell with
`with gradient_lab.record() as run: ...` and `run.show()` (gradient_lab/notebook).
"""

from __future__ import annotations

from typing import Any

__all__ = ["record", "show"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the server imports this package, and never needs the notebook's.
    if name in __all__:
        from gradient_lab import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'gradient_lab' has no attribute {name!r}")
