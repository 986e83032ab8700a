"""What one program may use. Plain values, so they cross into worker processes as they are."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    program_bytes: int = 20_000
    steps: int = 200_000
    tensor_numel: int = 10_000_000
    tensor_memory_bytes: int = 1 << 30
    int_bits: int = 4_096
    sequence_len: int = 100_000
    recursion: int = 50
    graph_nodes: int = 2_000
    stdout_bytes: int = 64_000
    wall_seconds: float = 5.0
    cpu_seconds: float = 5.0
    worker_memory_mb: int = 2_048
