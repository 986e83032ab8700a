"""The descent lab's endpoints, against the plain torch.optim loop and the catalogue."""

from __future__ import annotations

import json
import math
import re

import httpx
import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from gradient_lab.descent.presets import PRESETS
from gradient_lab.descent.race import race
from gradient_lab.descent.surfaces import SURFACES, surface_fn
from gradient_lab.optimizers import OPTIMIZERS, Run
from gradient_lab.settings import Settings, get_settings
from gradient_lab.web import schemas
from tests.helpers import assert_error

ROSENBROCK = {"surface": "rosenbrock", "start": [-1.5, 2.0]}


def test_the_catalogue_lists_each_surface_with_ranges_minima_and_lrs(client: TestClient) -> None:
    response = client.get("/api/surfaces")
    assert response.status_code == 200
    catalogue = {s["name"]: s for s in response.json()}
    assert set(catalogue) == set(SURFACES)
    rosenbrock = catalogue["rosenbrock"]
    assert rosenbrock["minima"] == [[1.0, 1.0]] and rosenbrock["latex"]
    assert set(rosenbrock["lr"]) == set(OPTIMIZERS)
    assert catalogue["valley"]["params"] == {"condition": 20.0}


def test_a_surface_grid_has_z_rows_along_y(client: TestClient) -> None:
    response = client.post("/api/surface", json={"surface": {"expr": "x + 10 * y"},
                                                  "x_range": [0, 2], "y_range": [0, 1],
                                                  "resolution": 3})
    assert response.status_code == 200, response.text
    grid = response.json()
    assert grid["x"] == [0.0, 1.0, 2.0] and grid["y"] == [0.0, 0.5, 1.0]
    assert grid["z"][1] == pytest.approx([5.0, 6.0, 7.0])


