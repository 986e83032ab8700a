"""The graph lab in headless Chromium: S2 stepped to a.grad = 42 and b.grad = 28, S6's error
next to the code, the Chinese page, a 300-node graph. All offline; screenshots in artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import EN, ZH, after, open_lab

pytestmark = pytest.mark.browser

def _load(page: Any, lesson: str) -> None:
    after(page, lambda: page.select_option("#examples", lesson))


def _node_labels(page: Any) -> str:
    return " | ".join(t or "" for t in page.locator("#graph .textpoint text").all_text_contents())


def _step_to_the_end(page: Any) -> dict[int, str]:
    """Press Next until it is disabled; the chain-rule text seen at each step."""
    chain = {}
    while page.locator("#next").is_enabled():
        page.locator("#next").click()
        position = page.locator("#position").inner_text()
        chain[int(re.findall(r"\d+", position)[0])] = page.locator("#chain").inner_text()
    return chain


def _leaf_grad(page: Any, name: str) -> str:
    return str(page.locator(f'#leafgrads dd[data-leaf="{name}"]').inner_text())


def test_s2_steps_backward_to_42_and_28_and_shows_the_chain_rule(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S2")
    labels = _node_labels(page)
    for text in ("a = 2", "b = 3", "c = 6", "d = 7", "loss = 49"):
        assert text in labels, labels
    assert "Step 0 / 5" in page.locator("#position").inner_text()

    chain = _step_to_the_end(page)
    assert sorted(chain) == [1, 2, 3, 4, 5]
    assert "AddBackward0" in chain[2]
    assert "∂loss/∂c = ∂loss/∂d · ∂d/∂c = 14 · 1 = 14" in chain[2]
    assert "14 · 3 = 42" in chain[3] and "14 · 2 = 28" in chain[3]
    assert _leaf_grad(page, "a") == "42"
    assert _leaf_grad(page, "b") == "28"
    assert "after this call" in page.locator("#leafgrads").inner_text()
    page.screenshot(path=artifacts / "graph-s2-en-1280x720.png")

    # The keyboard steps too, once focus is out of the editor.
    page.locator("#run").focus()
    page.keyboard.press("Home")
    assert "Step 0 / 5" in page.locator("#position").inner_text()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert "Step 2 / 5" in page.locator("#position").inner_text()
    assert "14 · 1 = 14" in page.locator("#chain").inner_text()
    page.keyboard.press("End")
    assert "Step 5 / 5" in page.locator("#position").inner_text()

    # The inspector opens on a click on a node.
    _click_node(page, "c = 6")
    inspector = page.locator("#inspector")
    inspector.wait_for(state="visible")
    assert "MulBackward0" in inspector.inner_text()
    page.screenshot(path=artifacts / "graph-s2-inspector-1280x720.png")


def test_s6_shows_the_error_and_hint_next_to_the_code_with_its_line_marked(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S6")
    error = page.locator("#error")
    assert error.is_visible()
    text = error.inner_text()
    assert "does not require grad" in text
    assert "line 9" in text
    assert "Create the leaf with requires_grad=True" in text  # the hint, in the page's language
    marked = page.locator(".CodeMirror-code > div:has(.cm-error-line) .CodeMirror-linenumber")
    assert marked.inner_text() == "9"
    # What the program built before the error is still drawn, the cut included.
    labels = _node_labels(page)
    assert "a = 1" in labels and "b = 2" in labels and "c = 2" in labels
    page.screenshot(path=artifacts / "graph-s6-error-1280x720.png")


def test_the_chinese_page_steps_s2_and_keeps_the_program_in_the_link(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S6")
    with page.expect_navigation():
        page.locator("header .lang").click()
    page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0", timeout=60_000)
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("#run").inner_text() == "运行"
    assert page.locator("#examples").input_value() == "S6"  # the link kept the example
    assert ZH["hint.no_grad_fn"] in page.locator("#error").inner_text()
    page.screenshot(path=artifacts / "graph-s6-zh-1280x720.png")

    _load(page, "S2")
    chain = _step_to_the_end(page)
    assert "第 2 步" in chain[2] and "14 · 1 = 14" in chain[2]
    assert _leaf_grad(page, "a") == "42"
    assert _leaf_grad(page, "b") == "28"
    assert "本次调用之后" in page.locator("#leafgrads").inner_text()
    page.screenshot(path=artifacts / "graph-s2-zh-1280x720.png")


def test_the_page_works_on_a_phone(open_page: Any, server: str, artifacts: Path) -> None:
    page, _ = open_page(390, 844)
    open_lab(page, server + "/")
    _load(page, "S2")
    page.locator("#last").click()
    assert _leaf_grad(page, "a") == "42"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways: {width}px wide"
    page.screenshot(path=artifacts / "graph-s2-en-390x844.png", full_page=True)


def test_predict_mode_asks_before_it_reveals(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S2")
    page.locator("#predict").check()
    page.locator("#next").click()
    page.locator("#ask input").fill("14")
    page.locator("#ask button[type=submit]").click()
    assert "Right" in page.locator("#ask").inner_text()
    assert "Step 1 / 5" in page.locator("#position").inner_text()
    page.locator("#next").click()
    page.locator("#ask input").fill("7")
    page.keyboard.press("Enter")
    assert "Not quite" in page.locator("#ask").inner_text()
    assert "14" in page.locator("#ask").inner_text()


def test_a_300_node_graph_is_drawn_and_can_be_decluttered(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    program = ("import torch\n\nx = torch.tensor([1.0], requires_grad=True)\ny = x\n"
               "for i in range(100):\n    y = y * 1.01 + 0.1\nloss = y.sum()\nloss.backward()\n")
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    page.locator(".CodeMirror textarea").focus()
    after(page, lambda: page.keyboard.press("Control+Enter"))  # runs from the editor
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    points = page.locator("#graph .textpoint").count()
    assert points >= 300, points
    page.screenshot(path=artifacts / "graph-300-nodes-1280x720.png")
    page.locator("#simple").check()
    assert page.locator("#graph .textpoint").count() < points
    page.locator("#last").click()
    assert _leaf_grad(page, "x") != ""
    page.screenshot(path=artifacts / "graph-300-nodes-simple-1280x720.png")


def test_a_second_backward_adds_to_the_leaf_gradients(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S3")
    page.select_option("#call", "1")
    page.locator("#last").click()
    assert _leaf_grad(page, "a") == "84"
    assert _leaf_grad(page, "b") == "56"
    page.locator("#back").click()
    assert "42 + 42 = 84" in page.locator("#chain").inner_text() or \
        "a.grad += 42, so a.grad = 84" in page.locator("#chain").inner_text()


def test_the_first_nan_is_marked_with_a_note(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _load(page, "S21")
    assert "NaN or inf first appears in the value of y" in page.locator("#notes").inner_text()


def test_a_module_call_is_one_box_that_opens_on_click(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    program = ("import torch\nimport torch.nn as nn\n\n"
               "model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
               "x = torch.randn(5, 3)\nloss = model(x).pow(2).mean()\nloss.backward()\n")
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    after(page, lambda: page.locator("#run").click())
    labels = _node_labels(page)
    assert "model" in labels and "Addmm" not in labels, labels
    _click_node(page, "model")
    page.wait_for_function("[...document.querySelectorAll('#graph .textpoint')]"
                           ".some((t) => t.textContent.includes('Addmm'))")
    assert "Relu" in _node_labels(page)
    page.screenshot(path=artifacts / "graph-module-open-1280x720.png")


# --- The chain rule written out ------------------------------------------------------------------

def _click_node(page: Any, label: str) -> None:
    """Click the middle of the graph's node whose label holds `label`, as a learner would."""
    _click_centre(page, page.locator("#graph .textpoint", has_text=label).first)


