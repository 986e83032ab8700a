"""Benchmark the graph lab: `python bench/graph.py [--repeat N] [--no-browser]`.

1. Graph extraction against torchviz, in this one process: for each program, the program is run
   once (app.sandbox.interpreter.run_program with an app.recording.GraphRecorder), then we time
   `app.tracing.trace(...)` alone (values, gradients and backward steps included) against
   `torchviz.make_dot(output)` on the same, already built graph. Target: ratio ≤ 1.5.
2. In headless Chromium (Playwright, /usr/bin/chromium) against `python -m app` on a free port:
   layout + first render of a 300-node graph (target ≤ 1 s), and one backward step (≤ 50 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import torch  # noqa: E402
import torchviz  # noqa: E402

from app.lessons import LESSONS  # noqa: E402
from app.recording import GraphRecorder  # noqa: E402
from app.sandbox.interpreter import run_program  # noqa: E402
from app.sandbox.limits import Limits  # noqa: E402
from app.tracing import trace  # noqa: E402

# torchviz 0.0.3 compares torch versions with distutils' LooseVersion, which warns each call.
warnings.filterwarnings("ignore", "distutils Version classes are deprecated")

MLP = """import torch
import torch.nn.functional as F
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                            torch.nn.ReLU(), torch.nn.Linear(16, 1))
x = torch.randn(32, 8)
target = torch.randn(32, 1)
loss = F.mse_loss(model(x), target)
loss.backward()
"""

# 150 iterations of two ops: 300 op nodes, plus the two leaves.
LOOP = """import torch
w = torch.tensor([0.99], requires_grad=True)
b = torch.tensor([0.01], requires_grad=True)
y = torch.tensor([1.0])
for i in range(150):
    y = y * w + b
y.backward()
"""

PROGRAMS = {"S2": (LESSONS["S2"].program, "loss"), "MLP": (MLP, "loss"),
            "loop-300": (LOOP, "y")}

TARGET_RATIO = 1.5
TARGET_RENDER_S = 1.0
TARGET_STEP_S = 0.050


def median_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def extraction(repeat: int) -> bool:
    limits = Limits()
    device = torch.device("cpu")
    ok = True
    print(f"graph extraction, median of {repeat} (ours = app.tracing.trace, "
          f"theirs = torchviz.make_dot):")
    for name, (code, output) in PROGRAMS.items():
        recorder = GraphRecorder(limits)
        execution = run_program(code, limits=limits, device=device, recorder=recorder)
        tensor = execution.namespace[output]
        graph = trace(execution, recorder, device)
        ours = median_time(lambda e=execution, r=recorder: trace(e, r, device), repeat)
        theirs = median_time(lambda t=tensor: torchviz.make_dot(t), repeat)
        ratio = ours / theirs
        ok &= ratio <= TARGET_RATIO
        print(f"  {name:9} {len(graph.nodes):4} nodes  ours {ours * 1e3:8.3f} ms  "
              f"torchviz {theirs * 1e3:8.3f} ms  ratio {ratio:5.2f}x  "
              f"({'ok' if ratio <= TARGET_RATIO else 'OVER'} ≤ {TARGET_RATIO}x)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    ok = extraction(args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
