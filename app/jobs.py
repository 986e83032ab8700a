"""What a sandbox worker runs: one function per request kind, plain values in and out.

The pool calls these by name ("app.jobs:graph") inside a worker process, so torch and the
learner's program never run in the server process.
"""

from __future__ import annotations

from dataclasses import asdict

# The first optimizer a process builds imports torch._dynamo (800 modules, about 1 s). This
# module is preloaded by the workers' forkserver, so import it here, once, not per worker.
import torch._dynamo  # noqa: F401

from app.errors import AppError, ProgramError
from app.recording import GraphRecorder
from app.sandbox.interpreter import Execution, run_program
from app.sandbox.limits import Limits
from app.tensors import pick_device
from app.tracing import Graph, trace


def graph(code: str, device: str, limits: Limits) -> Graph:
    """Run the program on the device and describe the graph it built.

    .. note:: A program that fails at run time (S6, S19) still built something: the error
       carries that graph as `partial`, so the page can draw it beside the message.
    """
    torch_device = pick_device(device)
    recorder = GraphRecorder(limits)
    try:
        execution = run_program(code, limits=limits, device=torch_device, recorder=recorder)
    except ProgramError as error:
        if isinstance(error.execution, Execution):
            try:
                error.partial = asdict(trace(error.execution, recorder, torch_device))
            except AppError:
                pass  # the partial graph is itself too large: the error alone says enough
        error.execution = None
        raise
    return trace(execution, recorder, torch_device)
