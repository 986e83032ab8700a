"""Schemathesis against our own OpenAPI schema: no request the schema allows may get a 5xx.

Each operation gets a bounded, derandomized set of generated requests (the same ones on every
run), sent through the session's TestClient, so the real sandbox pool runs them. The limits
are tightened to one second so that generated programs and races stay quick.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from gradient_lab.main import create_app
from gradient_lab.settings import Settings, get_settings
from tests.helpers import assert_error

schema = schemathesis.openapi.from_dict(create_app().openapi())
QUICK = Settings(wall_seconds=1.0, cpu_seconds=1.0)


@pytest.fixture(scope="module")
def quick_client(_shared_client: TestClient) -> Iterator[TestClient]:
    async def quick() -> Settings:
        return QUICK

    client = _shared_client
    client.app.dependency_overrides[get_settings] = quick  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        client.app.dependency_overrides.pop(get_settings)  # type: ignore[attr-defined]


@schema.parametrize()
@settings(max_examples=8, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_server_error(case: schemathesis.Case,
                                                  quick_client: TestClient) -> None:
    request = case.as_transport_kwargs()
    assert not request.pop("cookies", None)  # the schema has no cookie parameters
    if isinstance(request.get("data"), bytes | str):  # requests' spelling; httpx says content
        request["content"] = request.pop("data")
    response = quick_client.request(**request)
    case.validate_response(response, checks=[not_a_server_error])


def test_a_range_past_float32_is_refused_as_invalid_not_a_server_error(
        client: TestClient) -> None:
    # Found by the run above: linspace over float32 overflowed inside the worker.
    response = client.post("/api/surface", json={
        "surface": "quadratic", "x_range": [-1e300, 1e300], "y_range": [-1, 1],
        "resolution": 10})
    assert_error(response, 422, "request_invalid")


def test_an_lr_past_float32_diverges_at_the_first_step_instead_of_a_server_error(
        client: TestClient) -> None:
    response = client.post("/api/descent", json={
        "surface": "quadratic", "start": [1, 1], "steps": 5,
        "runs": [{"optimizer": "sgd", "lr": 1e300},
                 {"optimizer": "sgd", "lr": 0.1, "scheduler": {"kind": "exponential",
                                                                "gamma": 1e300}},
                 {"optimizer": "sgd", "lr": 0.1, "clip": {"kind": "value", "max": 1e300}}]})
    assert response.status_code == 200, response.text
    first, grown, unclipped = response.json()["runs"]
    assert first["diverged_at"] == 1
    assert grown["diverged_at"] == 2  # step 0 used lr 0.1; step 1 used 0.1 * 1e300
    assert unclipped["diverged_at"] is None
