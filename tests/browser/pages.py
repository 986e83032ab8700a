"""What the browser tests share: the page strings in both languages, waiting for a page's runs,
and the keyboard user's Tab with the focus ring it lands on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

I18N = Path(__file__).parents[2] / "static/i18n"
ZH = json.loads((I18N / "zh-CN.json").read_text(encoding="utf-8"))
EN = json.loads((I18N / "en.json").read_text(encoding="utf-8"))


def count(page: Any, name: str = "runs") -> int:
    """How many runs (races, ...) the page says it has drawn: body[data-<name>]."""
    return int(page.evaluate(f"Number(document.body.dataset.{name} ?? 0)"))


def after(page: Any, action: Any, name: str = "runs", timeout: int = 60_000) -> None:
    """Do action, then wait until the page has drawn the run it started."""
    before = count(page, name)
    action()
    page.wait_for_function(f"Number(document.body.dataset.{name} ?? 0) > {before}",
                           timeout=timeout)


def open_lab(page: Any, url: str, name: str = "runs", timeout: int = 90_000) -> None:
    """Go to url and wait until the page has drawn its first run."""
    page.goto(url)
    page.wait_for_function(f"Number(document.body.dataset.{name} ?? 0) > 0", timeout=timeout)


def tab_to(page: Any, selector: str, presses: int = 40) -> dict[str, str]:
    """Press Tab until selector has focus, as a keyboard user does; return its focus ring style."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
                return {outline: s.outlineStyle, width: s.outlineWidth, shadow: s.boxShadow}; }""")
    pytest.fail(f"{presses} presses of Tab never reached {selector}")


def ring_shows(ring: dict[str, str]) -> bool:
    outline = ring["outline"] != "none" and float(ring["width"].removesuffix("px")) > 0
    return outline or ring["shadow"] != "none"
