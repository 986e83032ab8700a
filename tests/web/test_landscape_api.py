"""POST /api/training/landscape against the domain function, its refusals, and its defaults."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from gradient_lab.optimizers import Run
from gradient_lab.training import map_landscape
from gradient_lab.web import schemas
from tests.helpers import assert_error

SMALL = {"points": 100, "width": 8, "steps": 20, "resolution": 7, "seed": 2}


def test_the_landscape_gives_what_the_domain_function_gives(client: TestClient) -> None:
    runs = [{"optimizer": "nesterov", "lr": 0.2, "momentum": 0.5},
            {"optimizer": "adam", "lr": 0.01, "betas": [0.8, 0.99],
             "scheduler": {"kind": "cosine"}}]
    response = client.post("/api/training/landscape",
                           json={**SMALL, "runs": runs, "shared": True, "device": "cpu"})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = map_landscape(
        dataset="moons", points=100, noise=0.1, depth=2, width=8, activation="relu",
        runs=[Run("nesterov", 0.2, {"momentum": 0.5}),
              Run("adam", 0.01, {"betas": (0.8, 0.99)}, scheduler={"kind": "cosine"})],
        steps=20, resolution=7, span=1.0, shared=True, seed=2, device=torch.device("cpu"))
    assert body["weights"] == expected.weights == 8 * 2 + 8 + 8 * 8 + 8 + 8 * 2 + 2
    for got, want in zip(body["runs"], expected.runs, strict=True):
        assert got["optimizer"] == want.optimizer
        assert got["path"]["loss"] == pytest.approx(want.path.loss, rel=1e-5)
        flat = [v for row in got["random"]["z"] for v in row]
        assert flat == pytest.approx([v for row in want.random.z for v in row], rel=1e-5)
        assert got["pca"]["explained"] == pytest.approx(want.pca.explained, rel=1e-5)
    assert expected.shared is not None
    assert len(body["shared"]["paths"]) == 2


def test_the_default_request_is_two_optimizers_on_a_41_grid() -> None:
    request = schemas.LandscapeRequest.model_validate({})
    assert [run.optimizer for run in request.runs] == ["sgd", "adam"]
    assert request.resolution == 41
    assert request.options()["runs"][0]["lr"] == 0.5


@pytest.mark.parametrize("change", [
    {"resolution": 40},  # even: no grid point at the final weights
    {"runs": []},
    {"runs": [{"optimizer": "lbfgs"}]},
    {"runs": [{"optimizer": "sgd", "nesterov": True}]},  # torch: nesterov needs momentum
    {"width": 1000},
    {"steps": 0},
])
def test_a_request_torch_or_the_limits_refuse_is_a_422(client: TestClient,
                                                       change: dict[str, object]) -> None:
    response = client.post("/api/training/landscape", json={**SMALL, **change})
    assert_error(response, 422, "request_invalid")


def test_lr_y_is_refused_by_the_lesson_naming_it(client: TestClient) -> None:
    response = client.post("/api/training/landscape",
                           json={**SMALL, "runs": [{"optimizer": "sgd", "lr_y": 0.1}]})
    error = assert_error(response, 422, "request_invalid")
    assert "lr_y" in str(error["message"])