def _click_centre(page: Any, locator: Any) -> None:
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _run_program(page: Any, program: str) -> None:
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    after(page, lambda: page.locator("#run").click())


def test_each_step_writes_its_local_derivative_with_the_numbers_put_in(
        open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/#ex=S2")
    chain = _step_to_the_end(page)
    # The first step is the local derivative itself: ∂loss/∂loss = 1 is not multiplied in.
    assert "∂loss/∂d = 2 · d = 2 · 7 = 14" in chain[1]
    assert "∂loss/∂loss ·" not in chain[1] and "1 · 14" not in chain[1]
    assert "loss = d²" in chain[1]  # what the op computed going forward
    assert "∂d/∂c = 1" in chain[2]
    assert "∂c/∂a = b = 3" in chain[3] and "∂c/∂b = a = 2" in chain[3]


def test_a_node_fed_by_two_paths_shows_the_sum_of_what_each_sent(
        open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _run_program(page, "import torch\n\nx = torch.tensor(2.0, requires_grad=True)\n"
                       "d = x * 4\nloss = d ** 2 + 48 * d\nloss.backward()\n")
    chain = _step_to_the_end(page)
    text = "\n".join(chain.values())
    assert re.search(r"∂loss/∂d = (16 \+ 48|48 \+ 16) = 64", text), text
    at_d = next(c for c in chain.values() if "MulBackward0 at d" in c)
    assert "2 paths" in at_d and "= 64" in at_d
    assert "∂loss/∂x = ∂loss/∂d · ∂d/∂x = 64 · 4 = 256" in at_d
    assert _leaf_grad(page, "x") == "256"


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_inspector_shows_only_what_backward_has_reached(
        open_page: Any, server: str, lang: str) -> None:
    strings = ZH if lang == "zh-CN" else EN
    page, _ = open_page(1280, 720)
    open_lab(page, server + f"/?lang={lang}#ex=S2")
    assert "0 / 5" in page.locator("#position").inner_text()
    _click_node(page, "c = 6")
    inspector = page.locator("#inspector")
    inspector.wait_for(state="visible")
    assert strings["graph.inspect.not_yet"] in inspector.inner_text()
    assert "14" not in inspector.locator("[data-known]").inner_text()
    page.locator("#next").click()
    page.locator("#next").click()
    assert inspector.locator('[data-known="1"]').inner_text().startswith("14")
    # A leaf's gradient: None in the panel, and in the inspector, until AccumulateGrad runs.
    page.locator("#first").click()
    _click_node(page, "a = 2")
    assert strings["graph.inspect.not_yet"] in inspector.inner_text()
    assert _leaf_grad(page, "a") == strings["graph.leaf.none"]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_an_error_before_backward_says_where_it_stopped(
        open_page: Any, server: str, lang: str) -> None:
    strings = ZH if lang == "zh-CN" else EN
    page, _ = open_page(1280, 720)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, "import torch\n\nw = torch.ones(2, 3, requires_grad=True)\n"
                       "y = w @ torch.ones(2)\ny.sum().backward()\n")
    assert page.locator("#error").is_visible()
    chain = page.locator("#chain").inner_text()
    assert chain == strings["graph.step.stopped"].format(line=4)
    assert strings["graph.step.none"] not in chain


# --- From the back row ---------------------------------------------------------------------------

def _label_px(page: Any) -> float:
    size = page.evaluate("getComputedStyle(document.querySelector('#graph .textpoint text'))"
                         ".fontSize")
    return float(size.removesuffix("px"))


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_presentation_mode_draws_the_graph_large(
        open_page: Any, server: str, artifacts: Path, lang: str) -> None:
    page, _ = open_page(1920, 1080)
    open_lab(page, server + f"/?lang={lang}&present=0#ex=S2")
    desk = _label_px(page)
    open_lab(page, server + f"/?lang={lang}&present=1#ex=S2")
    projector = _label_px(page)
    assert projector >= 20 and projector > desk, (desk, projector)  # it was 11 px in both
    chain = page.evaluate("parseFloat(getComputedStyle(document.getElementById('position'))"
                          ".fontSize)")
    assert chain >= 20
    page.screenshot(path=artifacts / f"graph-s2-{lang}-present-1920x1080.png")


_MODEL = ("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\n"
          "model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
          "x = torch.randn(5, 3)\nloss = model(x).pow(2).mean()\nloss.backward()\n")

_OFF_SCREEN = """() => {
  const box = document.getElementById('graph').getBoundingClientRect();
  return [...document.querySelectorAll('#graph .textpoint')].filter((t) => {
    const r = t.getBoundingClientRect();
    return r.width && (r.left < box.left - 1 || r.right > box.right + 1
                       || r.top < box.top - 1 || r.bottom > box.bottom + 1);
  }).map((t) => t.textContent);
}"""


def test_fit_all_zoom_and_an_opened_module_keep_the_graph_on_screen(
        open_page: Any, server: str, artifacts: Path) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/")
    _run_program(page, _MODEL)
    _click_node(page, "model")
    page.wait_for_function("[...document.querySelectorAll('#graph .textpoint')]"
                           ".some((t) => t.textContent.includes('Addmm'))")
    opened = page.evaluate(_OFF_SCREEN)
    assert not [t for t in opened if "Addmm" in t or "Relu" in t], opened
    page.locator("#fit").click()
    page.wait_for_timeout(300)
    assert page.evaluate(_OFF_SCREEN) == []
    small = _label_px(page)
    page.locator("#zoom-in").click()
    page.wait_for_timeout(300)
    assert _label_px(page) > small  # the text grows with the boxes
    page.locator("#zoom-out").click()
    page.locator("#zoom-out").click()
    page.wait_for_timeout(300)
    assert _label_px(page) < small
    page.screenshot(path=artifacts / "graph-module-fit-1280x720.png")


def test_a_matrix_shows_its_shape_and_a_heat_map(open_page: Any, server: str,
                                                  artifacts: Path) -> None:
    page, _ = open_page(1280, 800)
    open_lab(page, server + "/")
    _run_program(page, _MODEL)
    _click_node(page, "model")
    weight = page.locator("#graph .textpoint", has_text="model.0.weight")
    weight.first.wait_for()
    assert "[4×3]" in weight.first.text_content()  # its shape, not six flattened numbers
    page.locator("#fit").click()
    page.wait_for_timeout(300)
    _click_centre(page, weight.first)
    value = page.locator("#inspector dd").nth(1)
    assert value.locator(".tensor-shape").inner_text().startswith("4×3")
    assert value.locator("table.heat tr").count() == 4
    assert value.locator("table.heat tr").first.locator("td").count() == 3
    page.screenshot(path=artifacts / "graph-matrix-heat-1280x800.png")


_LONG_NAMES = ("import torch\n\nfirst_layer_weight_with_a_long_name = torch.tensor("
               "[1.0, 2.0, 3.0], requires_grad=True)\nb = torch.tensor(0.5, requires_grad=True)\n"
               "loss = (first_layer_weight_with_a_long_name * 1.2345678).sum() * b\n"
               "loss.backward()\n")


@pytest.mark.parametrize(("lang", "width", "height", "present"), [
    ("en", 390, 844, False), ("zh-CN", 390, 844, False), ("en", 1920, 1080, True),
    ("zh-CN", 1920, 1080, True)])
def test_leaf_gradient_names_never_cover_their_values(
        open_page: Any, server: str, artifacts: Path, lang: str, width: int, height: int,
        present: bool) -> None:
    page, _ = open_page(width, height)
    open_lab(page, server + f"/?lang={lang}&present={int(present)}")
    _run_program(page, _LONG_NAMES)
    page.locator("#last").click()
    overlaps = page.evaluate("""() => [...document.querySelectorAll('#leafgrads .leafgrad')]
      .map((row) => [row.querySelector('dt').getBoundingClientRect(),
                     row.querySelector('dd').getBoundingClientRect()])
      .filter(([a, b]) => a.left < b.right && b.left < a.right && a.top < b.bottom
                          && b.top < a.bottom).length""")
    assert overlaps == 0
    assert page.locator("#leafgrads .leafgrad").count() == 2
    right = page.evaluate("Math.max(...[...document.querySelectorAll("
                          "'#leafgrads dt, #leafgrads dd')].map((e) => e.getBoundingClientRect()"
                          ".right))")
    assert right <= width
    page.locator("#leafgrads").screenshot(
        path=artifacts / f"graph-leafgrads-{lang}-{width}x{height}.png")


# --- A cut keeps its edges -----------------------------------------------------------------------

_CUTS = ("import torch\n\nx = torch.tensor(2.0, requires_grad=True)\ny = x * 3\n"
         "z = y.detach() * x\nwith torch.no_grad():\n    w = x * 10\nloss = z + w\n"
         "loss.backward()\n")

# Each drawn edge, from the box its line starts in to the box its arrow ends in (by label).
_DRAWN_EDGES = """() => {
  const data = document.getElementById('graph').data;
  const labels = data[data.length - 1];
  const boxes = labels.x.map((x, i) => ({x, y: labels.y[i],
    text: labels.text[i].replace(/<[^>]+>/g, ' ').replace(/\\s+/g, ' ').trim()}));
  const near = (p) => boxes.reduce((best, b) => (Math.hypot(b.x - p.x, b.y - p.y)
    < Math.hypot(best.x - p.x, best.y - p.y) ? b : best)).text;
  const edges = [];
  for (const t of data.filter((t) => t.marker?.symbol === 'arrow')) {
    let run = [];
    const flush = () => { if (run.length > 1) edges.push([near(run[0]), near(run.at(-1)),
      t.line.dash]); run = []; };
    t.x.forEach((x, i) => (x === null ? flush() : run.push({x, y: t.y[i]})));
    flush();
  }
  return edges;
}"""


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_cut_value_is_drawn_feeding_the_op_that_uses_it(
        open_page: Any, server: str, artifacts: Path, lang: str) -> None:
    page, _ = open_page(1280, 800)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, _CUTS)
    page.locator("#fit").click()
    edges = page.evaluate(_DRAWN_EDGES)
    by_ends = {(source.split(" ")[0], target.split(" ")[0]): dash for source, target, dash in edges}
    assert by_ends.get(("y", "6")) == "dash"  # y.detach(): the cut itself
    assert by_ends.get(("6", "z")) == "solid", edges  # and what was cut still feeds z
    assert by_ends.get(("x", "w")) == "dot"  # made under no_grad
    assert by_ends.get(("w", "loss")) == "solid", edges  # and still part of loss
    page.screenshot(path=artifacts / f"graph-cuts-{lang}-1280x800.png")


