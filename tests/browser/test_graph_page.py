"""The graph lab in headless Chromium: S2 stepped to a.grad = 42 and b.grad = 28, S6's error
next to the code, the Chinese page, a 300-node graph. All offline; screenshots in artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import ZH, after, open_lab

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
    box = page.locator("#graph .textpoint", has_text="c = 6").first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
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
    box = page.locator("#graph .textpoint", has_text="model").first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("[...document.querySelectorAll('#graph .textpoint')]"
                           ".some((t) => t.textContent.includes('Addmm'))")
    assert "Relu" in _node_labels(page)
    page.screenshot(path=artifacts / "graph-module-open-1280x720.png")
