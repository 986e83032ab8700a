"""The graph lab in a notebook, end to end: a notebook of three show() cells run by a real kernel
(nbclient, ipykernel), saved, turned into HTML by nbconvert and opened in headless Chromium with
the network blocked. Each output steps through backward in the order /api/graph reports for the
same program, and stepping one leaves the others as they were. Screenshots in artifacts/."""

from __future__ import annotations

import json
import re
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from gradient_lab.graph.examples import EXAMPLES
from tests.browser.pages import EN, ZH
from tests.browser.servers import ROOT

pytestmark = pytest.mark.browser

# An MLP step with Adam: Justin Johnson's two_layer_net_optim.py (pytorch-examples, MIT), as in
# tests/corpus/programs/course__jcj_two_layer_net_optim.py. Edits: a small net, two steps (so a
# zero_grad() has a gradient to clear), no print.
MLP = """import torch

N, D_in, H, D_out = 8, 4, 5, 2
x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
model = torch.nn.Sequential(
          torch.nn.Linear(D_in, H),
          torch.nn.ReLU(),
          torch.nn.Linear(H, D_out),
        )
loss_fn = torch.nn.MSELoss(reduction='sum')
learning_rate = 1e-4
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
for t in range(2):
  y_pred = model(x)
  loss = loss_fn(y_pred, y)
  optimizer.zero_grad()
  loss.backward()
  optimizer.step()
"""
# The tutorial's custom autograd.Function (S10), shown before its backward runs: the steps are
# what backward will do, and the learner's own backward still runs after.
FUNCTION = EXAMPLES["S10"].program.replace(
    "y.sum().backward()", "loss = y.sum()\nshow(loss, lang=\"zh-CN\")\nloss.backward()")

