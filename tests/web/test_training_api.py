"""/api/training/... against the domain functions, the error envelope, and the /training page."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from gradient_lab import jobs, wire
from gradient_lab.optimizers import OPTIMIZERS
from gradient_lab.settings import get_settings, load_settings
from gradient_lab.training import TrainConfig, accumulate, gradient_flow, train
from gradient_lab.web import schemas
from tests.helpers import assert_error

ROOT = Path(__file__).resolve().parents[2]


def _events(body: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each server-sent event; "message" when the event is unnamed."""
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields.get("event", "message"), json.loads(fields["data"])))
    return events


def test_flow_gives_what_the_domain_function_gives(client: TestClient) -> None:
    options = {"depth": 6, "width": 16, "activation": "tanh", "init": "he", "batchnorm": True,
               "residual": True, "steps": 4, "lr": 0.1, "batch": 32, "seed": 1}
    response = client.post("/api/training/flow", json={**options, "device": "cpu"})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = gradient_flow(**options, device=torch.device("cpu"))  # type: ignore[arg-type]
    assert body["layers"] == expected.layers
    assert body["norms"] == pytest.approx(expected.norms, rel=1e-4)
    assert [len(row) for row in body["heatmap"]] == [4] * 7


def test_flow_sigmoid_preset_vanishes_through_the_api(client: TestClient) -> None:
    body = client.post("/api/training/flow", json={"width": 16, "steps": 1}).json()
    assert body["norms"][0] < 1e-3 * body["norms"][-1] and body["ratio"] < 1e-3


def test_run_streams_one_event_per_chunk_and_matches_the_domain(client: TestClient) -> None:
    request = {"steps": 40, "points": 200, "width": 16, "batch_size": 50, "lr": 0.05}
    response = client.post("/api/training/run", json=request)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    assert [name for name, _ in events] == ["message"] * 4
    chunks = [data for _, data in events]
    assert [c["start"] for c in chunks] == [0, 10, 20, 30]
    assert chunks[0]["data"]["grid_x"] and all(c["data"] is None for c in chunks[1:])
    config = TrainConfig(**request)  # type: ignore[arg-type]
    losses = [v for c in chunks for v in c["loss"]]
    expected = [v for chunk in train(config, device=torch.device("cpu"), max_chunks=200)
                for v in chunk.loss]
    assert losses == pytest.approx(expected, rel=1e-4)


def test_a_refused_run_answers_with_its_status_before_streaming(client: TestClient) -> None:
    error = assert_error(client.post("/api/training/run", json={"steps": 5000}), 413, "too_large")
    assert error["message"] == "steps is 5000; the limit is 2000"
    assert error["hint"]
    assert_error(client.post("/api/training/run", json={"optimizer": "lbfgs"}),
                 422, "request_invalid")
    assert_error(client.post("/api/training/run", json={"nope": 1}), 422, "request_invalid")
    assert_error(client.post("/api/training/run", json={"clip": "value", "max_norm": 1e308}),
                 422, "request_invalid")  # was a 500: clamp cannot hold it in float32
    assert_error(client.post("/api/training/flow", json={"width": 10_000}), 413, "too_large")
    # Past 64 bits: JSON allows it, and it must reach the same 413, not a 500 on the way.
    assert_error(client.post("/api/training/flow", json={"width": 10**30}), 413, "too_large")
    assert_error(client.post("/api/training/nan", json={"cause": "gremlins"}),
                 422, "request_invalid")
    if not torch.cuda.is_available():
        error = assert_error(client.post("/api/training/flow", json={"device": "cuda"}),
                             400, "program_error")
        assert error["hint_key"] == "hint.no_cuda"


@pytest.mark.parametrize("name", [name for name in schemas.LESSONS
                                  if name not in schemas.training.RULED])
def test_a_lesson_request_keeps_its_functions_bounds(client: TestClient, name: str) -> None:
    # Built from the function's signature: each field's lower bound refuses what is below it,
    # at the door, naming the field; an unknown keyword is refused too.
    schema = schemas.LESSONS[name].request.model_json_schema()["properties"]
    bounded = {field: spec for field, spec in schema.items()
               if "minimum" in spec or "exclusiveMinimum" in spec}
    assert bounded, f"{name}'s request has no bounded field"
    for field, spec in bounded.items():
        below = spec["minimum"] - 1 if "minimum" in spec else spec["exclusiveMinimum"]
        error = assert_error(client.post(f"/api/training/{name}", json={field: below}),
                             422, "request_invalid")
        assert field in str(error["message"]), error
    assert_error(client.post(f"/api/training/{name}", json={"nope": 1}), 422, "request_invalid")


