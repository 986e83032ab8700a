"""The graph lab on training loops, in headless Chromium: each step shows a parameter as that
iteration used it and as each step() left it (the graph's label, the inspector and the step()
table agree with the same loop in plain torch); module calls numbered in the program's order.
Both languages, at a laptop's 1440×900 and a projector's 1920×1080; screenshots in artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.browser.pages import after, open_lab

pytestmark = pytest.mark.browser

SIZES = [(1440, 900), (1920, 1080)]
LANGS = ["en", "zh-CN"]

_SGD = """import torch

w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.5)
for i in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
"""


def _plain_sgd() -> list[tuple[list[float], list[float]]]:
    """w before and after each step(), in plain torch."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.5)
    seen = []
    for _ in range(3):
        opt.zero_grad()
        (w ** 2).sum().backward()
        before = w.detach().clone().tolist()
        opt.step()
        seen.append((before, w.detach().clone().tolist()))
    return seen


_NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _numbers(text: str) -> list[float]:
    return [float(x.replace("−", "-")) for x in _NUMBER.findall(text)]


def _run_program(page: Any, program: str) -> None:
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    after(page, lambda: page.locator("#run").click())


def _label(page: Any, start: str) -> str:
    labels = page.locator("#graph .textpoint text").all_text_contents()
    return next(t for t in labels if t.startswith(start))


def _click_node(page: Any, label: str) -> None:
    box = page.locator("#graph .textpoint", has_text=label).first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _inspector_value(page: Any) -> list[float]:
    return _tensor(page.locator("#inspector dl > dd").nth(1))  # after the kind


def _tensor(cell: Any) -> list[float]:
    """The numbers of a tensor as the page shows it: its table (or text), not its shape."""
    table = cell.locator("table, pre")
    return _numbers(table.first.inner_text() if table.count() else cell.inner_text())


# x does not require grad: a constant, stepped on in place after each iteration's step().
_STEPPED_INPUT = """import torch

x = torch.tensor([1.0, 2.0])
w = torch.tensor([0.5, -0.5], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for i in range(3):
    opt.zero_grad()
    loss = (w * x).sum()
    loss.backward()
    opt.step()
    x.mul_(3)
"""


def test_each_iteration_shows_a_constant_changed_in_place_as_its_forward_used_it(
        open_page: Any, server: str) -> None:
    page, problems = open_page(*SIZES[0])
    open_lab(page, server + "/?lang=en")
    _run_program(page, _STEPPED_INPUT)
    x = torch.tensor([1.0, 2.0])
    for call in range(3):  # plain torch: x as each iteration's w * x used it
        page.select_option("#call", str(call))
        assert _numbers(_label(page, "x = ")) == pytest.approx(x.tolist(), abs=1e-3), call
        _click_node(page, "x = ")
        page.locator("#inspector").wait_for(state="visible")
        assert _inspector_value(page) == pytest.approx(x.tolist(), abs=1e-6), call
        x.mul_(3)
    assert not problems.items, problems.items


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_each_iteration_shows_w_as_its_forward_used_it_and_as_step_left_it(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _SGD)
    plain = _plain_sgd()
    backward = 3  # Sum, Pow, AccumulateGrad; then step() and the next zero_grad()
    for call, (before, after_step) in enumerate(plain):
        page.select_option("#call", str(call))
        assert _numbers(_label(page, "w = ")) == pytest.approx(before, abs=1e-3), call
        _click_node(page, "w = ")
        page.locator("#inspector").wait_for(state="visible")
        assert _inspector_value(page) == pytest.approx(before, abs=1e-6), call
        for _ in range(backward):
            page.locator("#next").click()
        # the chain rule's local derivative reads this iteration's w: ∂(w²)/∂w = 2·w
        chain = page.locator("#chain").inner_text()
        assert "AccumulateGrad" in chain
        page.locator("#next").click()  # optimizer.step()
        row = page.locator('#chain tr[data-param="w"] > td')
        assert _tensor(row.nth(0)) == pytest.approx(before, abs=1e-3)
        assert _tensor(row.nth(3)) == pytest.approx(after_step, abs=1e-3)
        # the node now holds what step() left
        assert _numbers(_label(page, "w = ")) == pytest.approx(after_step, abs=1e-3), call
        assert _inspector_value(page) == pytest.approx(after_step, abs=1e-6), call
        if call == 0:
            page.screenshot(path=artifacts / f"graph-loop-step-{lang}-{size[0]}x{size[1]}.png")
    assert not problems.items, problems.items


