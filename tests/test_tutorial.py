"""/lessons walks the tutorial in order; every link opens a lab state that exists."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from gradient_lab.descent.presets import PRESETS
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.tutorial import TUTORIAL


def test_the_tutorial_is_walked_in_order_s1_to_s22() -> None:
    assert [stop.id for stop in TUTORIAL] == [f"S{i}" for i in range(1, 23)]


def test_every_graph_link_names_a_shipped_example_and_every_descent_link_a_preset() -> None:
    presets = {p["id"] for p in PRESETS}
    for stop in TUTORIAL:
        assert stop.links, stop.id
        for link in stop.links:
            if link.lab == "graph":
                assert link.href.removeprefix("/#ex=") in EXAMPLES, link
            elif link.lab == "descent":
                assert link.href.removeprefix("/descent#preset=") in presets, link


def test_lessons_page_lists_every_section_in_both_languages(client: TestClient) -> None:
    english = client.get("/lessons").text
    chinese = client.get("/lessons?lang=zh-CN").text
    for stop in TUTORIAL:
        assert f'id="{stop.id}"' in english and stop.title_en in english
        assert stop.title_zh in chinese
    assert english.count('href="/#ex=S2"') == 1


def test_lessons_links_point_at_pages_that_exist(client: TestClient) -> None:
    hrefs = set(re.findall(r'href="(/[^"#?]*)', client.get("/lessons").text))
    assert {"/", "/descent", "/training"} <= hrefs
    for href in hrefs:
        assert client.get(href).status_code == 200, href


def test_training_links_name_tabs_of_the_training_page(client: TestClient) -> None:
    page = client.get("/training").text
    for stop in TUTORIAL:
        for link in stop.links:
            if link.lab == "training":
                assert f'id="panel-{link.href.removeprefix("/training#lesson=")}"' in page, link


@pytest.fixture
def browser_like(client: TestClient) -> Iterator[TestClient]:
    """The shared client, keeping cookies as a browser would, cleared afterwards."""
    client.cookies.clear()
    try:
        yield client
    finally:
        client.cookies.clear()


def test_a_chosen_language_is_remembered(browser_like: TestClient) -> None:
    chosen = browser_like.get("/lessons?lang=zh-CN")
    assert chosen.cookies.get("lang") == "zh-CN"
    assert '<html lang="zh-CN">' in browser_like.get("/lessons").text  # no ?lang= this time


def test_presentation_mode_is_a_link_and_is_remembered(browser_like: TestClient) -> None:
    assert 'class="present"' not in browser_like.get("/lessons").text
    on = browser_like.get("/?present=1")
    assert 'class="present"' in on.text and on.cookies.get("present") == "1"
    assert 'class="present"' in browser_like.get("/lessons").text
    browser_like.get("/lessons?present=0")
    assert 'class="present"' not in browser_like.get("/lessons").text
