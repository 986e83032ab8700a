"""/lessons in headless Chromium: the tutorial in order, by keyboard, in both languages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gradient_lab.tutorial import TUTORIAL
from tests.browser.pages import EN, ZH

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("lang", "width", "height"), [
    ("en", 1280, 720), ("zh-CN", 1280, 720), ("en", 390, 844), ("zh-CN", 390, 844)])
def test_lessons_list_every_section_and_fit_the_screen(
    open_page: Any, server: str, artifacts: Path, lang: str, width: int, height: int
) -> None:
    page, _ = open_page(width, height)
    page.goto(f"{server}/lessons?lang={lang}")
    rows = page.locator(".stops li")
    assert rows.count() == len(TUTORIAL) == 22
    first = TUTORIAL[0]
    title = first.title_zh if lang == "zh-CN" else first.title_en
    assert title in rows.first.inner_text()
    # Usable at this size: nothing runs off the side of the page.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    page.screenshot(path=artifacts / f"lessons-{lang}-{width}x{height}.png", full_page=True)


def test_a_lesson_opens_by_keyboard_with_visible_focus(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    page.goto(f"{server}/lessons")
    link = page.locator('#S2 a[href="/#ex=S2"]')
    link.focus()
    outline = page.evaluate(
        "getComputedStyle(document.activeElement).outlineStyle + ' ' + "
        "getComputedStyle(document.activeElement).borderColor")
    assert outline.split()[0] != "none", outline  # a visible focus ring
    page.keyboard.press("Enter")
    page.wait_for_url(f"{server}/#ex=S2")
    page.locator("#examples").wait_for()
    assert page.locator("#examples").input_value() == "S2"


def test_a_descent_lesson_link_loads_its_story(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 720)
    page.goto(f"{server}/lessons")
    page.locator('#S13 a[href="/descent#preset=schedulers"]').click()
    page.wait_for_url(f"{server}/descent#*")
    page.locator("#preset").wait_for()
    assert page.locator("#preset").input_value() == "schedulers"


@pytest.mark.parametrize(("lang", "width", "height"), [
    ("en", 1920, 1080), ("zh-CN", 1920, 1080), ("en", 390, 844), ("zh-CN", 390, 844)])
def test_each_link_of_a_stop_says_what_it_opens(
    open_page: Any, server: str, artifacts: Path, lang: str, width: int, height: int
) -> None:
    strings = ZH if lang == "zh-CN" else EN
    page, _ = open_page(width, height)
    page.goto(f"{server}/lessons?lang={lang}&present={int(width > 1000)}")
    links = page.locator("#S12 .links a")
    texts = links.all_inner_texts()
    assert len(texts) == 4 and len(set(texts)) == 4, texts  # not four "Descent lab"s
    for text, story in zip(texts, ("table", "ravine", "rosenbrock", "weight_decay"), strict=True):
        assert strings[f"descent.preset.{story}.title"] in text
    assert len(set(page.locator("#S21 .links a").all_inner_texts())) == 4
    # A stop with one link keeps it short: its row already says what it is.
    assert page.locator("#S2 .links a").inner_text() == strings["lessons.lab.graph"]
    # Each pill is as wide as its words: neither stretched across its column nor, on a wide
    # screen, broken between the lab's name and what it opens.
    single = page.locator("#S2 .links a").bounding_box()
    assert single["width"] < 250, single
    if width > 1000:
        for box in (link.bounding_box() for link in links.all()):
            assert box["height"] < 1.5 * single["height"], (box, single)
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    page.locator("#S12").screenshot(path=artifacts / f"lessons-S12-{lang}-{width}x{height}.png")
