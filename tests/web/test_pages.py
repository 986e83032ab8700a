from __future__ import annotations

import json
import re
from typing import Any

from fastapi.testclient import TestClient
from helpers import assert_error

from gradient_lab.graph.examples import EXAMPLES


def test_healthz_says_which_walls_are_up_and_how_many_children_wait(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["walls_missing"] == []
    assert body["runner"]["walls"]["landlock"] >= 1 and body["runner"]["walls"]["seccomp"]
    assert body["runner"]["ready"] + body["runner"]["running"] >= 1


def test_home_page_renders_html_with_the_nav(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert '<html lang="en">' in html
    assert "<title>Gradient Lab</title>" in html
    for href in ("/", "/descent", "/training", "/lessons"):
        assert f'href="{href}"' in html
    assert "/static/app.css" in html


def test_home_page_follows_accept_language(client: TestClient) -> None:
    response = client.get("/", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert '<html lang="zh-CN">' in response.text
    assert "梯度实验室" in response.text


def test_lang_query_overrides_accept_language(client: TestClient) -> None:
    response = client.get("/?lang=en", headers={"Accept-Language": "zh-CN"})
    assert '<html lang="en">' in response.text
    assert 'href="?lang=zh-CN"' in response.text


def test_unknown_path_gives_404_in_the_envelope(client: TestClient) -> None:
    assert_error(client.get("/no/such/page"), 404, "not_found")


def test_i18n_json_is_served_from_static(client: TestClient) -> None:
    response = client.get("/static/i18n/zh-CN.json")
    assert response.status_code == 200
    assert response.json()["app.title"] == "梯度实验室"


def test_large_responses_are_gzipped(client: TestClient) -> None:
    response = client.get("/static/i18n/en.json", headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"


def _page_data(html: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert match, "the page has no page-data"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def test_front_door_is_the_graph_lab_with_every_lesson_in_its_page_data(client: TestClient) -> None:
    html = client.get("/").text
    data = _page_data(html)
    assert data["lang"] == "en"
    assert data["strings"]["graph.run"] == "Run"
    assert set(data["examples"]) == set(EXAMPLES)
    assert data["examples"]["S2"]["program"] == EXAMPLES["S2"].program
    for lesson in EXAMPLES.values():
        assert f'<option value="{lesson.id}">§{lesson.section} {lesson.id} · ' in html
    assert "graph.js" in html and 'type="module"' in html


def test_graph_lab_in_chinese_titles_its_examples_in_chinese(client: TestClient) -> None:
    html = client.get("/?lang=zh-CN").text
    assert f"S2 · {EXAMPLES['S2'].title_zh}" in html
    assert _page_data(html)["strings"]["graph.run"] == "运行"


def test_graph_path_redirects_to_the_front_door_keeping_the_language(client: TestClient) -> None:
    response = client.get("/graph?lang=zh-CN", follow_redirects=False)
    assert response.status_code == 308
    assert response.headers["location"] == "/?lang=zh-CN"


def test_plotly_js_is_the_pinned_wheels_own_and_cacheable(client: TestClient) -> None:
    response = client.get("/vendor/plotly.min.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert "max-age" in response.headers["cache-control"]
    assert "plotly.js v4.1.1" in response.text[:200]


def test_every_script_and_style_of_the_lab_is_served_by_the_app_itself(client: TestClient) -> None:
    html = client.get("/").text
    urls = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert len(urls) >= 8
    for url in urls:
        assert url.startswith(("/", "http://testserver/")), f"{url}: classrooms are offline"
        assert client.get(url).status_code == 200, url


def test_the_descent_page_draws_each_optimizer_as_its_one_entry_says(client: TestClient) -> None:
    from gradient_lab.descent.surfaces import SURFACES
    from gradient_lab.optimizers import OPTIMIZERS

    data = _page_data(client.get("/descent").text)
    assert set(data["optimizers"]) == set(OPTIMIZERS)  # the menus keep the order (options)
    for name, kind in OPTIMIZERS.items():
        shown = data["optimizers"][name]
        assert (shown["color"], shown["symbol"], shown["dash"]) == (kind.color, kind.symbol,
                                                                    kind.dash)
        assert shown["labels"] == kind.labels and shown["options"] == list(kind.options)
        assert shown["defaults"]["lr"] > 0
    for surface in data["surfaces"]:
        assert surface["steps"] == SURFACES[surface["name"]].steps
        assert set(surface["lr"]) == set(OPTIMIZERS)


def test_each_page_takes_its_menus_from_the_registries(client: TestClient) -> None:
    from gradient_lab.optimizers import CLIPS, OPTIMIZER_OPTIONS, OPTIMIZERS, SCHEDULERS
    from gradient_lab.web import schemas
    from gradient_lab.web.routes.training import TABS

    options = _page_data(client.get("/descent").text)["options"]
    assert options["optimizers"] == list(OPTIMIZERS)
    assert options["schedulers"] == list(SCHEDULERS) and options["clips"] == list(CLIPS)
    assert options["optimizer_options"]["adam"] == list(OPTIMIZER_OPTIONS["adam"])
    choices = _page_data(client.get("/training").text)["choices"]
    assert choices["lessons"] == list(TABS) and choices["devices"] == ["auto", "cpu", "cuda"]
    assert TABS == tuple(schemas.LESSONS)  # every lesson has its tab, in its order, and no more


def test_lessons_name_what_each_of_several_links_opens(client: TestClient) -> None:
    html = client.get("/lessons?lang=en").text
    row = html[html.index('<li id="S12">'):html.index('<li id="S13">')]
    for title in ("The optimizer table of §4.2", "Momentum in the ravine",
                  "Adam vs SGD on Rosenbrock", "AdamW vs Adam: weight decay"):
        assert title in row
    row = html[html.index('<li id="S19">'):html.index('<li id="S20">')]
    assert EXAMPLES["S19b"].title_en in row
    # Chinese text takes the full-width colon between the lab and what it opens.
    html = client.get("/lessons?lang=zh-CN").text
    row = html[html.index('<li id="S12">'):html.index('<li id="S13">')]
    assert row.count("梯度下降实验室</span>：<span") == 4 and "</span>: <span" not in row