def test_a_built_in_surface_grid_matches_torch(client: TestClient) -> None:
    response = client.post("/api/surface", json={"surface": "himmelblau", "x_range": [-5, 5],
                                                  "y_range": [-5, 5], "resolution": 11})
    grid = response.json()
    x, y = torch.tensor(grid["x"][3]), torch.tensor(grid["y"][8])
    assert grid["z"][8][3] == pytest.approx(float((x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2))


def test_a_race_equals_the_plain_torch_optim_loop(client: TestClient) -> None:
    body = {**ROSENBROCK, "steps": 50, "runs": [
        {"optimizer": "adam", "lr": 0.05, "betas": [0.8, 0.99], "label": "mine"},
        {"optimizer": "momentum", "lr": 0.0005, "clip": {"kind": "norm", "max": 5},
         "scheduler": {"kind": "step", "step_size": 10, "gamma": 0.5}},
    ]}
    response = client.post("/api/descent", json=body)
    assert response.status_code == 200, response.text
    adam, momentum = response.json()["runs"]
    assert adam["label"] == "mine" and momentum["label"] == "momentum"
    assert len(adam["points"]) == 51 and len(adam["lr"]) == 50
    assert set(adam["state"]) == {"exp_avg", "exp_avg_sq"}
    assert set(momentum["state"]) == {"momentum_buffer"}

    p = torch.tensor([-1.5, 2.0], requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.0005, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for _ in range(50):
        optimizer.zero_grad()
        loss = (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p], max_norm=5)
        optimizer.step()
        scheduler.step()
    assert momentum["points"][-1] == pytest.approx(p.detach().tolist(), abs=1e-6)
    assert momentum["state"]["momentum_buffer"][-1] == pytest.approx(
        optimizer.state[p]["momentum_buffer"].tolist(), abs=1e-6)
    assert max(momentum["grad_norm_clipped"]) <= 5 + 1e-5 < max(momentum["grad_norm"])


def test_a_diverging_run_is_not_an_error_and_the_json_has_no_nan(client: TestClient) -> None:
    response = client.post("/api/descent", json={**ROSENBROCK, "steps": 100, "runs": [
        {"optimizer": "sgd", "lr": 0.004}, {"optimizer": "sgd", "lr": 0.001}]})
    assert response.status_code == 200
    json.loads(response.text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    wild, calm = response.json()["runs"]
    assert wild["diverged_at"] is not None and len(wild["points"]) == wild["diverged_at"] + 1
    assert wild["loss"][-1] in ("Infinity", "NaN") and calm["diverged_at"] is None


def test_the_sweep_says_which_lr_it_picked_and_races_with_it(client: TestClient) -> None:
    response = client.post("/api/descent", json={**ROSENBROCK, "steps": 60, "sweep": True,
                                                 "runs": [{"optimizer": "sgd"},
                                                          {"optimizer": "adam"}]})
    assert response.status_code == 200, response.text
    for run in response.json()["runs"]:
        sweep = run["sweep"]
        finals = [v if isinstance(v, float) else math.inf for v in sweep["final_loss"]]
        assert sweep["picked"] == sweep["lrs"][finals.index(min(finals))]
        assert run["lr"][0] == sweep["picked"] and run["settings"]["lr"] == sweep["picked"]


def test_a_learners_surface_races_in_the_sandbox(client: TestClient) -> None:
    body = {"surface": {"expr": "(x - 1)**2 + (y + 2)**2"}, "start": [0, 0], "steps": 100,
            "runs": [{"optimizer": "sgd", "lr": 0.1}]}
    (run,) = client.post("/api/descent", json=body).json()["runs"]
    assert run["points"][-1] == pytest.approx([1.0, -2.0], abs=1e-4)


def test_noisy_races_repeat_for_the_same_seed(client: TestClient) -> None:
    body = {**ROSENBROCK, "steps": 30, "noise": 2.0, "seed": 3,
            "runs": [{"optimizer": "adam", "lr": 0.05}]}
    first, second = (client.post("/api/descent", json=body).json() for _ in range(2))
    quiet = client.post("/api/descent", json={**body, "noise": 0.0}).json()
    assert first == second and first != quiet


def test_basins_colour_each_start_by_the_minimum_it_reaches(client: TestClient) -> None:
    response = client.post("/api/basins", json={
        "surface": "himmelblau", "run": {"optimizer": "adam", "lr": 0.1},
        "x_range": [-5, 5], "y_range": [-5, 5], "resolution": 20, "steps": 150})
    assert response.status_code == 200, response.text
    basins = response.json()
    assert len(basins["basin"]) == 20 and len(basins["basin"][0]) == 20
    assert {v for row in basins["basin"] for v in row} == {0, 1, 2, 3}
    assert len(basins["minima"]) == 4


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p["id"])
def test_every_preset_is_a_valid_race(client: TestClient, preset: dict[str, object]) -> None:
    body = {k: v for k, v in preset.items() if k not in ("id", "section")}
    response = client.post("/api/descent", json=body)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("expr", ["open('/etc/passwd').read()",
                                  "__import__('os').listdir('/')",
                                  "__import__('socket').socket()"])
def test_a_surface_that_reaches_for_the_machine_meets_the_wall(client: TestClient,
                                                               expr: str) -> None:
    for path, body in [("/api/surface", {"surface": {"expr": expr}, "x_range": [0, 1],
                                         "y_range": [0, 1]}),
                       ("/api/descent", {"surface": {"expr": expr}, "start": [0, 0],
                                         "runs": [{"optimizer": "sgd"}]})]:
        error = assert_error(client.post(path, json=body), 400, "program_error")
        assert error["hint_key"] == "hint.walled" and error["line"] == 1, error


@pytest.mark.parametrize(("body", "status", "kind"), [
    ({**ROSENBROCK, "runs": [{"optimizer": "lion"}]}, 422, "request_invalid"),
    ({**ROSENBROCK, "runs": []}, 422, "request_invalid"),
    ({**ROSENBROCK, "steps": 10**6, "runs": [{"optimizer": "sgd"}]}, 422, "request_invalid"),
    ({**ROSENBROCK, "runs": [{"optimizer": "sgd", "scheduler": {"kind": "nope"}}]}, 422,
     "request_invalid"),
    ({**ROSENBROCK, "runs": [{"optimizer": "adam", "not_an_option": 1}]}, 422,
     "request_invalid"),
    ({**ROSENBROCK, "runs": [{"optimizer": "sgd", "lr": 0.1,
                              "scheduler": {"kind": "warmup", "start_factor": 2.0}}]},
     422, "request_invalid"),
    ({"surface": "nowhere", "start": [0, 0], "runs": [{"optimizer": "sgd"}]}, 422,
     "request_invalid"),
    ({"surface": {"expr": "x +"}, "start": [0, 0], "runs": [{"optimizer": "sgd"}]}, 400,
     "program_error"),
    ({"surface": {"expr": "torch.stack([x, y])"}, "start": [0, 0],
      "runs": [{"optimizer": "sgd"}]}, 400, "program_error"),
])
def test_bad_descent_requests_get_the_error_envelope(client: TestClient, body: dict[str, object],
                                                     status: int, kind: str) -> None:
    assert_error(client.post("/api/descent", json=body), status, kind)


def _race(client: TestClient, *runs: dict[str, object], steps: int = 10) -> httpx.Response:
    return client.post("/api/descent", json={**ROSENBROCK, "steps": steps, "runs": list(runs)})


@pytest.mark.parametrize(("run", "field"), [
    # Each was a 502: torch divided by the option while stepping (ZeroDivisionError).
    ({"optimizer": "sgd", "scheduler": {"kind": "step", "step_size": 0}}, "step_size"),
    ({"optimizer": "sgd", "scheduler": {"kind": "cosine", "T_max": 0}}, "T_max"),
    # IndexError while building Adam, and ValueError while stepping it.
    ({"optimizer": "adam", "betas": [0.9]}, "betas"),
    ({"optimizer": "adam", "betas": [0.9, 0.99, 0.5]}, "betas"),
    # capturable on the CPU: an AssertionError at the first step.
    ({"optimizer": "adam", "capturable": True}, "capturable"),
    ({"optimizer": "sgd", "weight_decay": 1e308}, "weight_decay"),
    ({"optimizer": "adam", "betas": "NaN"}, "betas"),
    ({"optimizer": "sgd", "scheduler": {"kind": "onecycle", "div_factor": 0}}, "div_factor"),
])
def test_an_option_torch_would_fail_on_is_refused_at_the_door_naming_it(
        client: TestClient, run: dict[str, object], field: str) -> None:
    error = assert_error(_race(client, run), 422, "request_invalid")
    assert field in str(error["message"]) and "Invalid request" in str(error["message"]), error


@pytest.mark.parametrize("flag", ["foreach", "fused", "capturable", "differentiable"])
def test_torchs_implementation_flags_are_refused_by_name(client: TestClient, flag: str) -> None:
    error = assert_error(_race(client, {"optimizer": "adam", flag: False}), 422,
                         "request_invalid")
    assert f"takes no {flag}" in str(error["message"]), error


def test_an_unknown_option_is_refused_with_the_options_there_are(client: TestClient) -> None:
    error = assert_error(_race(client, {"optimizer": "adam", "momentum": 0.9}), 422,
                         "request_invalid")
    assert "unknown option 'momentum' for optimizer adam" in str(error["message"]), error
    assert "betas, eps, weight_decay" in str(error["message"]), error
    error = assert_error(_race(client, {"optimizer": "sgd", "scheduler": {
        "kind": "step", "last_epoch": 3}}), 422, "request_invalid")
    assert "'last_epoch' for scheduler step; the options are step_size, gamma" in str(
        error["message"]), error


@pytest.mark.parametrize("run", [
    {"optimizer": "nesterov", "momentum": 0},
    {"optimizer": "nesterov", "dampening": 0.1},
    {"optimizer": "sgd", "nesterov": True},
])
def test_nesterov_needs_momentum_and_no_dampening(client: TestClient,
                                                  run: dict[str, object]) -> None:
    error = assert_error(_race(client, run), 422, "request_invalid")
    assert "nesterov needs momentum above 0 and dampening 0" in str(error["message"]), error


def test_options_that_clash_with_the_race_are_refused_naming_them(client: TestClient) -> None:
    short = {"optimizer": "adam", "scheduler": {"kind": "onecycle", "total_steps": 5}}
    error = assert_error(_race(client, short, steps=10), 422, "request_invalid")
    assert "runs.0: scheduler onecycle: total_steps must be at least the run's 10 steps" in str(
        error["message"]), error
    no_momentum = {"optimizer": "adagrad", "scheduler": {"kind": "onecycle"}}
    error = assert_error(_race(client, no_momentum), 422, "request_invalid")
    assert "cycle_momentum" in str(error["message"]), error
    assert _race(client, {**no_momentum, "scheduler": {"kind": "onecycle",
                                                       "cycle_momentum": False}}).is_success
    one_group = {"optimizer": "adam", "scheduler": {"kind": "plateau", "min_lr": [0.0, 0.0]}}
    error = assert_error(_race(client, one_group), 422, "request_invalid")
    assert "min_lr has 2 values" in str(error["message"]), error
    assert _race(client, {**one_group, "lr_y": 0.01}).is_success


@pytest.mark.parametrize(("run", "named"), [
    # torch finds these wrong only as it builds or steps: the last judge, by the options' names.
    ({"optimizer": "adam", "lr": 3e38}, "adam at step 1 with lr=3e+38"),
    ({"optimizer": "sgd", "scheduler": {"kind": "onecycle", "pct_start": 0.1}},
     "scheduler onecycle with max_lr=0.001, total_steps=10, pct_start=0.1: ZeroDivisionError"),
])
def test_what_torch_refuses_only_as_it_runs_is_a_422_naming_the_options(
        client: TestClient, run: dict[str, object], named: str) -> None:
    error = assert_error(_race(client, run), 422, "request_invalid")
    assert str(error["message"]).startswith(named), error


def test_a_basins_lr_past_float32_diverges_instead_of_failing(client: TestClient) -> None:
    response = client.post("/api/basins", json={
        "surface": "himmelblau", "run": {"optimizer": "sgd", "lr": 1e300}, "x_range": [-5, 5],
        "y_range": [-5, 5], "resolution": 3, "steps": 5})
    assert response.status_code == 200, response.text
    assert {v for row in response.json()["basin"] for v in row} == {-1}


def test_an_oversize_grid_is_refused(client: TestClient) -> None:
    response = client.post("/api/surface", json={"surface": "booth", "x_range": [0, 1],
                                                  "y_range": [0, 1], "resolution": 5000})
    assert_error(response, 422, "request_invalid")


def test_the_page_serves_its_data_and_only_our_own_scripts(client: TestClient) -> None:
    response = client.get("/descent?lang=zh-CN")
    assert response.status_code == 200
    html = response.text
    assert '<script type="application/json" id="page-data">' in html
    assert "/vendor/plotly.min.js" in html and "/static/descent.js" in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert "梯度" in html  # the Chinese strings
    for preset in PRESETS:
        assert f'value="{preset["id"]}"' in html


def test_replies_carry_float32_values_exactly_and_only_the_documented_fields(
        client: TestClient) -> None:
    # The jobs write these bodies themselves (gradient_lab.wire): float32 numbers as float32's
    # shortest decimal. Read back as float32 they are torch's values bit for bit, and the fields are
    # exactly the response models'.
    body = {**ROSENBROCK, "steps": 40, "sweep": True, "runs": [
        {"optimizer": "adam", "lr": 0.05}, {"optimizer": "rmsprop", "lr": 0.01,
                                            "clip": {"kind": "value", "max": 1}}]}
    response = client.post("/api/descent", json=body)
    assert response.status_code == 200, response.text
    reply = schemas.DescentResponse.model_validate_json(response.content)
    runs = response.json()["runs"]
    for run in runs:
        assert set(run) == set(schemas.TrajectoryOut.model_fields)
        assert set(run["sweep"]) == set(schemas.SweepOut.model_fields)
    fn = surface_fn("rosenbrock")
    theirs = race(fn, (-1.5, 2.0), 40, [Run(r.optimizer, lr=r.settings["lr"], clip=c)
                                        for r, c in zip(reply.runs, [None, {"kind": "value",
                                                                            "max": 1}],
                                                        strict=True)])
    for ours, plain in zip(runs, theirs, strict=True):
        for key in ("points", "loss", "grad", "grad_norm", "grad_norm_clipped"):
            got = np.asarray(ours[key], dtype=np.float32)
            assert np.array_equal(got, np.asarray(getattr(plain, key), dtype=np.float32)), key
        for key, values in ours["state"].items():
            assert np.array_equal(np.asarray(values, dtype=np.float32),
                                  np.asarray(plain.state[key], dtype=np.float32)), key
    # Short: at most float32's 9 significant digits, not a double's 17.
    digits = [len(m.group(1).replace(".", "").lstrip("0"))
              for m in re.finditer(r"(?<![\w.])-?([0-9]+\.[0-9]+)", response.text)]
    assert digits and max(digits) <= 9, max(digits)

    grid = client.post("/api/surface", json={"surface": "rosenbrock", "x_range": [-2, 2],
                                             "y_range": [-1, 3], "resolution": 5})
    assert set(grid.json()) == set(schemas.GridResponse.model_fields)
    basins = client.post("/api/basins", json={
        "surface": "himmelblau", "run": {"optimizer": "adam", "lr": 0.1}, "x_range": [-5, 5],
        "y_range": [-5, 5], "resolution": 4, "steps": 50})
    assert basins.status_code == 200, basins.text
    assert set(basins.json()) == set(schemas.BasinsResponse.model_fields)
    schemas.BasinsResponse.model_validate_json(basins.content)


def test_a_race_past_its_steps_is_refused_before_it_runs(client: TestClient) -> None:
    runs = [{"optimizer": "adam", "lr": 0.1}] * 12
    error = assert_error(client.post("/api/descent", json={
        "surface": "rosenbrock", "start": [-1, 1], "steps": 5000, "runs": runs}), 413, "too_large")
    assert "12 runs x 5000 steps is 60,000 optimizer steps; the limit is 30,000" in error["message"]
    assert error["hint"]
    # An lr sweep races each run at every lr it tries first: those steps count too.
    error = assert_error(client.post("/api/descent", json={
        "surface": "rosenbrock", "start": [-1, 1], "steps": 1000, "runs": runs, "sweep": True}),
        413, "too_large")
    assert "of the lr sweep" in error["message"]


def test_a_basins_map_past_its_steps_is_refused_as_the_setting_says(client: TestClient) -> None:
    body = {"surface": "himmelblau", "run": {"optimizer": "sgd", "lr": 0.01},
            "x_range": [-5, 5], "y_range": [-5, 5], "resolution": 20, "steps": 100}
    assert client.post("/api/basins", json=body).status_code == 200
    client.app.dependency_overrides[get_settings] = lambda: Settings(basins_steps=20 * 20 * 99)
    try:
        error = assert_error(client.post("/api/basins", json=body), 413, "too_large")
    finally:
        client.app.dependency_overrides.clear()
    assert "20x20 starts x 100 steps is 40,000 optimizer steps" in error["message"]