def test_a_scheduler_its_optimizer_cannot_drive_is_refused_at_the_door(
        client: TestClient) -> None:
    error = assert_error(client.post("/api/training/run", json={
        "optimizer": "adagrad", "scheduler": "onecycle", "steps": 5}), 422, "request_invalid")
    message = str(error["message"])
    assert message.startswith("Invalid request: body: ") and "cycle_momentum" in message
    assert "scheduler onecycle with optimizer adagrad" in message, message
    response = client.post("/api/training/run", json={
        "optimizer": "adam", "scheduler": "onecycle", "steps": 5, "points": 20, "width": 4})
    assert response.status_code == 200, response.text


def test_a_run_past_its_time_ends_the_stream_with_the_envelope(client: TestClient) -> None:
    settings = load_settings().model_copy(update={"stream_seconds": 1.5})
    client.app.dependency_overrides[get_settings] = lambda: settings  # type: ignore[attr-defined]
    try:
        response = client.post("/api/training/run", json={
            "steps": 2000, "points": 1000, "width": 256, "depth": 4, "batch_size": 500},
            headers={"Accept-Language": "zh-CN"})
    finally:
        client.app.dependency_overrides.clear()  # type: ignore[attr-defined]
    events = _events(response.text)
    names = [name for name, _ in events]
    assert set(names[:-1]) == {"message"} and names[-1] == "error", names
    error = events[-1][1]["error"]
    assert error["type"] == "timeout" and error["hint_key"] == "hint.timeout"
    assert re.search(r"[\u4e00-\u9fff]", error["hint"])  # the hint in the asked-for language


def test_accumulation_through_the_api_matches_within_1e_6(client: TestClient) -> None:
    body = client.post("/api/training/accumulation", json={"micro_batches": 4}).json()
    assert body["max_difference"] < 1e-6
    assert body["ratio_undivided"] == pytest.approx(4.0, rel=1e-5)
    expected = accumulate(micro_batches=4, micro_batch=32, seed=0, device=torch.device("cpu"))
    assert body["layers"] == expected.layers


def test_precision_through_the_api_reports_both_curves(client: TestClient) -> None:
    body = client.post("/api/training/precision",
                       json={"steps": 5, "width": 32, "batch": 64, "device": "cpu"}).json()
    assert body["dtype"] == "bfloat16" and len(body["loss_fp32"]) == len(body["loss_amp"]) == 5
    assert body["seconds_fp32"] > 0 and body["seconds_amp"] > 0


def test_nan_hunt_through_the_api_marks_the_step_and_names_the_op(client: TestClient) -> None:
    body = client.post("/api/training/nan", json={"cause": "log0"}).json()
    assert body["first_nonfinite_step"] == len(body["loss"]) - 1
    assert body["origin"] == {"phase": "forward", "module": "loss", "op": "log"}
    assert body["loss"][-1] == "NaN"
    fixed = client.post("/api/training/nan", json={"cause": "log0", "fix": "epsilon"}).json()
    assert fixed["first_nonfinite_step"] is None


@pytest.mark.parametrize("name", [name for name, lesson in schemas.LESSONS.items()
                                  if not lesson.streamed])
def test_a_child_finds_each_lessons_function_by_the_name_the_route_sends(name: str) -> None:
    lesson = schemas.LESSONS[name]
    module, _, function = lesson.function.partition(":")
    assert getattr(importlib.import_module(module), function) is lesson.lesson.run


def test_the_lesson_job_answers_what_its_function_answers() -> None:
    options = {"micro_batches": 2, "micro_batch": 4, "seed": 3}
    reply = jobs.lesson(schemas.LESSONS["accumulation"].function, "cpu", options)
    assert reply == wire.dumps(accumulate(device=torch.device("cpu"), **options))


