"""What a sandbox worker runs: one function per request kind, plain values in and out.

The pool calls these by name ("app.jobs:graph") inside a worker process, so torch and the
learner's program never run in the server process.
"""

from __future__ import annotations

from app.sandbox.interpreter import run_program
from app.sandbox.limits import Limits
from app.tensors import pick_device
from app.tracing import Graph, trace


def graph(code: str, device: str, limits: Limits) -> Graph:
    """Run the program on the device and describe what it built."""
    torch_device = pick_device(device)
    execution = run_program(code, limits=limits, device=torch_device)
    return trace(execution, torch_device, limits.graph_nodes)
