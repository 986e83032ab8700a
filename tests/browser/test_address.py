"""The address is the view: switching presentation mode or language keeps it, every page follows
it when it changes (a pasted link, the class mode's teacher), and Copy link always answers, even
where the clipboard API is missing (plain http on a classroom's LAN address)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import EN, ZH, count

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class View:
    """A page opened at a view its address names, and how to read that view back off the page."""

    name: str
    path: str
    hash: str
    counter: str
    read: str  # JS: what the page shows of the view

    def shown(self, page: Any) -> Any:
        return page.evaluate(self.read)


GRAPH = View("graph", "/", "#ex=S10&step=2", "runs",
             "[document.getElementById('examples').value, "
             "document.getElementById('position').textContent]")
DESCENT = View("descent", "/descent", "#preset=ravine&k=40", "races",
               "[document.getElementById('preset').value, "
               "!document.getElementById('story').hidden, document.body.dataset.frame, "
               "document.querySelectorAll('#legend tbody tr').length]")
TRAINING = View("training", "/training", "#lesson=nan&nan.cause=log0&nan.steps=60", "runs",
                "[document.querySelector('[role=tab][aria-selected=true]').dataset.lesson, "
                "document.querySelector('[name=\"nan.cause\"]').value, "
                "document.querySelector('[name=\"nan.steps\"]').value]")
VIEWS = (GRAPH, DESCENT, TRAINING)
EXPECTED = {"graph": ["S10", None], "descent": ["ravine", True, "40", 2],
            "training": ["nan", "log0", "60"]}


def _strings(lang: str) -> dict[str, str]:
    return ZH if lang == "zh-CN" else EN


def _wait_drawn(page: Any, view: View, more_than: int = 0) -> None:
    page.wait_for_function(f"Number(document.body.dataset.{view.counter} ?? 0) > {more_than}",
                           timeout=90_000)


def _check(view: View, shown: list[Any], lang: str) -> None:
    expected = EXPECTED[view.name]
    if view.name == "graph":
        position = _strings(lang)["graph.step.position"].format(pos=2, total=3)
        expected = ["S10", position]
    assert shown == expected, (view.name, lang, shown)


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("view", VIEWS, ids=[v.name for v in VIEWS])
def test_presentation_mode_and_the_language_link_keep_the_view(
        open_page: Any, server: str, artifacts: Path, view: View, lang: str) -> None:
    page, _ = open_page(1920, 1080)
    page.goto(f"{server}{view.path}?lang={lang}{view.hash}")
    _wait_drawn(page, view)
    _check(view, view.shown(page), lang)

    with page.expect_navigation():
        page.locator("header .present-toggle").click()
    _wait_drawn(page, view)
    assert page.evaluate("document.body.classList.contains('present')")
    _check(view, view.shown(page), lang)

    other = "en" if lang == "zh-CN" else "zh-CN"
    with page.expect_navigation():
        page.locator("header .lang").click()
    _wait_drawn(page, view)
    assert page.locator("html").get_attribute("lang") == other
    _check(view, view.shown(page), other)
    page.screenshot(path=artifacts / f"address-{view.name}-{lang}-present-1920x1080.png")


def test_the_graph_page_follows_its_address(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 800)
    page.goto(f"{server}/#ex=S2")
    _wait_drawn(page, GRAPH)
    runs = count(page)
    page.evaluate("location.hash = '#ex=S2&step=3'")  # the same program: no second run
    page.wait_for_function("document.getElementById('position').textContent.includes('3 / 5')")
    assert count(page) == runs
    assert "14 · 3 = 42" in page.locator("#chain").inner_text()
    page.evaluate("location.hash = '#ex=S3&call=1&step=1'")  # another program: it runs
    _wait_drawn(page, GRAPH, runs)
    page.wait_for_function("document.getElementById('examples').value === 'S3'")
    assert page.locator("#call").input_value() == "1"
    assert "1 / " in page.locator("#position").inner_text()


def test_the_descent_page_follows_its_address(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 900)
    page.goto(f"{server}/descent#preset=rosenbrock")
    _wait_drawn(page, DESCENT)
    races = count(page, "races")
    page.evaluate("location.hash = '#preset=ravine'")
    _wait_drawn(page, DESCENT, races)
    assert page.locator("#preset").input_value() == "ravine"
    assert page.locator("#story").inner_text() == EN["descent.preset.ravine.story"]
    assert page.locator("#surface").input_value() == "valley"
    races = count(page, "races")
    page.evaluate("location.hash = location.hash.replace(/&?k=\\d+/, '') + '&k=25'")
    page.wait_for_function("document.body.dataset.frame === '25'")
    assert count(page, "races") == races  # only the step moved: no race again


def test_the_training_page_follows_its_address(open_page: Any, server: str) -> None:
    page, _ = open_page(1280, 900)
    page.goto(f"{server}/training#lesson=flow&flow.width=16&flow.steps=5&flow.depth=4")
    _wait_drawn(page, TRAINING)
    runs = count(page)
    page.evaluate("location.hash = '#lesson=nan&nan.cause=log0&nan.steps=60'")
    _wait_drawn(page, TRAINING, runs)
    assert page.locator("#tab-nan").get_attribute("aria-selected") == "true"
    assert page.locator('[name="nan.cause"]').input_value() == "log0"
    assert page.locator("#panel-nan .summary").get_attribute("data-step") == "39"


NO_CLIPBOARD = "Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined});"


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize(("path", "counter"), [("/#ex=S2&step=2", "runs"),
                                               ("/descent#preset=cliff", "races")],
                         ids=["graph", "descent"])
def test_copy_link_answers_without_the_clipboard_api(
        open_page: Any, server: str, artifacts: Path, path: str, counter: str, lang: str) -> None:
    page, _ = open_page(390, 844)
    page.add_init_script(NO_CLIPBOARD)
    base, _, fragment = path.partition("#")
    page.goto(f"{server}{base}?lang={lang}#{fragment}")
    page.wait_for_function(f"Number(document.body.dataset.{counter} ?? 0) > 0", timeout=90_000)
    assert page.evaluate("navigator.clipboard") is None
    page.locator("#copy-link").click()
    note = page.locator("#copy-link-note")
    note.wait_for(state="visible")
    strings = _strings(lang)
    # Copied through a selection, or shown to copy by hand: either way the page says which.
    assert note.locator("span").inner_text() in (strings["link.copied"], strings["link.select"])
    link = note.locator("input").input_value()
    assert link == page.evaluate("location.href")
    assert fragment.split("&")[0] in link
    box = note.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.screenshot(path=artifacts / f"copy-link-{counter}-{lang}-390x844.png")
