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


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
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