RECORD = "with gradient_lab.record() as run:\n{body}\nrun.show()\n"
CELLS = [
    "import gradient_lab\nfrom gradient_lab import show\nprint(gradient_lab.__file__)\n",
    RECORD.format(body=textwrap.indent(EXAMPLES["S2"].program, "    ")),  # the tutorial's first
    RECORD.format(body=textwrap.indent(MLP, "    ")),
    FUNCTION,
]
# The same programs as /api/graph runs them, the language each output speaks, and how far
# down the cell each program's lines are (a recorded cell's first line is its `with`).
PROGRAMS = [(EXAMPLES["S2"].program, EN, 1), (MLP, EN, 1),
            (FUNCTION.replace('show(loss, lang="zh-CN")\n', ""), ZH, 0)]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The notebook run by a kernel in the checkout, saved and read back, and its nbconvert HTML."""
    folder = tmp_path_factory.mktemp("notebook")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    # The kernel starts in the checkout, so it imports this gradient_lab (python -m puts the
    # working directory first on sys.path).
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    saved = folder / "graph-lab.ipynb"
    nbformat.write(nb, saved)
    read = nbformat.read(saved, as_version=4)
    body, _ = HTMLExporter().from_notebook_node(read)
    page = folder / "graph-lab.html"
    page.write_text(body, encoding="utf-8")
    return read, page


def _outputs(nb: Any) -> list[dict[str, str]]:
    return [o["data"] for cell in nb.cells for o in cell.outputs
            if "text/html" in o.get("data", {})]


def _fill(template: str, **params: object) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), template)


def _titles(graph: dict[str, Any], strings: dict[str, str], shift: int) -> list[str]:
    """The title of each step of the first backward call and the optimizer's calls after it, as
    the page writes them (with the lines `shift` further down)."""
    def name(node: dict[str, Any]) -> str:  # static/graph/chain.js's nodeName
        if node["name"]:
            return str(node["name"])
        return f"leaf {node['id']}" if node["kind"] == "leaf" else re.sub(
            r"Backward\d*$", "", node["op"])

    nodes = {n["id"]: n for n in graph["nodes"]}
    steps = graph["backward"][0]["steps"]
    events = [e for e in graph["optimizer_steps"] if e["after_call"] == 0]
    total = len(steps) + len(events)
    titles = [_fill(strings["graph.chain.title"], pos=i + 1, total=total, op=s["op"],
                    node=name(nodes[s["node"]])) for i, s in enumerate(steps)]
    for e in events:
        where = _fill(strings["graph.error.line"], line=e["line"] + shift)
        key = "graph.optim.step_title" if e["kind"] == "step" else "graph.optim.zero_title"
        titles.append(_fill(strings[key], optimizer=e["optimizer"], where=where))
    return titles


def _api_graph(server: str, code: str) -> dict[str, Any]:
    request = urllib.request.Request(f"{server}/api/graph", json.dumps({"code": code}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def test_the_notebooks_outputs_are_small_self_contained_and_from_this_checkout(
        notebook: tuple[Any, Path]) -> None:
    nb, _ = notebook
    assert nb.cells[0].outputs[0]["text"].startswith(str(ROOT / "gradient_lab"))
    outputs = _outputs(nb)
    assert len(outputs) == 3
    for data in outputs:
        assert len(data["text/html"].encode()) < 500_000
        assert not re.search(r"(src|href)\s*=\s*[\"']?https?:", data["text/html"])
        assert "AccumulateGrad" in data["text/plain"]  # the text a terminal shows
    # show() before backward left the learner's own backward to run as it would.
    printed = nb.cells[3].outputs[-1]["text"]
    assert re.fullmatch(r"tensor\(\[[01.,\s]+\]\)\n", printed), printed


# The drawing's viewBox has its element's proportions: nothing is stretched.
_FITS = """() => {
  const el = document.getElementById("graph");
  const [, , w, h] = el.querySelector("svg").getAttribute("viewBox").split(" ").map(Number);
  return Math.abs((w / h) / (el.clientWidth / el.clientHeight) - 1) < 0.01;
}"""


def _where(frames: list[Any]) -> list[tuple[str, str]]:
    return [(f.locator("#position").inner_text(), f.locator("#chain").inner_text())
            for f in frames]


def test_each_output_steps_through_backward_in_the_apis_order_on_its_own(
        notebook: tuple[Any, Path], server: str, browser: Any, artifacts: Path) -> None:
    _, page_file = notebook
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests: list[str] = []

    def offline(route: Any) -> None:
        if route.request.url == page_file.as_uri():
            route.continue_()
        else:  # nbconvert's page asks a CDN for its own scripts; nothing may answer
            requests.append(f"{route.request.frame.url} -> {route.request.url}")
            route.abort()

    context.route("**/*", offline)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    iframes = page.locator("iframe.gradient-lab")
    assert iframes.count() == 3
    frames = [iframes.nth(i).element_handle().content_frame() for i in range(3)]
    for frame in frames:
        frame.wait_for_function("document.body.dataset.runs === '1'", timeout=60_000)

    for i, (frame, (program, strings, shift)) in enumerate(zip(frames, PROGRAMS, strict=True)):
        expected = _titles(_api_graph(server, program), strings, shift)
        before = _where(frames)
        assert before[i][0] == _fill(strings["graph.step.position"], pos=0, total=len(expected))
        seen = []
        while frame.locator("#next").is_enabled():
            frame.locator("#next").click()
            # The title less the module call it lies in (".within"), which the API's steps
            # do not name: the step, its op and its node are what must match.
            seen.append(frame.locator("#chain .step-title").first.evaluate(
                "el => [...el.childNodes].filter(n => !n.classList?.contains('within'))"
                ".map(n => n.textContent).join('')"))
        assert seen == expected
        after = _where(frames)
        assert [w for j, w in enumerate(after) if j != i] == [
            w for j, w in enumerate(before) if j != i]  # the others are as they were
        iframes.nth(i).screenshot(path=artifacts / f"notebook-output-{i + 1}-last-step.png")

    s2, mlp, function = frames
    assert s2.locator('#leafgrads dd[data-leaf="a"]').inner_text() == "42"
    assert s2.locator('#leafgrads dd[data-leaf="b"]').inner_text() == "28"
    s2.locator("#first").click()
    for _ in range(3):
        s2.locator("#next").click()
    chain = s2.locator("#chain").inner_text()
    assert "14 · 3 = 42" in chain and "14 · 2 = 28" in chain
    iframes.nth(0).screenshot(path=artifacts / "notebook-output-1-step-3.png")
    # A module call opens on a click, inside its own output.
    mlp.locator("#first").click()
    mlp.locator(".textpoint", has_text="model").first.click()
    mlp.wait_for_function("document.querySelectorAll('#graph .textpoint').length > 5")
    iframes.nth(1).screenshot(path=artifacts / "notebook-output-2-model-open.png")
    # The rehearsal's x.grad is what the learner's own backward then printed.
    printed = notebook[0].cells[3].outputs[-1]["text"]
    assert function.locator('#leafgrads dd[data-leaf="x"]').inner_text() == "[{}]".format(
        ", ".join(v.rstrip(".") for v in re.findall(r"[\d.]+", printed)))
    assert function.get_attribute("html", "lang") == "zh-CN"
    assert ZH["notebook.rehearsal"].split("{")[0] in function.locator("#notebook-note").inner_text()
    for i in range(3):  # each cell as the saved notebook shows it: its code, then its output
        iframes.nth(i).scroll_into_view_if_needed()
        # Chromium paints a cross-origin frame that comes on screen a frame or two later.
        frames[i].evaluate("new Promise((r) => requestAnimationFrame(() => "
                           "requestAnimationFrame(r)))")
        page.screenshot(path=artifacts / f"notebook-nbconvert-cell-{i + 1}-1280x900.png")
    # The notebook's pane narrows: the drawing keeps its proportions at the new size.
    # (Chromium runs an off-screen cross-origin frame's rendering steps once it is on screen.)
    iframes.nth(0).scroll_into_view_if_needed()
    page.set_viewport_size({"width": 760, "height": 900})
    s2.wait_for_function(_FITS, timeout=10_000)
    iframes.nth(0).screenshot(path=artifacts / "notebook-output-1-narrowed.png")
    page.set_viewport_size({"width": 1280, "height": 900})
    s2.wait_for_function(_FITS, timeout=10_000)
    context.close()
    assert errors == []
    assert not [r for r in requests if not r.startswith(page_file.as_uri())], requests
