"""Gradient Lab: see how PyTorch computes gradients and how optimizers use them.

In a notebook: `from gradient_lab import show`, then `show(loss)`; or record a whole cell with
`with gradient_lab.record() as run: ...` and `run.show()` (gradient_lab/notebook).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

__all__ = ["__version__", "record", "show"]

try:
    # Written once, in pyproject.toml; a build's metadata carries it.
    __version__ = version("gradient-lab")
except PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    # Imported on first use: the server imports this package, and never needs the notebook's.
    if name in ("record", "show"):
        from gradient_lab import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'gradient_lab' has no attribute {name!r}")