# --- What optimizer.step() did -------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_stepper_goes_on_into_the_optimizers_step_and_zero_grad(
        open_page: Any, server: str, artifacts: Path, lang: str) -> None:
    strings = ZH if lang == "zh-CN" else EN
    page, _ = open_page(1280, 900)
    open_lab(page, server + f"/?lang={lang}")
    _run_program(page, "import torch\n\nw = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                       "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(2):\n"
                       "    opt.zero_grad()\n    loss = (w ** 2).sum()\n    loss.backward()\n"
                       "    opt.step()\n")
    backward = 3  # Sum, Pow, AccumulateGrad
    page.locator("#last").click()
    assert f"{backward + 2} / {backward + 2}" in page.locator("#position").inner_text()
    for _ in range(2):
        page.locator("#back").click()
    assert page.locator("#chain .optim-table").count() == 0  # backward's last step
    assert _leaf_grad(page, "w") == "[2, -4]"
    page.locator("#next").click()  # optimizer.step()
    chain = page.locator("#chain")
    assert "optimizer.step()" in chain.inner_text() and "SGD" in chain.inner_text()
    row = chain.locator('tr[data-param="w"]').inner_text()
    # before, .grad, the update, after
    for value in ("1", "-2", "2", "-4", "-0.2", "0.4", "0.8", "-1.6"):
        assert value in row, (value, row)
    assert "θ ← θ − lr · g" in chain.inner_text()
    page.locator("#graph").screenshot(path=artifacts / f"graph-optimizer-step-{lang}.png")
    page.locator("#next").click()  # zero_grad(): .grad is None again
    assert "zero_grad()" in chain.inner_text()
    assert strings["graph.optim.cleared"] in chain.inner_text()
    assert _leaf_grad(page, "w") == strings["graph.leaf.cleared"]
    assert page.locator("#next").is_disabled()
    # The second call's step starts from where the first left w.
    page.select_option("#call", "1")
    page.locator("#last").click()
    assert "0.8" in chain.locator('tr[data-param="w"] td').first.inner_text()