def test_the_chain_rule_at_each_iteration_puts_in_that_iterations_value(
        open_page: Any, server: str) -> None:
    page, _ = open_page(1440, 900)
    open_lab(page, server + "/")
    _run_program(page, _SGD)
    for call, (before, _) in enumerate(_plain_sgd()):
        page.select_option("#call", str(call))
        page.locator("#next").click()
        page.locator("#next").click()  # Pow: ∂Pow/∂w = 2 · w
        chain = page.locator("#chain").inner_text()
        local = re.search(r"2 · \(?\[([^\]]*)\]", chain)
        assert local, chain
        assert _numbers(local.group(1)) == pytest.approx(before, abs=1e-3), (call, chain)


# --- Module calls numbered as called ---------------------------------------------------------

_MLP = """import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
loss_fn = torch.nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(8, 2), torch.randn(8, 1)
for epoch in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
"""

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


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_each_backward_call_lights_the_module_call_it_starts_from_numbered_as_called(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _MLP)
    one = " | ".join(_boxes(page))  # a loop: one iteration, one call of each module
    assert "loss_fn" in one and "model" in one and "#" not in one, one
    page.locator("#all-iterations").check()
    labels = " | ".join(page.locator("#graph .textpoint text").all_text_contents())
    for n in (1, 2, 3):
        assert f"loss_fn #{n}" in labels and f"model #{n}" in labels, labels
    for call in range(3):
        page.select_option("#call", str(call))
        lit = page.evaluate(_LIT)
        assert len(lit) == 1 and f"loss_fn #{call + 1}" in lit[0], (call, lit)
        page.locator("#next").click()
        assert f"loss_fn #{call + 1}" in page.locator("#chain .step-title").inner_text()  # stepper
    page.screenshot(path=artifacts / f"graph-module-numbers-{lang}-{size[0]}x{size[1]}.png")
    assert not problems.items, problems.items


# --- Predict first means first --------------------------------------------------------------

_BLURRED = "el => getComputedStyle(el).filter.includes('blur')"


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_an_open_question_hides_the_output_and_the_comments_that_answer_it(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}#ex=S2&predict=1")  # its comments: # tensor([42.])
    stdout, answer = page.locator("#stdout"), page.locator(".cm-result", has_text="42")
    assert "42" in stdout.inner_text() and answer.count() == 1
    assert not stdout.evaluate(_BLURRED) and not answer.evaluate(_BLURRED)
    comment = page.locator(".cm-comment", has_text="gradients").first  # states no result
    while not page.locator("#ask form").count():
        page.locator("#next").click()
    assert stdout.evaluate(_BLURRED) and answer.evaluate(_BLURRED)
    if comment.count():
        assert not comment.evaluate(_BLURRED)
    page.screenshot(path=artifacts / f"graph-predict-hidden-{lang}-{size[0]}x{size[1]}.png")
    page.locator("#ask form button[type=button]").click()  # skip: the answer is shown
    assert not stdout.evaluate(_BLURRED) and not answer.evaluate(_BLURRED)
    assert not problems.items, problems.items


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


