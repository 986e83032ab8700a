"""Repeated blocks inside one forward, in headless Chromium: consecutive sibling modules of one
class and the same ops and shapes (an nn.Sequential of identical blocks) are one box marked ×N
that opens on a click, and backward steps through it; and step()'s heat maps on the projector.
The layout's rule is checked on the API's own graphs; the page at a laptop's 1440×900 and in
presentation mode at 1920×1080, both languages; screenshots in artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gradient_lab.jobs import graph_of
from gradient_lab.runner.limits import Limits
from tests.browser.pages import after, open_lab

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).parents[1] / "corpus/programs"
# d2l's nested blocks: rgnet = Sequential(block2(), Linear(4, 1)), block2 four block1()s.
NESTED = (CORPUS / "d2lzh__parameters_nested_blocks.py").read_text(encoding="utf-8")
RUN = "rgnet.0.block 0–block 3 ×4"

_HEAD = "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
_TAIL = "loss = model(torch.randn(2, 8)).sum()\nloss.backward()\n"
_BLOCKS = {
    "identical": "model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.ReLU()) "
                 "for _ in range(4)])\n",
    # an MLP as tutorials write it: in, hidden (Linear, Tanh) three times, out
    "flat": "model = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), "
            "nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n",
    "different": "model = nn.Sequential(nn.Sequential(nn.Linear(8, 8), nn.ReLU()), "
                 "nn.Sequential(nn.Linear(8, 8), nn.Tanh()), "
                 "nn.Sequential(nn.Linear(8, 8), nn.Sigmoid()))\n",
    "shapes": "model = nn.Sequential(nn.Sequential(nn.Linear(8, 8), nn.ReLU()), "
              "nn.Sequential(nn.Linear(8, 4), nn.ReLU()), "
              "nn.Sequential(nn.Linear(4, 2), nn.ReLU()))\n",
    # the same Linear(8, 8)s, but a tanh of the model's own between each: no box can hold them
    "between": "class MLP(nn.Module):\n"
               "    def __init__(self):\n"
               "        super().__init__()\n"
               "        self.hidden = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])\n"
               "    def forward(self, x):\n"
               "        for layer in self.hidden:\n"
               "            x = torch.tanh(layer(x))\n"
               "        return x\n"
               "model = MLP()\n",
}

_VIEW = """async ([code, open]) => {
  // The boxes the layout draws for the API's graph of code, with the module calls in `open` open.
  const { buildView } = await import('/static/graph/layout.js');
  const reply = await fetch('/api/graph', { method: 'POST', body: JSON.stringify({ code }),
                                            headers: { 'Content-Type': 'application/json' } });
  const graph = await reply.json();
  const view = buildView(graph, { expanded: new Set(open), rollUp: true });
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  return view.nodes.map((v) => v.kind === 'module'
    ? { label: v.label, module: v.module, members: v.members.map((id) => byId.get(id).module) }
    : { node: v.node.module });
}"""


def _view(page: Any, code: str, *open_: str) -> list[dict[str, Any]]:
    return page.evaluate(_VIEW, [code, list(open_)])


def _runs(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in view if "label" in v and re.search(r" ×\d", v["label"])]


@pytest.fixture()
def lab(open_page: Any, server: str) -> Any:
    page, problems = open_page(1440, 900)
    open_lab(page, server + "/")
    yield page
    assert not problems.items, problems.items


@pytest.mark.parametrize(("name", "label", "blocks"), [
    ("identical", "model.0–3 ×4", [f"model.{i}." for i in range(4)]),
    ("flat", "model.2–7 ×3", [f"model.{i}" for i in range(2, 8)]),  # Linear, Tanh three times
])
def test_consecutive_identical_blocks_are_one_box_marked_xn_until_opened(
        lab: Any, name: str, label: str, blocks: list[str]) -> None:
    code = _HEAD + _BLOCKS[name] + _TAIL
    assert [v["label"] for v in _view(lab, code) if "label" in v] == ["model"]  # folded, as ever
    opened = _view(lab, code, "model")
    runs = _runs(opened)
    assert [r["label"] for r in runs] == [label], opened
    inside = runs[0]["members"]
    assert all(any(m == b.rstrip(".") or m.startswith(b) for b in blocks) for m in inside), inside
    # every node of those blocks is in the box, none is drawn beside it
    assert not [v for v in opened if any(str(v.get("node")).startswith(b) for b in blocks)]
    everything = _view(lab, code, "model", runs[0]["module"])
    assert not _runs(everything) and len(everything) == len(opened) - 1 + len(inside)


def test_the_d2l_nested_blocks_roll_up_inside_their_sequential(lab: Any) -> None:
    runs = _runs(_view(lab, NESTED, "rgnet"))
    assert [r["label"] for r in runs] == [RUN]
    assert {m.split(".")[1] for m in runs[0]["members"]} == {"0"}  # rgnet.1 is drawn beside it
    assert {m.split(".")[2] for m in runs[0]["members"]} == {f"block {i}" for i in range(4)}


@pytest.mark.parametrize("name", ["different", "shapes", "between"])
def test_blocks_that_differ_in_class_or_shape_or_have_ops_between_them_are_drawn_each(
        lab: Any, name: str) -> None:
    code = _HEAD + _BLOCKS[name] + _TAIL
    opened = _view(lab, code, "model")
    assert not _runs(opened), opened
    assert not [v for v in opened if "label" in v], opened  # every node drawn


# --- On the page ------------------------------------------------------------------------------

_LIT = """() => {
  // The label of each box outlined as the step's active one (the stepper's orange ring).
  const gd = document.getElementById("graph");
  const labels = gd.data.at(-1);
  return (gd.layout.shapes ?? []).filter((s) => s.line?.color === "#f59f00").map((s) => {
    const [x, y] = [(s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2];
    const far = (i) => Math.hypot(labels.x[i] - x, labels.y[i] - y);
    let best = 0;
    labels.x.forEach((_, i) => { if (far(i) < far(best)) best = i; });
    return labels.text[best].replace(/<[^>]+>/g, " ");
  });
}"""


def _boxes(page: Any) -> list[str]:
    return [t for t in page.locator("#graph .textpoint text").all_text_contents() if t]


def _click_box(page: Any, label: str) -> None:
    before = len(_boxes(page))
    box = page.locator("#graph .textpoint", has_text=label).first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function(f"document.querySelectorAll('#graph .textpoint').length > {before}")


def _run_program(page: Any, program: str) -> None:
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    after(page, lambda: page.locator("#run").click())


SIZES = [(1440, 900, False), (1920, 1080, True)]  # a laptop; the projector, presentation mode


# Each language once and each size once: the boxes and the stepper are the same code in both
# languages; the layout of each size is checked in both by the graph page's own tests.
@pytest.mark.parametrize(("lang", "size"), [pytest.param("en", SIZES[0], id="en-1440x900"),
                                           pytest.param("zh-CN", SIZES[1],
                                                        id="zh-CN-1920x1080-present")])
def test_the_d2l_blocks_show_as_one_box_x4_that_backward_steps_through_and_a_click_opens(
        open_page: Any, server: str, artifacts: Path, lang: str,
        size: tuple[int, int, bool]) -> None:
    width, height, present = size
    page, problems = open_page(width, height)
    open_lab(page, server + f"/?lang={lang}" + ("&present=1" if present else ""))
    _run_program(page, NESTED)
    _click_box(page, "rgnet")
    boxes = _boxes(page)
    assert sum(RUN in b for b in boxes) == 1, boxes
    assert not any(b.startswith("rgnet.0.block") and RUN not in b for b in boxes), boxes
    name = f"graph-blocks-{lang}-{width}x{height}{'-present' * present}"
    page.mouse.move(0, 0)  # no hover text over the box
    page.screenshot(path=artifacts / f"{name}.png")
    # Backward, step by step: the box is lit for each step inside the blocks, named in the chain.
    graph = graph_of(NESTED, "cpu", Limits())
    module = {n.id: n.module or "" for n in graph.nodes}
    inside = [module[s.node].startswith("rgnet.0.") for s in graph.backward[0].steps]
    lit = []
    while page.locator("#next").is_enabled():
        page.locator("#next").click()
        lit.append(page.evaluate(_LIT))
        if lit[-1] and RUN in lit[-1][0]:
            assert RUN in page.locator("#chain .step-title").inner_text()
            if sum(bool(ring) and RUN in ring[0] for ring in lit) == 1:
                page.screenshot(path=artifacts / f"{name}-stepping.png")
    assert [bool(ring) and RUN in ring[0] for ring in lit] == inside
    assert sum(inside) > 4
    # Opened: every block drawn, each with its own parameters, and backward still steps.
    _click_box(page, RUN)
    opened = _boxes(page)
    assert not any(re.search(r" ×\d", b) for b in opened), opened  # (a shape reads [2×4])
    for i in range(4):
        assert sum(b.startswith(f"rgnet.0.block {i}.0.weight") for b in opened) == 1, opened
    page.locator("#first").click()
    for _ in range(len(inside)):
        page.locator("#next").click()
        assert len(page.evaluate(_LIT)) <= 1
    assert not page.locator("#next").is_enabled()
    page.mouse.move(0, 0)
    page.screenshot(path=artifacts / f"{name}-opened.png")
    assert not problems.items, problems.items
