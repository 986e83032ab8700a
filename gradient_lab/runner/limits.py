"""What one program may use: plain values that cross into a child with its job."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    program_bytes: int = 20_000  # the program's text
    graph_nodes: int = 2_000  # nodes the graph lab traces and draws
    stdout_bytes: int = 64_000  # what it may print
    wall_seconds: float = 5.0
    cpu_seconds: float = 5.0
    memory_mb: int = 2_048  # its address space beyond torch's own (CPU), or GPU memory
    race_steps: int = 30_000  # optimizer steps in one race: runs x steps, an lr sweep's too
    basins_steps: int = 3_600_000  # a basins map's starts x steps
    stream_chunks: int = 200  # chunks (events) of one training stream