_ACTIVE_BOX = """() => {
  // The screen box of the node the stepper rings, from the figure's own axes.
  const gd = document.getElementById("graph");
  const s = (gd.layout.shapes ?? []).find((s) => s.line?.color === "#f59f00");
  if (!s) return null;
  const r = gd.getBoundingClientRect(), xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const [x0, x1] = [xa.l2p(s.x0), xa.l2p(s.x1)].sort((a, b) => a - b);
  const [y0, y1] = [ya.l2p(s.y0), ya.l2p(s.y1)].sort((a, b) => a - b);
  return { x: r.left + x0, y: r.top + y0, width: x1 - x0, height: y1 - y0 };
}"""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_class_panel_never_covers_the_node_the_step_is_on(
        open_page: Any, server: str, artifacts: Path, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + "/")
    _run_program(page, _SGD)
    page.locator("#room-toggle").click()  # the class panel opens over the page's right side
    panel = page.locator("#room-panel")
    panel.wait_for(state="visible")
    for step in range(4):
        page.wait_for_timeout(300)  # the pan is a relayout after the draw
        box = page.evaluate(_ACTIVE_BOX)
        assert box is not None and not _overlaps(box, panel.bounding_box()), (step, box)
        page.locator("#next").click()
    page.screenshot(path=artifacts / f"graph-class-panel-clear-{size[0]}x{size[1]}.png")
    assert not problems.items, problems.items


# --- Export SVG ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_export_svg_is_the_graph_as_drawn_with_its_font_embedded(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _SGD)
    page.locator("#next").click()
    with page.expect_download() as download:
        page.locator("#export-svg").click()
    assert download.value.suggested_filename == "gradient-lab-graph.svg"
    path = artifacts / f"graph-export-{lang}-{size[0]}x{size[1]}.svg"
    download.value.save_as(path)
    svg = path.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<svg") and svg.count("@font-face") == 2
    assert "data:font/woff;base64," in svg or "data:application/font-woff;base64," in svg
    assert "Gradient Lab Sans" in svg and "Open Sans" not in svg
    for text in ("w = [1, -2]", "Pow", "Sum"):
        assert text in svg, text
    # The file drawn by the browser on its own, as a slide would show it.
    viewer = page.context.new_page()
    viewer.set_content(f'<body style="margin:0">{svg}</body>')
    viewer.wait_for_timeout(300)  # the embedded fonts load
    viewer.screenshot(path=artifacts / f"graph-export-{lang}-{size[0]}x{size[1]}.png")
    viewer.close()
    assert not problems.items, problems.items


# --- A loop is one iteration --------------------------------------------------------------------

def _boxes(page: Any) -> list[str]:
    return [t for t in page.locator("#graph .textpoint text").all_text_contents() if t]


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_a_loop_draws_one_iteration_and_the_slider_replays_each(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _SGD)
    boxes = _boxes(page)
    assert sum(b.startswith("Pow") for b in boxes) == 1 and len(boxes) == 4, boxes  # w, 2, Pow, Sum
    slider = page.locator("#iteration")
    assert slider.is_visible() and slider.get_attribute("max") == "3"
    plain = _plain_sgd()
    page.locator("#next").click()
    page.locator("#next").click()  # Pow, in each iteration
    for i, (before, _) in enumerate(plain):
        slider.fill(str(i + 1))
        assert page.locator("#call").input_value() == str(i)
        assert re.search(r"\b2 / \d", page.locator("#position").inner_text())  # the same moment
        assert _numbers(_label(page, "w = ")) == pytest.approx(before, abs=1e-3), i
        local = re.search(r"2 · \(?\[([^\]]*)\]", page.locator("#chain").inner_text())
        assert local and _numbers(local.group(1)) == pytest.approx(before, abs=1e-3), i
        assert len(_boxes(page)) == 4
    page.screenshot(path=artifacts / f"graph-loop-one-iteration-{lang}-{size[0]}x{size[1]}.png")
    page.locator("#all-iterations").check()
    assert sum(b.startswith("Pow") for b in _boxes(page)) == 3
    page.locator("#all-iterations").uncheck()
    assert sum(b.startswith("Pow") for b in _boxes(page)) == 1
    # Play goes through the iterations to the last.
    slider.fill("1")
    page.locator("#play-iterations").click()
    page.wait_for_function("document.getElementById('call').value === '2'", timeout=10_000)
    assert not problems.items, problems.items


