"""POST /api/graph against the oracle: the same program run directly in torch."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import traceback

import pytest
import torch
from fastapi.testclient import TestClient

from gradient_lab import wire
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.graph.model import Saved
from gradient_lab.jobs import graph_of as graph
from gradient_lab.runner.limits import Limits
from gradient_lab.settings import get_settings, load_settings
from gradient_lab.web import schemas
from tests.helpers import assert_error

_ADDRESS = re.compile(r" object at 0x[0-9a-f]+")


def _plain_python(program: str) -> tuple[dict[str, object], str, BaseException | None, int | None]:
    """Run the program as a learner would in a plain Python session (seeded like the runner)."""
    torch.manual_seed(0)
    namespace: dict[str, object] = {}
    out = io.StringIO()
    error, line = None, None
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(program, "<program>", "exec"), namespace)  # the oracle, not the app
    except Exception as exc:  # noqa: BLE001 - the error is what some examples teach
        error = exc
        line = [f for f in traceback.extract_tb(exc.__traceback__)
                if f.filename == "<program>"][-1].lineno
    return namespace, out.getvalue(), error, line


def _json_number(x: object) -> object:
    # The API's JSON spells non-finite numbers as strings JavaScript's Number() reads back.
    if isinstance(x, list):
        return [_json_number(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def _values(t: torch.Tensor | None) -> object:
    return None if t is None else _json_number(t.detach().tolist())


_RUNS = [lesson for lesson in EXAMPLES.values() if lesson.fails_at is None]
_FAILS = [lesson for lesson in EXAMPLES.values()
          if lesson.fails_at is not None and not lesson.refused]


@pytest.mark.parametrize("lesson", _RUNS, ids=lambda lesson: lesson.id)
def test_example_gives_exactly_what_torch_gives(client: TestClient, lesson: object) -> None:
    program = lesson.program  # type: ignore[attr-defined]
    response = client.post("/api/graph", json={"code": program, "device": "cpu"})
    assert response.status_code == 200, response.text
    body = response.json()
    namespace, stdout, error, _ = _plain_python(program)
    assert error is None
    assert _ADDRESS.sub("", body["stdout"]) == _ADDRESS.sub("", stdout)
    tensors = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor)}
    assert list(body["variables"]) == list(tensors)
    for name, t in tensors.items():
        got = body["variables"][name]
        assert got["value"] == _values(t), name
        grad = t.grad if (t.is_leaf or t.retains_grad) else None
        assert got["grad"] == _values(grad), name
        assert got["requires_grad"] == t.requires_grad, name
        assert got["is_leaf"] == t.is_leaf, name
        assert got["grad_fn"] == (None if t.grad_fn is None else type(t.grad_fn).__name__), name
        assert got["shape"] == list(t.shape), name


@pytest.mark.parametrize("lesson", _FAILS, ids=lambda lesson: lesson.id)
def test_failing_example_reports_torchs_error_at_its_line(client: TestClient,
                                                         lesson: object) -> None:
    program = lesson.program  # type: ignore[attr-defined]
    error = assert_error(client.post("/api/graph", json={"code": program}), 400, "program_error")
    _, _, expected, line = _plain_python(program)
    assert expected is not None
    assert error["message"] == f"{type(expected).__name__}: {expected}"
    assert error["line"] == line == lesson.fails_at  # type: ignore[attr-defined]
    assert error["hint"] and error["hint_key"]


def test_s2_backward_gives_the_tutorials_gradients(client: TestClient) -> None:
    body = client.post("/api/graph", json={"code": EXAMPLES["S2"].program}).json()
    variables = body["variables"]
    assert variables["a"]["grad"] == [42.0] and variables["b"]["grad"] == [28.0]
    assert [variables[n]["value"] for n in "abcd"] == [[2.0], [3.0], [6.0], [7.0]]
    assert variables["loss"]["value"] == [49.0]
    assert [variables[n]["grad_fn"] for n in ("c", "d", "loss")] == [
        "MulBackward0", "AddBackward0", "PowBackward0"]
    assert body["stdout"] == "tensor([42.])\ntensor([28.])\n"
    assert body["device"] == "cpu"


def test_s3_second_backward_accumulates(client: TestClient) -> None:
    variables = client.post("/api/graph", json={"code": EXAMPLES["S3"].program}).json()["variables"]
    assert variables["a"]["grad"] == [84.0] and variables["b"]["grad"] == [56.0]


def test_s9_second_derivative_is_18(client: TestClient) -> None:
    variables = client.post("/api/graph", json={"code": EXAMPLES["S9"].program}).json()["variables"]
    assert variables["grad_1"]["value"] == [27.0]
    assert variables["grad_1"]["grad_fn"] == "MulBackward0"  # create_graph=True: a graph of its own
    assert variables["grad_2"]["value"] == [18.0]


def test_s10_custom_function_node_is_named_after_the_class(client: TestClient) -> None:
    code = EXAMPLES["S10"].program
    variables = client.post("/api/graph", json={"code": code}).json()["variables"]
    assert variables["y"]["grad_fn"] == "MyReLUBackward"
    xs, grads = variables["x"]["value"], variables["x"]["grad"]
    assert grads == [1.0 if x > 0 else 0.0 for x in xs]


def test_same_program_gives_the_same_json(client: TestClient) -> None:
    program = EXAMPLES["S4"].program
    first = client.post("/api/graph", json={"code": program}).json()
    second = client.post("/api/graph", json={"code": program}).json()
    assert first["variables"] == second["variables"]


def test_nan_and_infinity_travel_as_strings(client: TestClient) -> None:
    code = "import torch\nx = torch.tensor([0.0, 1.0])\ny = torch.log(x)\nz = y / 0\n"
    variables = client.post("/api/graph", json={"code": code}).json()["variables"]
    assert variables["y"]["value"] == ["-Infinity", 0.0]
    assert variables["z"]["value"] == ["-Infinity", "NaN"]


def test_large_tensors_are_summarised(client: TestClient) -> None:
    code = "import torch\nx = torch.ones(100, 100)"
    variables = client.post("/api/graph", json={"code": code}).json()["variables"]
    value = variables["x"]["value"]
    assert value["summary"] is True and value["shape"] == [100, 100] and value["mean"] == 1.0


def test_variables_carry_the_line_that_made_them(client: TestClient) -> None:
    code = "import torch\na = torch.ones(2)\n\nb = a * 3\n"
    variables = client.post("/api/graph", json={"code": code}).json()["variables"]
    assert variables["a"]["line"] == 2 and variables["b"]["line"] == 4


def test_cuda_without_a_gpu_is_a_clear_400(client: TestClient) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    error = assert_error(client.post("/api/graph", json={"code": "x = 1", "device": "cuda"}),
                         400, "program_error")
    assert "GPU" in str(error["message"])


@pytest.mark.cuda
def test_cuda_runs_the_example_on_the_gpu(client: TestClient) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA on this machine")
    body = client.post("/api/graph", json={"code": EXAMPLES["S2"].program, "device": "cuda"}).json()
    assert body["device"].startswith("cuda")
    assert body["variables"]["a"]["grad"] == [42.0]


def test_a_server_set_to_the_cpu_refuses_cuda_with_a_clear_400(client: TestClient) -> None:
    # Its workers keep an address-space limit, under which CUDA could not start at all.
    settings = load_settings().model_copy(update={"device": "cpu"})
    client.app.dependency_overrides[get_settings] = lambda: settings  # type: ignore[attr-defined]
    try:
        error = assert_error(
            client.post("/api/graph", json={"code": "x = 1", "device": "cuda"}),
            400, "program_error")
        body = client.post("/api/graph", json={"code": "import torch\nx = torch.ones(1)"}).json()
    finally:
        client.app.dependency_overrides.pop(get_settings)  # type: ignore[attr-defined]
    assert "only the CPU" in str(error["message"]) and error["hint_key"] == "hint.no_cuda"
    assert body["device"] == "cpu"


@pytest.mark.cuda
def test_a_failed_cuda_kernel_is_a_400_and_the_next_program_runs(client: TestClient) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA on this machine")
    # Out of range: on the CPU an IndexError; on the GPU a device-side assert, which leaves the
    # worker's CUDA unusable.
    code = "import torch\nx = torch.ones(3)\ni = torch.tensor([5])\ny = x[i]\nprint(y)\n"
    error = assert_error(client.post("/api/graph", json={"code": code, "device": "cuda"}),
                         400, "program_error")
    assert error["hint_key"] == "hint.cuda_error", error
    for _ in range(3):  # whichever worker takes them, the next programs run
        body = client.post("/api/graph", json={"code": EXAMPLES["S2"].program,
                                               "device": "cuda"}).json()
        assert body["variables"]["a"]["grad"] == [42.0], body


def test_malformed_request_is_a_422_envelope(client: TestClient) -> None:
    assert_error(client.post("/api/graph", json={"program": "x = 1"}), 422, "request_invalid")


def test_a_graph_over_the_node_limit_is_left_out_and_the_run_still_shown(
        client: TestClient) -> None:
    code = ("import torch\nx = torch.ones(1, requires_grad=True)\ny = x\n"
            "for i in range(3000):\n    y = y * 1.0\nprint(y)\n")
    body = client.post("/api/graph", json={"code": code}).json()
    assert "2,000 nodes" in body["omitted"] and body["nodes"] == []
    assert body["stdout"] == "tensor([1.], grad_fn=<MulBackward0>)\n"
    assert body["variables"]["y"]["grad_fn"] == "MulBackward0"


def test_s20_an_over_large_tensor_is_refused_before_allocating(client: TestClient) -> None:
    error = assert_error(client.post("/api/graph", json={"code": EXAMPLES["S20"].program}),
                         413, "too_large")
    assert error["line"] == EXAMPLES["S20"].fails_at and error["hint_key"] == "hint.too_large"
    assert client.get("/healthz").status_code == 200


def test_successful_response_carries_the_graph(client: TestClient) -> None:
    body = client.post("/api/graph", json={"code": EXAMPLES["S2"].program}).json()
    names = {n["name"] for n in body["nodes"]}
    assert {"a", "b", "c", "d", "loss"} <= names
    assert [s["op"] for s in body["backward"][0]["steps"]][:3] == [
        "PowBackward0", "AddBackward0", "MulBackward0"]
    assert body["first_nonfinite"] is None and body["truncated"] is False


def test_failed_program_sends_its_partial_graph(client: TestClient) -> None:
    response = client.post("/api/graph", json={"code": EXAMPLES["S19"].program})
    assert_error(response, 400, "program_error")
    partial = response.json()["partial"]
    assert partial["backward"][1]["error"].startswith("RuntimeError: Trying to backward")


def test_cross_entropy_graph_carries_nll_losss_saved_ignore_index(client: TestClient) -> None:
    code = ("import torch\nimport torch.nn.functional as F\n"
            "logits = torch.randn(4, 3, requires_grad=True)\nlabels = torch.tensor([0, 2, 1, 1])\n"
            "loss = F.cross_entropy(logits, labels)\nloss.backward()\n")
    body = client.post("/api/graph", json={"code": code}).json()
    nll = next(n for n in body["nodes"] if n["op"] == "NllLossBackward0")
    saved = {s["name"]: s["value"] for s in nll["saved"]}
    assert saved["ignore_index"] == 2**64 - 100  # torch reads -100 back as a uint64


@pytest.mark.parametrize("name", ["S2", "S9", "S10", "S21", "S17"])
def test_the_workers_json_is_the_documented_graph_field_for_field(client: TestClient,
                                                                   name: str) -> None:
    # The worker writes the body (gradient_lab.wire); it must say what the response model says the
    # job's Graph says, with no field more or less.
    code = EXAMPLES[name].program
    body = client.post("/api/graph", json={"code": code})
    assert body.status_code == 200, body.text
    ours = schemas.GraphResponse.model_validate_json(body.content)
    expected = schemas.GraphResponse.model_validate(graph(code, "cpu", Limits()),
                                                    from_attributes=True)
    assert ours.model_dump() == expected.model_dump()
    assert set(body.json()) == set(schemas.GraphResponse.model_fields)
    for node in body.json()["nodes"]:
        assert set(node) == set(schemas.NodeOut.model_fields)


def test_a_number_past_64_bits_still_makes_json() -> None:
    assert json.loads(wire.dumps({"n": 2**70, "x": [1.5]})) == {"n": 2**70, "x": [1.5]}
    # in a dataclass too, which orjson walks itself when no field is float32
    saved = Saved("n", 2**70, None)
    assert json.loads(wire.dumps([saved])) == [{"name": "n", "value": 2**70, "shape": None}]


def test_a_tensor_bound_to_many_names_is_sent_once(client: TestClient) -> None:
    # 2,500 names for one 1,000-number tensor, in 20 KB: each name once repeated its values.
    code = "import torch\nt = torch.arange(1000.0)\n" + "".join(
        f"n{i}=t\n" for i in range(2500))
    response = client.post("/api/graph", json={"code": code})
    assert response.status_code == 200, response.text[:300]
    assert len(response.content) < 1_000_000
    variables = response.json()["variables"]
    assert variables["t"]["value"] == [float(i) for i in range(1000)]
    assert variables["n2499"]["alias_of"] == "t" and variables["n2499"]["value"] is None
    assert variables["n2499"]["shape"] == [1000]


def test_many_tensors_share_one_budget_of_values(client: TestClient) -> None:
    code = "import torch\n" + "".join(f"v{i} = torch.randn(1000) + {i}\n" for i in range(400))
    response = client.post("/api/graph", json={"code": code})
    assert response.status_code == 200 and len(response.content) < 4_000_000
    assert response.json()["variables"]["v0"]["value"]["summary"] is True
