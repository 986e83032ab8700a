"""gradcheck in a program: its verdict, and when it fails, the two Jacobians it compared.

GraphRecorder (recording.py) intercepts torch.autograd.gradcheck and gradgradcheck and runs
them through run_gradcheck, so the graph lab can show a failed check's analytical (autograd)
and numerical (central differences) Jacobians side by side, as the tutorial's MyReLU lesson does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.autograd.gradcheck import GradcheckError

from gradient_lab.tensors import to_plain

GRADCHECKS = {id(torch.autograd.gradcheck), id(torch.autograd.gradgradcheck)}
_JACOBIAN_NUMEL = 64  # past this many inputs, a failed check's Jacobians are left out


@dataclass(slots=True)
class GradcheckRecord:
    line: int
    passed: bool
    message: str | None
    analytical: Any = None
    numerical: Any = None


def run_gradcheck(fn: Any, args: list[Any], kwargs: dict[str, Any],
                  record: GradcheckRecord) -> Any:
    """fn(*args, **kwargs), torch's gradcheck, with its verdict (and Jacobians) in record."""
    try:
        passed = fn(*args, **kwargs)
        record.passed = bool(passed)
        return passed
    except GradcheckError as exc:
        record.message = str(exc)
        raise
    finally:
        if not record.passed and args:
            record.analytical, record.numerical = _jacobians(
                args[0], args[1] if len(args) > 1 else kwargs.get("inputs"),
                float(kwargs.get("eps", 1e-6)))


def _jacobians(fn: Any, inputs: Any, eps: float) -> tuple[Any, Any]:
    """Analytical (autograd) and numerical (central differences) Jacobians for small inputs."""
    x = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
    if not isinstance(x, torch.Tensor) or x.numel() > _JACOBIAN_NUMEL:
        return None, None
    rest = tuple(inputs[1:]) if isinstance(inputs, (tuple, list)) else ()
    try:
        def first(v: torch.Tensor) -> torch.Tensor:
            out = fn(v, *rest)
            return (out[0] if isinstance(out, (tuple, list)) else out).reshape(-1)

        analytical = torch.autograd.functional.jacobian(first, x.detach())
        base = x.detach().reshape(-1)
        columns = []
        with torch.no_grad():
            for j in range(base.numel()):
                step = torch.zeros_like(base)
                step[j] = eps
                up = first((base + step).reshape(x.shape))
                down = first((base - step).reshape(x.shape))
                columns.append((up - down) / (2 * eps))
        numerical = torch.stack(columns, dim=1)
        return to_plain(analytical.reshape(numerical.shape)), to_plain(numerical)
    except Exception:  # noqa: BLE001 - the Jacobians are extra detail; the verdict stands
        return None, None