def test_the_tutorials_polynomial_loop_of_20_traced_iterations_draws_one(
        open_page: Any, server: str, artifacts: Path) -> None:
    code = (Path(__file__).parents[1] / "corpus/programs/pt__tut_polynomial_autograd.py").read_text(
        encoding="utf-8")
    page, problems = open_page(1920, 1080)
    open_lab(page, server + "/")
    _run_program(page, code)
    assert page.locator("#iteration").get_attribute("max") == "20"
    boxes = _boxes(page)
    for name in ("a = ", "b = ", "c = ", "d = "):
        assert sum(b.startswith(name) for b in boxes) == 1, boxes
    assert len(boxes) < 25, boxes  # one iteration, not twenty
    page.screenshot(path=artifacts / "graph-polynomial-one-iteration-1920x1080.png")
    page.locator("#all-iterations").check()
    assert len(_boxes(page)) > 200
    assert not problems.items, problems.items


# --- step() you can read ----------------------------------------------------------------------

def _plain_adam_first_step() -> dict[str, tuple[list[float], list[float]]]:
    """Each parameter of _MLP before and after its first Adam step, in plain torch."""
    space: dict[str, Any] = {}
    exec(_MLP.replace("range(3)", "range(0)"), space)  # noqa: S102 - our own program
    model, optimizer = space["model"], space["optimizer"]
    before = {k: p.detach().clone() for k, p in model.named_parameters()}
    optimizer.zero_grad()
    space["loss_fn"](model(space["x"]), space["y"]).backward()
    optimizer.step()
    return {f"model.{k}": (before[k].flatten().tolist(), p.detach().flatten().tolist())
            for k, p in model.named_parameters()}


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_adams_step_shows_a_weight_as_heat_maps_with_the_largest_change_named(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _MLP)
    while not page.locator("#chain .optim-table").count():
        page.locator("#next").click()
    row = page.locator('#chain tr[data-param="model.0.weight"]')
    grids = row.locator(".heat-grid")
    assert grids.count() == 4  # before, .grad, update, after
    before, after = (_numbers(" ".join(grids.nth(i).locator("span").evaluate_all(
        "cells => cells.map((c) => c.title)"))) for i in (0, 3))
    plain = _plain_adam_first_step()["model.0.weight"]
    assert before == pytest.approx(plain[0], abs=1e-3)
    assert after == pytest.approx(plain[1], abs=1e-3)
    changes = [abs(a - b) for a, b in zip(plain[1], plain[0], strict=True)]
    named = re.search(r"model\.0\.weight\[(\d), (\d)\]", row.locator(".optim-largest").inner_text())
    assert named, row.locator(".optim-largest").inner_text()
    # Adam moves every element by about lr: the one named is (one of) the largest
    named_change = changes[int(named.group(1)) * 2 + int(named.group(2))]
    assert named_change == pytest.approx(max(changes), abs=1e-6)
    # Adam's state the same way, and the panel fits the page without a side-scroller
    assert page.locator("#chain .optim-rule .heat-grid").count() >= 2
    scroll = page.locator("#chain .optim-scroll").first
    assert scroll.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    shot = artifacts / f"graph-step-heat-{lang}-{size[0]}x{size[1]}.png"
    page.locator("#chain").screenshot(path=shot)
    row.locator("details summary").click()  # the numbers, a click away
    assert row.locator("details table.matrix").count() == 4
    assert not problems.items, problems.items


_REPEATED = """import torch

torch.manual_seed(0)
layer = torch.nn.Linear(3, 3)
h = torch.randn(2, 3)
for _ in range(4):  # one layer called four times in one forward, as an unrolled RNN does
    h = torch.tanh(layer(h))
loss = h.sum()
loss.backward()
"""


