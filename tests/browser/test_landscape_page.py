"""The loss-landscape lesson in headless Chromium: the contour with the path, played step by
step; the 3-D surface; the random and shared planes; the view and the runs in the address; the
Chinese page; screenshots at 1440x900 and 390x844 in artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import EN, ZH, after, open_lab

pytestmark = pytest.mark.browser

SMALL = "landscape.points=200&landscape.steps=60&landscape.resolution=21"


def _trace_points(page: Any, trace: int) -> int:
    return int(page.evaluate(f"document.getElementById('landscape-plane').data[{trace}].x.length"))


def test_the_landscape_draws_each_path_on_its_plane_and_plays_it(
        open_page: Any, server: str, artifacts: Path) -> None:
    page, _ = open_page(1440, 900)
    open_lab(page, f"{server}/training#lesson=landscape&{SMALL}")
    panel = page.locator("#panel-landscape")
    assert page.locator("#landscape-plane .contourlayer path").count() > 10
    assert _trace_points(page, 1) == 61  # the sgd run's path: init and 60 steps
    assert panel.get_attribute("data-step") == "60"
    assert page.locator("#landscape-loss .scatterlayer .trace").count() >= 2  # real, on the plane
    assert page.locator("#landscape-interpolation .scatterlayer .trace").count() == 2
    assert "PC1" in (page.locator("#landscape-plane .xtitle").text_content() or "")
    assert "% " in page.locator("#panel-landscape .summary").inner_text()
    page.locator("#landscape-play").click()
    page.wait_for_function("document.getElementById('panel-landscape').dataset.playing === '1'")
    mid = page.evaluate("""() => new Promise((done) => setTimeout(() => done(
        Number(document.getElementById('panel-landscape').dataset.step)), 1200))""")
    assert 0 < mid < 60  # under way: part of the path drawn
    assert 0 < _trace_points(page, 1) < 61
    page.wait_for_function("document.getElementById('panel-landscape').dataset.playing === '0'",
                           timeout=10_000)
    assert panel.get_attribute("data-step") == "60" and _trace_points(page, 1) == 61
    assert "landscape_view.play=" in page.url  # Play is in the address, for a class to follow
    page.screenshot(path=str(artifacts / "landscape-1440.png"), full_page=True)


def test_an_address_that_says_playing_plays_from_that_moment(open_page: Any, server: str) -> None:
    # The class mode's teacher pressing Play changes the students' addresses: each screen plays
    # from the moment in it, so all show the same step.
    page, _ = open_page(1440, 900)
    open_lab(page, f"{server}/training#lesson=landscape&{SMALL}")
    page.evaluate("""() => { location.hash += '&landscape_view.play=' + (Date.now() - 1500); }""")
    page.wait_for_function("document.getElementById('panel-landscape').dataset.playing === '1'")
    step = int(page.locator("#panel-landscape").get_attribute("data-step") or -1)
    assert 20 <= step < 60  # half of the 3 s play had gone by when the address came
    page.wait_for_function("document.getElementById('panel-landscape').dataset.playing === '0'",
                           timeout=10_000)


def test_the_view_lives_in_the_address_and_the_3d_surface_draws(
        open_page: Any, server: str, artifacts: Path) -> None:
    page, _ = open_page(1440, 900)
    open_lab(page, f"{server}/training#lesson=landscape&{SMALL}&landscape.shared=1"
                   "&landscape.runs=momentum:0.05,adam:0.02,rmsprop:0.005")
    assert page.locator('[name="landscape_view.run"] option').count() == 3
    page.select_option('[name="landscape_view.plane"]', "shared")
    assert "landscape_view.plane=shared" in page.url
    assert page.evaluate("document.getElementById('landscape-plane').data.length") == 5  # 3 paths
    page.select_option('[name="landscape_view.mode"]', "surface")
    assert "landscape_view.mode=surface" in page.url
    page.wait_for_selector("#landscape-plane .gl-container canvas, #landscape-plane canvas")
    kinds = page.evaluate("document.getElementById('landscape-plane').data.map(d => d.type)")
    assert kinds == ["surface", "scatter3d", "scatter3d", "scatter3d"]
    page.screenshot(path=str(artifacts / "landscape-3d.png"), full_page=True)
    # The link opens the same view: the runs, the plane and the chart.
    url = page.url
    other, _ = open_page(1440, 900)
    open_lab(other, url)
    assert other.locator('[name="landscape_view.plane"]').input_value() == "shared"
    assert other.locator('[name="landscape.runs"]').input_value().startswith("momentum:0.05")


def test_the_random_plane_is_centred_on_the_final_weights(open_page: Any, server: str) -> None:
    page, _ = open_page(1440, 900)
    open_lab(page, f"{server}/training#lesson=landscape&{SMALL}&landscape_view.plane=random")
    assert "filter" in (page.locator("#landscape-plane .xtitle").text_content() or "")
    centre = page.evaluate("""() => { const d = document.getElementById('landscape-plane').data;
        const marks = d[d.length - 1]; return [marks.x.at(-1), marks.y.at(-1)]; }""")
    assert centre == [0, 0]
    after(page, lambda: page.locator("#panel-landscape button[type=submit]").click())


def test_the_chinese_landscape_on_a_phone(open_page: Any, server: str, artifacts: Path) -> None:
    page, _ = open_page(390, 844, locale="zh-CN")
    open_lab(page, f"{server}/training?lang=zh-CN#lesson=landscape&{SMALL}")
    assert page.locator("#tab-landscape").inner_text() == ZH["training.tab.landscape"]
    assert ZH["training.landscape.plane.pca"] in page.locator("#panel-landscape").inner_text()
    assert EN["training.landscape.plane.pca"] not in page.locator("#panel-landscape").inner_text()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1  # nothing wider than the phone
    page.screenshot(path=str(artifacts / "landscape-390.png"), full_page=True)
