"""Benchmark the graph lab: `python bench/graph.py [--repeat N] [--no-browser]`.

1. Graph extraction against torchviz, in this one process: for each program, the program is run
   once (run_program under an gradient_lab.graph.recording.GraphRecorder), then we time
   `gradient_lab.graph.tracing.trace(...)` alone (values, gradients and backward steps included)
   against `torchviz.make_dot(output)` on the same, already built graph. Target: ratio ≤ 1.5.
2. In headless Chromium (Playwright, /usr/bin/chromium) against `python -m gradient_lab` on a free
   port: layout + first render of a 300-node graph (target ≤ 1 s), and one backward step (≤ 50 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import torch  # noqa: E402
import torchviz  # noqa: E402
from server import free_port, start_server, stop  # noqa: E402

from gradient_lab.graph.examples import EXAMPLES  # noqa: E402
from gradient_lab.graph.recording import GraphRecorder  # noqa: E402
from gradient_lab.graph.tracing import trace  # noqa: E402
from gradient_lab.runner.child.program import run_program  # noqa: E402
from gradient_lab.runner.limits import Limits  # noqa: E402

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

# 150 iterations of two ops: 300 op nodes, plus the two leaves, each feeding every layer; dagre
# routes each of those 300 edges through dummy nodes on every layer it skips.
LOOP = """import torch
w = torch.tensor([0.99], requires_grad=True)
b = torch.tensor([0.01], requires_grad=True)
y = torch.tensor([1.0])
for i in range(150):
    y = y * w + b
y.backward()
"""

# 300 ops in a chain from one leaf (plus the 75 constants 1.5): no edge skips a layer.
CHAIN = """import torch
x = torch.tensor([0.5], requires_grad=True)
y = x
for i in range(75):
    y = torch.tanh(torch.sin(y) * 1.5).exp()
y.backward()
"""

PROGRAMS = {"S2": (EXAMPLES["S2"].program, "loss"), "MLP": (MLP, "loss"),
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
    print(f"graph extraction, median of {repeat} (ours = gradient_lab.graph.tracing.trace, "
          f"theirs = torchviz.make_dot):")
    for name, (code, output) in PROGRAMS.items():
        recorder = GraphRecorder(limits)
        with recorder:
            execution = run_program(code, program_bytes=limits.program_bytes,
                                    stdout_bytes=limits.stdout_bytes)
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


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

# In the page: put the program in the CodeMirror editor, press Run, and time from the moment
# /api/graph's response has arrived (Resource Timing) to the first paint after the page says it
# drew the run (body[data-runs] goes up; two animation frames later the frame is painted).
RENDER_JS = """async (code) => {
  const painted = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const ran = (before) => new Promise((resolve) => {
    const obs = new MutationObserver(() => {
      if (Number(document.body.dataset.runs ?? 0) > before) { obs.disconnect(); resolve(); }
    });
    obs.observe(document.body, { attributes: true, attributeFilter: ["data-runs"] });
  });
  document.querySelector(".CodeMirror").CodeMirror.setValue(code);
  performance.clearResourceTimings();
  const before = Number(document.body.dataset.runs ?? 0);
  const start = performance.now();
  const done = ran(before);
  document.getElementById("run").click();
  await done;
  const drawn = performance.now();
  await painted();
  const end = performance.now();
  const api = performance.getEntriesByType("resource")
    .filter((e) => e.name.endsWith("/api/graph")).pop();
  return { total: end - start, api: api.responseEnd - start, drawn: drawn - api.responseEnd,
           render: end - api.responseEnd, position: document.getElementById("position").innerText,
           nodes: document.querySelectorAll("#graph .textpoint").length };
}"""

# One click on Next, until the step is shown and painted.
STEP_JS = """async () => {
  const before = document.getElementById("position").innerText;
  const start = performance.now();
  document.getElementById("next").click();
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const end = performance.now();
  return { ms: end - start, changed: document.getElementById("position").innerText !== before };
}"""


def browser(repeat: int) -> bool:
    from playwright.sync_api import sync_playwright

    port = free_port()
    ok = True
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log, {"APP_SANDBOX_WORKERS": "2"})
        try:
            with sync_playwright() as playwright:
                chromium = playwright.chromium.launch(executable_path=CHROMIUM,
                                                      args=CHROMIUM_FLAGS)
                page = chromium.new_page(viewport={"width": 1280, "height": 800})
                page.set_default_timeout(60_000)
                # Offline, as in the browser tests: only the local server is asked.
                page.route("**/*", lambda route: route.continue_()
                           if route.request.url.startswith(f"http://127.0.0.1:{port}/")
                           else route.abort())
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0",
                                       timeout=60_000)
                for name, code in (("chain-300", CHAIN), ("loop-300", LOOP)):
                    ok &= _in_page(page, name, code, repeat)
                chromium.close()
        finally:
            stop(server)
    return ok


def _in_page(page: Any, name: str, code: str, repeat: int) -> bool:
    ok = True
    renders = [page.evaluate(RENDER_JS, code) for _ in range(repeat)]
    render = statistics.median(r["render"] for r in renders) / 1e3
    last = renders[-1]
    ok &= render <= TARGET_RENDER_S
    print(f"browser, {name} ({last['nodes']} labels drawn, "
          f"{last['position']}), median of {repeat} runs:")
    print(f"  layout + first render {render * 1e3:7.1f} ms  (after the API's "
          f"response; API {statistics.median(r['api'] for r in renders):.1f} ms)  "
          f"({'ok' if render <= TARGET_RENDER_S else 'OVER'} ≤ "
          f"{TARGET_RENDER_S * 1e3:.0f} ms)")
    print(f"  of which until the page said drawn (body[data-runs]) "
          f"{statistics.median(r['drawn'] for r in renders):.1f} ms")
    steps = []
    for _ in range(min(repeat * 4, 40)):
        result = page.evaluate(STEP_JS)
        if not result["changed"]:
            break
        steps.append(result["ms"] / 1e3)
    step = statistics.median(steps)
    ok &= step <= TARGET_STEP_S
    print(f"  one backward step     {step * 1e3:7.1f} ms  median of {len(steps)} "
          f"(max {max(steps) * 1e3:.1f})  "
          f"({'ok' if step <= TARGET_STEP_S else 'OVER'} ≤ "
          f"{TARGET_STEP_S * 1e3:.0f} ms)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--browser-runs", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in a child, where trace() runs
    ok = extraction(args.repeat)
    if not args.no_browser:
        ok &= browser(args.browser_runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
