"""/metrics as Prometheus reads it: parsed with prometheus_client's own parser, each family
checked by what the requests before the scrape did."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from gradient_lab.graph.examples import EXAMPLES

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.text)
            for sample in family.samples}


def _value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_requests_are_counted_by_route_template_and_status(client: TestClient) -> None:
    before = _scrape(client)
    client.get("/")
    client.get("/no/such/page")
    client.get("/api/rooms/ZZZZZZZZ/events")  # a room that is not: its template, a 404
    client.get("/static/app.css")
    after = _scrape(client)

    def grew(route: str, status: str) -> float:
        labels = {"method": "GET", "route": route, "status": status}
        return _value(after, "gradient_lab_http_requests_total", **labels) - \
            _value(before, "gradient_lab_http_requests_total", **labels)

    assert grew("/", "200") == 1
    assert grew("unmatched", "404") == 1
    assert grew("/api/rooms/{code}/events", "404") == 1
    assert grew("/static/{path}", "200") == 1
    assert not any("ZZZZZZZZ" in value for (_, labels) in after for _, value in labels)


def test_latency_is_a_histogram_per_route(client: TestClient) -> None:
    client.get("/lessons")
    samples = _scrape(client)
    name = "gradient_lab_http_request_duration_seconds"
    count = _value(samples, f"{name}_count", method="GET", route="/lessons")
    assert count >= 1
    assert _value(samples, f"{name}_bucket", method="GET", route="/lessons", le="+Inf") == count
    assert _value(samples, f"{name}_sum", method="GET", route="/lessons") > 0


def test_the_runner_is_read_at_the_scrape(client: TestClient) -> None:
    before = _scrape(client)
    program = EXAMPLES["S2"].program + "\n# metrics\n"  # never kept before: it runs
    assert client.post("/api/graph", json={"code": program}).status_code == 200
    after = _scrape(client)
    assert _value(after, "gradient_lab_runner_started_total") >= \
        _value(before, "gradient_lab_runner_started_total") + 1
    assert _value(after, "gradient_lab_runner_forked_total") >= \
        _value(after, "gradient_lab_runner_started_total")
    health = client.get("/healthz").json()["runner"]
    for gauge in ("ready", "running", "aside", "waiting"):
        assert ("gradient_lab_runner_" + gauge, frozenset()) in after
    assert _value(after, "gradient_lab_runner_waiting") == 0 == health["waiting"]


def test_kept_replies_count_a_miss_then_a_hit(client: TestClient) -> None:
    program = EXAMPLES["S2"].program + "\n# kept twice\n"
    before = _scrape(client)
    first = client.post("/api/graph", json={"code": program})
    second = client.post("/api/graph", json={"code": program})
    assert (first.headers["x-kept"], second.headers["x-kept"]) == ("ran", "hit")
    after = _scrape(client)
    for outcome, more in (("ran", 1), ("hit", 1), ("shared", 0)):
        assert _value(after, "gradient_lab_kept_replies_total", outcome=outcome) == \
            _value(before, "gradient_lab_kept_replies_total", outcome=outcome) + more


@pytest.fixture
def room(client: TestClient) -> Iterator[str]:
    response = client.post("/api/rooms", json={})
    assert response.status_code == 201, response.text
    code: str = response.json()["code"]
    yield code
    client.cookies.clear()


def test_rooms_screens_and_students_are_those_this_process_follows(client: TestClient,
                                                                   room: str) -> None:
    for nickname in ("Ada", "Grace"):
        assert client.post(f"/api/rooms/{room}/join",
                           json={"nickname": nickname}).status_code == 200
    hub = client.app.state.rooms.hub  # type: ignore[attr-defined]
    before = _scrape(client)
    watcher = client.portal.call(hub.watch, room)  # type: ignore[union-attr]
    try:
        after = _scrape(client)
    finally:
        watcher.close()
    assert _value(after, "gradient_lab_rooms") == _value(before, "gradient_lab_rooms") + 1
    assert _value(after, "gradient_lab_room_screens") == \
        _value(before, "gradient_lab_room_screens") + 1
    assert _value(after, "gradient_lab_room_students") == \
        _value(before, "gradient_lab_room_students") + 2


def test_a_scraper_that_asks_for_openmetrics_gets_it(client: TestClient) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse

    response = client.get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    names = {family.name for family in parse(response.text)}
    assert {"gradient_lab_http_requests", "gradient_lab_runner_ready"} <= names


def test_the_build_is_named(client: TestClient) -> None:
    from importlib.metadata import version

    samples = _scrape(client)
    device = client.get("/healthz").json()["device"]
    assert _value(samples, "gradient_lab_build_info", version=version("gradient-lab"),
                  device=device) == 1
