"""The descent lab in headless Chromium: open a preset, play, scrub, read the final loss off the
page and check it against the API; set the start by clicking; the Chinese page. Offline;
screenshots in artifacts/."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from app.descent.presets import PRESETS
from tests.browser.pages import ZH, after, open_lab, ring_shows, tab_to

pytestmark = pytest.mark.browser


def _after_race(page: Any, action: Any) -> None:
    after(page, action, "races")


def _frame(page: Any) -> int:
    return int(page.evaluate("Number(document.body.dataset.frame ?? -1)"))


def _scrub(page: Any, k: int) -> None:
    page.locator("#scrub").evaluate(
        "(el, k) => { el.value = String(k); el.dispatchEvent(new Event('input')); "
        "el.dispatchEvent(new Event('change')); }", k)


def _api_race(server: str, preset_id: str) -> dict[str, Any]:
    preset = next(p for p in PRESETS if p["id"] == preset_id)
    body = {k: v for k, v in preset.items() if k not in ("id", "section")}
    request = urllib.request.Request(server + "/api/descent", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def test_a_preset_plays_scrubs_and_shows_the_final_loss(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1400, 1000)
    open_lab(page, server + "/descent", "races", timeout=60_000)
    _after_race(page, lambda: page.select_option("#preset", "schedulers"))
    assert page.locator("#legend tbody tr").count() == 4
    assert "ReduceLROnPlateau" in page.locator("#story").inner_text()

    page.locator("#play").click()
    page.wait_for_function("document.body.dataset.frame === document.getElementById('scrub').max",
                           timeout=60_000)
    assert page.locator("#play").get_attribute("aria-pressed") == "false"
    last = _frame(page)
    assert last == 600
    page.screenshot(path=str(artifacts / "descent-schedulers-end.png"), full_page=True)

    _scrub(page, 150)
    assert _frame(page) == 150 and "150 / 600" in page.locator("#position").inner_text()
    mid_loss = page.locator('#legend tr[data-run="0"] .loss').inner_text()
    # every chart's cursor follows the scrub
    cursors = page.evaluate("['chart-loss', 'chart-lr', 'chart-grad'].map("
                            "id => document.getElementById(id).layout.shapes[0].x0)")
    assert cursors == [150, 150, 150]

    _scrub(page, last)
    race = _api_race(server, "schedulers")
    for r, run in enumerate(race["runs"]):
        shown = float(page.locator(f'#legend tr[data-run="{r}"] .loss').inner_text())
        assert shown == pytest.approx(run["loss"][-1], rel=2e-3), run["label"]
        lr = page.locator(f'#legend tr[data-run="{r}"] .lr').inner_text()
        assert float(lr) == pytest.approx(run["lr"][-1], rel=2e-3)
    assert page.locator('#legend tr[data-run="0"] .loss').inner_text() != mid_loss
    page.locator("#back").click()
    assert _frame(page) == last - 1
    page.screenshot(path=str(artifacts / "descent-schedulers-scrubbed.png"), full_page=True)


def test_the_default_view_is_adam_vs_sgd_and_the_link_restores_it(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 900)
    open_lab(page, server + "/descent", "races", timeout=60_000)
    assert page.locator("#preset").input_value() == "rosenbrock"
    labels = page.locator("#legend tbody strong").all_inner_texts()
    assert labels == ["SGD lr=0.001", "Adam lr=0.05"]
    _scrub(page, 400)
    page.wait_for_function("location.hash.includes('k=400')")  # written after compressing
    link = page.evaluate("location.href")
    assert "preset=rosenbrock" in link

    again, _ = open_page(1280, 900)
    open_lab(again, link, "races", timeout=60_000)
    assert _frame(again) == 400
    assert again.locator('#legend tr[data-run="1"] .point').inner_text() == \
        page.locator('#legend tr[data-run="1"] .point').inner_text()


def test_clicking_the_contour_sets_the_start_and_races_again(
    open_page: Any, server: str
) -> None:
    page, _ = open_page(1280, 900)
    open_lab(page, server + "/descent#preset=blindfold&surface=quadratic&start=-1.5%2C1.8&steps=40"
             "&runs=" + urllib.request.quote(json.dumps([{"optimizer": "sgd", "lr": 0.1}])),
             "races", timeout=60_000)
    box = page.locator("#plot .nsewdrag").first.bounding_box()
    assert box is not None
    _after_race(page, lambda: page.mouse.click(box["x"] + box["width"] * 0.75,
                                               box["y"] + box["height"] * 0.25))
    x = float(page.locator("#start-x").input_value())
    y = float(page.locator("#start-y").input_value())
    assert x > 0.5 and y > 0.5  # the upper right quarter of [-2, 2] x [-2, 2]
    point = page.locator('#legend tr[data-run="0"] .point').inner_text()  # step 0: the start
    assert [float(v) for v in point.strip("()").split(",")] == pytest.approx([x, y], abs=1e-3)


def test_clipping_shows_the_norm_before_and_after(open_page: Any, server: str,
                                                  artifacts: Path) -> None:
    page, _ = open_page(1400, 1000)
    open_lab(page, server + "/descent", "races", timeout=60_000)
    _after_race(page, lambda: page.select_option("#preset", "cliff"))
    dashed = page.evaluate("document.getElementById('chart-grad').data"
                           ".filter(t => t.line.dash === 'dash').length")
    assert dashed == 3
    _scrub(page, 1)
    grad = page.locator('#legend tr[data-run="1"] .grad').inner_text()
    assert "→ 1" in grad  # clip_grad_norm_ with max_norm=1
    page.screenshot(path=str(artifacts / "descent-cliff.png"), full_page=True)


def test_the_chinese_page_and_a_diverging_run(open_page: Any, server: str,
                                              artifacts: Path) -> None:
    page, _ = open_page(1280, 900, locale="zh-CN")
    open_lab(page, server + "/descent?lang=zh-CN", "races", timeout=60_000)
    _after_race(page, lambda: page.select_option("#preset", "too_large"))
    assert page.locator("#race").inner_text() == ZH["descent.race"]
    settings = page.locator('#legend tr[data-run="1"] .settings').inner_text()
    assert ZH["descent.diverged"].replace("{k}", "5") in settings
    page.screenshot(path=str(artifacts / "descent-zh-diverged.png"), full_page=True)


def test_the_race_runs_by_keyboard_with_visible_focus(
    open_page: Any, server: str, artifacts: Path
) -> None:
    page, _ = open_page(1280, 720)
    open_lab(page, server + "/descent", "races", timeout=60_000)
    for selector in ("#preset", "#surface", "#race"):
        ring = tab_to(page, selector)
        assert ring_shows(ring), f"{selector} has no visible focus: {ring}"
    _after_race(page, lambda: page.keyboard.press("Enter"))
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    assert page.locator("#legend tbody tr").count() == 2  # the default SGD and Adam, raced again
    assert page.locator("#plot .scatterlayer .trace").count() >= 2
    # The button is disabled while it races; the keyboard user's focus comes back to it after.
    assert page.evaluate("document.activeElement.id") == "race"
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    page.screenshot(path=str(artifacts / "descent-keyboard-focus-1280x720.png"))
    ring = tab_to(page, "#play")
    assert ring_shows(ring), f"#play has no visible focus: {ring}"


def _scroll_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_race_on_a_phone_fits_the_screen(
    open_page: Any, server: str, artifacts: Path, lang: str
) -> None:
    page, _ = open_page(390, 844, locale="zh-CN" if lang == "zh-CN" else "en-US")
    open_lab(page, server + f"/descent?lang={lang}", "races", timeout=60_000)
    assert _scroll_width(page) <= 390 + 1, "the page scrolls sideways before the race"
    _after_race(page, lambda: page.locator("#race").click())
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    assert page.locator("#legend tbody tr").count() == 2
    assert page.locator("#plot .scatterlayer .trace").count() >= 2
    assert page.locator("#chart-loss .scatterlayer .trace").count() >= 2  # a curve per run
    for plot in ("#plot", "#chart-loss", "#chart-lr", "#chart-grad"):
        box = page.locator(plot).bounding_box()
        assert box is not None, plot
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (plot, box)
        assert box["width"] > 200, (plot, box)
    assert _scroll_width(page) <= 390 + 1, "the page scrolls sideways after the race"
    page.screenshot(path=str(artifacts / f"descent-{lang}-390x844.png"), full_page=True)