@pytest.mark.parametrize(("lang", "size"), [("en", (1440, 900)), ("zh-CN", (1920, 1080))])
def test_one_module_called_four_times_in_a_forward_is_one_box_marked_x4(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int]) -> None:
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _REPEATED)
    boxes = _boxes(page)
    assert sum("layer ×4" in b for b in boxes) == 1, boxes
    assert not any("layer #" in b or b.startswith("layer.weight") for b in boxes), boxes
    page.screenshot(path=artifacts / f"graph-rolled-up-{lang}-{size[0]}x{size[1]}.png")
    _click_node(page, "layer ×4")  # opens: each call's ops, the parameters feeding them
    page.wait_for_function("() => document.querySelectorAll('#graph .textpoint').length > 6")
    opened = _boxes(page)
    assert not any("×4" in b for b in opened), opened
    assert sum(b.startswith("layer.weight") for b in opened) == 1, opened
    assert not problems.items, problems.items


# A real teaching program's step(): 刘二大人's multi-feature model, Linear(8, 6) first (SGD).
_LIUER = Path(__file__).parents[1] / "corpus/programs/zh__liuer_multi_feature.py"
_CELLS = """grid => [...grid.querySelectorAll('span')].map((c) => c.getBoundingClientRect())
  .map((r) => Math.min(r.width, r.height))"""


@pytest.mark.parametrize(("program", "param", "lang"), [
    ("liuer", "model.linear1.weight", "zh-CN"), ("adam", "model.0.weight", "en")])
def test_step_heat_maps_are_readable_on_the_projector(
        open_page: Any, server: str, artifacts: Path, lang: str, program: str,
        param: str) -> None:
    page, problems = open_page(1920, 1080)
    open_lab(page, server + f"/?lang={lang}&present=1")
    _run_program(page, _LIUER.read_text(encoding="utf-8") if program == "liuer" else _MLP)
    while not page.locator("#chain .optim-table").count():
        page.locator("#next").click()
    row = page.locator(f'#chain tr[data-param="{param}"]')
    row.scroll_into_view_if_needed()
    page.mouse.move(0, 0)
    page.screenshot(path=artifacts / f"graph-step-heat-{program}-{lang}-1920x1080-present.png")
    page.locator("#chain").screenshot(
        path=artifacts / f"graph-step-heat-{program}-{lang}-1920x1080-present-chain.png")
    grids = row.locator(".heat-grid")
    assert grids.count() == 4  # before, .grad, update, after
    for i in range(4):
        cells = grids.nth(i).evaluate(_CELLS)
        assert len(cells) > 3 and min(cells) >= 14, (i, min(cells))  # cells a room can see
    px = "el => parseFloat(getComputedStyle(el).fontSize)"
    assert row.locator("figcaption").first.evaluate(px) >= 16
    largest = row.locator(".optim-largest")
    assert largest.evaluate(px) >= 20
    # the largest change shows, however small: before → after told apart
    *_, moved, before, after_step = _numbers(largest.inner_text())
    assert moved != 0 and before != after_step, largest.inner_text()
    scroll = page.locator("#chain .optim-scroll").first
    assert scroll.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert not problems.items, problems.items


# A real layer's step(): a Linear(8, 16) weight (128 values, each a cell) and an MNIST-sized
# Linear(784, 10) one (7,840 values, drawn as 10×61 block means) and its transpose, a 784×10
# one (61×10), under Adam.
_LAYER = """import torch

torch.manual_seed(0)
model = torch.nn.Linear({n_in}, {n_out})
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(16, {n_in}), torch.randn(16, {n_out})
for epoch in range(2):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""
_LAYERS = {"linear-8-16": (8, 16), "mnist-784-10": (784, 10), "tall-10-784": (10, 784)}


def _plain_layer_step(n_in: int, n_out: int) -> tuple[torch.Tensor, torch.Tensor]:
    """_LAYER's weight before and after its first step, in plain torch."""
    space: dict[str, Any] = {}
    exec(_LAYER.format(n_in=n_in, n_out=n_out).replace("range(2)", "range(0)"), space)  # noqa: S102
    model, optimizer = space["model"], space["optimizer"]
    before = model.weight.detach().clone()
    torch.nn.functional.mse_loss(model(space["x"]), space["y"]).backward()
    optimizer.step()
    return before, model.weight.detach().clone()


