"""What of the server's environment reaches the zygote and the children: the variables that
choose how the numeric libraries compute, as they reach `python program.py`, and nothing else.

They pick which kernels run, so which bits come out: a machine that sets `OPENBLAS_CORETYPE`
and a zygote that does not would make NumPy's sums differ in their last digits from plain
Python's. None of them holds a secret. Thread counts are not the server's to choose: one.

A child adds one of the lab's own (child_environment): where torch's compiler looks for its
cache folder.
"""

from __future__ import annotations

from collections.abc import Mapping

# Each variable, and why it is let through.
KERNEL_CHOICE = {
    "OPENBLAS_CORETYPE": "OpenBLAS's kernel; set on CPUs that older builds misdetect",
    "OPENBLAS_L2_SIZE": "OpenBLAS's blocking, set beside the core type for the same reason",
    "MKL_CBWR": "MKL's reproducibility mode: which code path its results come from",
    "MKL_ENABLE_INSTRUCTIONS": "the highest instruction set MKL may use",
    "MKL_DEBUG_CPU_TYPE": "older MKL's CPU dispatch, forced on AMD processors",
    "ATEN_CPU_CAPABILITY": "torch's own CPU kernels: default, avx2 or avx512",
    "ONEDNN_MAX_CPU_ISA": "oneDNN's (torch's CPU convolutions) highest instruction set",
    "DNNL_MAX_CPU_ISA": "the same, under oneDNN's older name",
    "NPY_DISABLE_CPU_FEATURES": "NumPy's SIMD loops turned off",
    "NPY_ENABLE_CPU_FEATURES": "NumPy's SIMD loops limited to these",
    "NVIDIA_TF32_OVERRIDE": "whether CUDA's math libraries round through TF32",
    "CUBLAS_WORKSPACE_CONFIG": "cuBLAS's workspace, which torch's deterministic mode asks for",
}
# Read when each library loads: the lab runs every program on one thread, as it promises.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def numeric_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The kernel choices `environ` makes, with the lab's one thread."""
    chosen = {name: environ[name] for name in KERNEL_CHOICE if name in environ}
    return {**chosen, **ONE_THREAD}


def child_environment(environ: Mapping[str, str], workdir: str) -> dict[str, str]:
    """All a program finds in os.environ: the kernel choices, the lab's one thread, and the
    child's working directory as torch's compiler cache folder.

    .. note:: Inductor makes sure its cache folder exists whenever it is imported, which
       torch.func.linearize does: without a folder that exists, that fails at the wall
       (/tmp/torchinductor_nobody). The working directory exists, is empty, and nothing may
       write or even list it: what only asks for the folder runs, and what would write there
       (torch.compile's generated code, built by a C++ compiler in a process of its own)
       meets the wall as every write and every process does.
    """
    return {**numeric_environment(environ), "TORCHINDUCTOR_CACHE_DIR": workdir}