_OPS = ("import torch\nimport torch.nn.functional as F\n\n"
        "x = torch.tensor(3.0, requires_grad=True)\ny = torch.tensor(2.0, requires_grad=True)\n"
        "a = x * y\nb = torch.sin(a) + x.exp() / y - torch.log(x)\n"
        "c = torch.tanh(b) + torch.sigmoid(a).relu() + torch.cos(y) - x.sqrt()\n"
        "W = torch.ones(2, 3, requires_grad=True)\nv = W @ torch.ones(3)\n"
        "m = F.mse_loss(v, torch.zeros(2)) + v.sum()\nloss = (c ** 3).mean() + m\n"
        "loss.backward()\n")


def test_the_common_ops_write_their_local_derivatives(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 800)
    open_lab(page, server + "/")
    _run_program(page, _OPS)
    text = "\n".join(_step_to_the_end(page).values())
    for rule in ("∂Sin/∂a = cos(a) = cos(6)", "∂Log/∂x = 1/x = 1/3", "exp(x) = exp(3)",
                 "∂Div/∂y = −Exp/y²", "1 − tanh(b)²", "σ(a) · (1 − σ(a))",
                 "1 where Sigmoid > 0, else 0", "∂Cos/∂y = −sin(y)", "1 / (2√x)",
                 "∂a/∂x = y = 2", "3 · c²", "1/N = 1/1", "G copied to every element", "G ⊗ ",
                 "2(v − ", "c = Add − Sqrt", "∂c/∂Sqrt = −1"):
        assert rule in text, rule
    assert not re.search(r"∂loss/∂loss [·⊙]", text)  # never the circular first step
