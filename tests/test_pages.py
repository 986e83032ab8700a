from __future__ import annotations

from fastapi.testclient import TestClient
from helpers import assert_error


def test_healthz_answers_ok_with_the_live_sandbox_worker_count(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["sandbox_workers"] >= 1


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