def test_the_lesson_job_runs_nothing_outside_the_training_lab() -> None:
    for function in ("os:getcwd", "gradient_lab.jobs:walls", "gradient_lab.trainingx.a:b"):
        with pytest.raises(ValueError, match="is not a function of gradient_lab.training"):
            jobs.lesson(function, "cpu", {})


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_training_page_renders_in_each_language_with_local_plotly(
        client: TestClient, lang: str) -> None:
    response = client.get(f"/training?lang={lang}")
    assert response.status_code == 200
    html = response.text
    assert f'<html lang="{lang}">' in html
    assert "/static/training.js" in html and "/vendor/plotly.min.js" in html
    assert "cdn" not in html.lower() and "https://" not in html
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert data is not None
    choices = json.loads(data.group(1))["choices"]
    assert choices["optimizers"][0] == "sgd" and "sigmoid_vanishes" in choices["flow_presets"]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_training_page_names_each_optimizer_as_its_entry_does(
        client: TestClient, lang: str) -> None:
    html = client.get(f"/training?lang={lang}").text
    for name, kind in OPTIMIZERS.items():
        assert f'<option value="{name}">{kind.labels[lang]}</option>' in html


def _keys_the_page_uses() -> set[str]:
    """Every i18n key the template and training.js name, the menus' keys built from choices."""
    template = "".join(path.read_text(encoding="utf-8") for path in
                       [ROOT / "templates" / "training.html",
                        *sorted((ROOT / "templates" / "training").glob("*.html"))])
    script = (ROOT / "static" / "training.js").read_text(encoding="utf-8")
    used = set(re.findall(r"""strings\[["']([\w.]+)["']\]""", template))
    used |= {key for key in re.findall(r"""\bt\(["']([\w.]+)["']""", script)
             if not key.endswith(".")}  # a prefix: its keys are built below
    used |= {f"training.field.{name}"
             for name in re.findall(r'(?:number|choice|check)\("\w+", "(\w+)"', template)}
    from gradient_lab.web.routes.training import _choices

    choices: dict[str, Any] = _choices()
    menus = {"activation": "activations", "init": "inits", "dataset": "datasets",
             "scheduler": "schedulers", "clip": "clips",
             "nan.cause": "causes", "nan.fix": "fixes", "flow.preset": "flow_presets"}
    for prefix, menu in menus.items():
        used |= {f"training.{prefix}.{name}" for name in choices[menu]}
    used |= {f"training.{part}.{lesson}" if part == "tab" else f"training.{lesson}.{part}"
             for lesson in choices["lessons"] for part in ("tab", "intro")}
    used |= {f"training.device.{d}" for d in ("auto", "cpu", "cuda")}
    used |= {f"training.flow.verdict.{v}" for v in ("vanishing", "exploding", "healthy")}
    used |= {f"training.nan.phase.{p}" for p in ("forward", "backward", "update")}
    used |= {f"training.nan.why.{c}" for c in choices["causes"]}
    used |= {f"training.precision.summary.{d}" for d in ("cpu", "cuda")}
    used |= {f"training.accumulation.{k}" for k in ("big_batch", "accumulated", "undivided")}
    return used


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_every_string_the_training_page_uses_exists(lang: str) -> None:
    used = _keys_the_page_uses()
    assert len(used) > 100
    strings = json.loads((ROOT / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))
    assert sorted(used - set(strings)) == []


@pytest.mark.parametrize(("name", "body"), [
    ("flow", {"depth": 3}), ("accumulation", {}), ("nan", {"cause": "lr"}),
])
def test_the_workers_json_is_the_documented_lesson_field_for_field(
        client: TestClient, name: str, body: dict[str, object]) -> None:
    # The worker writes these bodies (gradient_lab.wire) from the dataclass the lesson's function
    # returns; OpenAPI documents that dataclass as the reply, with no field more or less.
    response = client.post(f"/api/training/{name}", json=body)
    assert response.status_code == 200, response.text
    reply = schemas.LESSONS[name].reply
    TypeAdapter(reply).validate_json(response.content)
    documented = client.get("/openapi.json").json()
    ref = documented["paths"][f"/api/training/{name}"]["post"]["responses"]["200"]["content"][
        "application/json"]["schema"]["$ref"]
    properties = documented["components"]["schemas"][ref.rpartition("/")[2]]["properties"]
    assert set(response.json()) == {f.name for f in dataclasses.fields(reply)} == set(properties)