# Each layer's shape once, and each language at each size once: what a shape changes is the
# heat maps' cells; what a language and a size change is the text around them.
@pytest.mark.parametrize(("layer", "lang", "size", "present"), [
    ("linear-8-16", "en", (1440, 900), False), ("mnist-784-10", "zh-CN", (1440, 900), False),
    ("tall-10-784", "en", (1920, 1080), True), ("mnist-784-10", "zh-CN", (1920, 1080), True)])
def test_a_real_layers_step_draws_as_heat_maps(
        open_page: Any, server: str, artifacts: Path, lang: str, size: tuple[int, int],
        present: bool, layer: str) -> None:
    n_in, n_out = _LAYERS[layer]
    page, problems = open_page(*size)
    open_lab(page, server + f"/?lang={lang}" + ("&present=1" if present else ""))
    _run_program(page, _LAYER.format(n_in=n_in, n_out=n_out))
    while not page.locator("#chain .optim-table").count():
        page.locator("#next").click()
    row = page.locator('#chain tr[data-param="model.weight"]')
    row.scroll_into_view_if_needed()
    page.mouse.move(0, 0)
    mode = "present" if present else "page"
    page.screenshot(path=artifacts / f"graph-step-{layer}-{lang}-{size[0]}x{size[1]}-{mode}.png")
    page.locator("#chain").screenshot(
        path=artifacts / f"graph-step-{layer}-{lang}-{size[0]}x{size[1]}-{mode}-chain.png")
    grids = row.locator(".heat-grid")
    assert grids.count() == 4  # before, .grad, update, after
    titles = [_numbers(" ".join(grids.nth(i).locator("span").evaluate_all(
        "cells => cells.map((c) => c.title)"))) for i in (0, 3)]
    before, after_step = _plain_layer_step(n_in, n_out)
    if layer == "linear-8-16":  # every value a cell, each plain torch's
        assert titles[0] == pytest.approx(before.flatten().tolist(), abs=1e-3)
        assert titles[1] == pytest.approx(after_step.flatten().tolist(), abs=1e-3)
        assert not row.locator(".optim-blocks").count()
    else:  # each cell the mean of 13 values in a row (a column), and the caption says so
        bh, bw = (1, 13) if n_out == 10 else (13, 1)
        means = [before[i:i + bh, j:j + bw].mean().item() for i in range(0, n_out, bh)
                 for j in range(0, n_in, bw)]
        assert titles[0] == pytest.approx(means, abs=1e-3) and len(means) == 610
        caption = row.locator(".optim-blocks").inner_text()
        assert f"{n_out}×{n_in}" in caption and f"{bh}×{bw}" in caption, caption
        height = grids.nth(0).evaluate("el => el.getBoundingClientRect().height")
        assert 40 < height < size[1] / 2, height  # a strip you can see, not a page of it
    # the largest change is named exactly, read from every value in the child
    change = (after_step - before).abs()
    k = int(change.argmax())
    at = f"model.weight[{k // n_in}, {k % n_in}]"
    assert at in row.locator(".optim-largest").inner_text()
    assert page.locator("#chain .optim-rule .heat-grid").count() >= 2  # exp_avg, exp_avg_sq
    scroll = page.locator("#chain .optim-scroll").first
    assert scroll.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    row.locator("details summary").click()  # the numbers, a click away
    assert row.locator("details .tensor").count() == 4
    assert not problems.items, problems.items
