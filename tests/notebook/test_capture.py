"""The graph lab in the learner's kernel: a recorded cell gives the graph /api/graph gives for the
same program, and show() draws the graph behind a tensor, before backward or after it."""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gradient_lab.errors import ProgramError
from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.jobs import graph_of
from gradient_lab.notebook import capture
from gradient_lab.notebook.capture import is_users_code, record, trace_tensor
from gradient_lab.runner.limits import Limits
from tests.notebook.cells import recorded, run_cell

ROOT = Path(__file__).resolve().parents[2]


def _shifted(value: Any, by: int) -> Any:
    """The graph as plain data with every `line` moved by `by` (the cell's `with` line)."""
    if isinstance(value, dict):
        return {k: (v + by if k == "line" and isinstance(v, int) and v else _shifted(v, by))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_shifted(v, by) for v in value]
    return value


PROGRAMS = [e for e in EXAMPLES.values() if e.fails_at is None and not e.refused]


@pytest.mark.parametrize("example", PROGRAMS, ids=[e.id for e in PROGRAMS])
def test_a_recorded_cell_is_the_graph_the_api_draws_for_the_same_program(
        example: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = dataclasses.asdict(graph_of(example.program, "cpu", Limits()))
    cell = dataclasses.asdict(recorded(example.program, tmp_path))
    printed = capsys.readouterr().out  # the cell prints to its own output, not into the graph
    assert at_address(printed) == at_address(page.pop("stdout")) and cell.pop("stdout") == ""
    assert _shifted(cell, -1) == page


def test_a_recorded_cell_names_what_it_used_from_earlier_cells(tmp_path: Path) -> None:
    namespace = run_cell("import torch\nw = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                         "unrelated = torch.ones(3, requires_grad=True)\n", tmp_path,
                         {"__name__": "__main__", "record": record})
    run_cell("with record() as run:\n    loss = (w ** 2).sum()\n    loss.backward()\n", tmp_path,
             namespace)
    graph = namespace["run"].graph
    names = {n.name for n in graph.nodes if n.name}
    assert names == {"w", "loss"}  # not the notebook's other tensors
    assert graph.backward[0].line == 3 and [s.op for s in graph.backward[0].steps] == [
        "SumBackward0", "PowBackward0", "AccumulateGrad"]


def test_show_before_backward_steps_through_what_backward_will_do_and_keeps_every_grad(
        tmp_path: Path) -> None:
    s1 = EXAMPLES["S1"].program
    namespace = run_cell(s1 + "a.grad = torch.tensor([100.0])\nkept = a.grad\n", tmp_path)
    graph, note = trace_tensor(namespace["loss"], namespace)
    assert note is not None and note.key == "notebook.rehearsal"
    page = graph_of(EXAMPLES["S2"].program, "cpu", Limits())
    names = {n.id: n.name for n in graph.nodes}
    page_names = {n.id: n.name for n in page.nodes}
    assert [(names[s.node], s.op, s.grad_outputs) for s in graph.backward[0].steps] == [
        (page_names[s.node], s.op, s.grad_outputs) for s in page.backward[0].steps]
    # Nothing the learner holds has changed: a.grad is the same tensor, with the same value.
    assert namespace["a"].grad is namespace["kept"] and namespace["kept"].tolist() == [100.0]
    assert namespace["b"].grad is None
    run_cell("loss.backward()\n", tmp_path, namespace)  # and their own backward still runs
    assert namespace["a"].grad.tolist() == [142.0] and namespace["b"].grad.tolist() == [28.0]


def test_show_after_backward_draws_the_grads_and_says_its_steps_are_gone(tmp_path: Path) -> None:
    namespace = run_cell(EXAMPLES["S2"].program, tmp_path)
    graph, note = trace_tensor(namespace["loss"], namespace)
    assert note is not None and note.key == "notebook.freed" and note.params == {"name": "loss"}
    assert graph.backward == []
    leaves = {n.name: n.grad for n in graph.nodes if n.kind == "leaf"}
    assert leaves == {"a": [42.0], "b": [28.0]}
    assert namespace["a"].grad.tolist() == [42.0]  # the failed rehearsal added nothing


def test_show_names_an_unnamed_tensor_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    namespace = run_cell("import torch\nx = torch.tensor(3.0, requires_grad=True)\n", tmp_path)
    graph, note = trace_tensor(namespace["x"] * 2, namespace)
    assert {n.name for n in graph.nodes} == {"x", capture.UNNAMED}
    assert note is not None and note.key == "notebook.rehearsal"
    vector, note = trace_tensor(namespace["x"] * torch.ones(3), namespace)
    assert note is not None and note.key == "notebook.not_scalar" and vector.backward == []
    with pytest.raises(TypeError, match="show\\(loss\\)"):
        trace_tensor(3.0, namespace)  # type: ignore[arg-type]


def test_show_inside_a_recorded_cell_adds_no_backward_call_to_it(tmp_path: Path) -> None:
    namespace = run_cell(
        "import torch\nwith record() as run:\n    x = torch.tensor(2.0, requires_grad=True)\n"
        "    y = x ** 3\n    shown, note = trace_tensor(y, globals())\n    y.backward()\n",
        tmp_path, {"__name__": "__main__", "record": record, "trace_tensor": trace_tensor})
    assert namespace["note"].key == "notebook.rehearsal"
    assert len(namespace["run"].graph.backward) == 1  # the cell's own y.backward() only
    assert namespace["x"].grad.item() == 12.0


def test_the_learners_code_is_told_apart_from_libraries_and_the_lab(tmp_path: Path) -> None:
    assert is_users_code(str(tmp_path / "cell1.py"))
    assert is_users_code("/tmp/ipykernel_123/456.py") and is_users_code("<ipython-input-3-ab>")
    assert not is_users_code(torch.__file__) and not is_users_code(np.__file__)
    assert not is_users_code(capture.__file__) and not is_users_code(random.__file__)
    assert not is_users_code("<frozen importlib._bootstrap>") and not is_users_code("<string>")


def test_importing_show_starts_no_server_and_needs_no_web_stack() -> None:
    probe = ("import sys, gradient_lab\nassert 'torch' not in sys.modules\n"
             "from gradient_lab import record, show\n"
             "web = {'fastapi', 'starlette', 'pydantic', 'uvicorn', 'redis', 'pyseccomp'}\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in web\n"
             "             or m.startswith(('gradient_lab.runner.pool', 'gradient_lab.web'))))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_graph_past_the_node_limit_is_left_out_and_says_why(tmp_path: Path) -> None:
    namespace = run_cell("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\n"
                         f"for _ in range({capture.LIMITS.graph_nodes}):\n    y = y * 1.0\n",
                         tmp_path)
    graph, _ = trace_tensor(namespace["y"], namespace)
    assert graph.nodes == [] and graph.omitted and "2,000 nodes" in graph.omitted


def test_a_cell_that_raises_keeps_its_error_and_draws_what_the_page_draws(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = EXAMPLES["S6"].program  # d.backward() on a graph cut by detach()
    with pytest.raises(ProgramError) as page:
        graph_of(program, "cpu", Limits())
    namespace = {"__name__": "__main__", "record": record}
    with pytest.raises(RuntimeError, match="does not require grad"):  # the cell's own error
        run_cell("with record() as run:\n" + textwrap.indent(program, "    "), tmp_path,
                 namespace)
    cell = dataclasses.asdict(namespace["run"].graph)
    assert cell.pop("stdout") == "" and page.value.partial is not None
    partial = dict(page.value.partial)
    assert at_address(partial.pop("stdout")) == at_address(capsys.readouterr().out)
    assert _shifted(cell, -1) == partial


def at_address(text: str) -> str:
    """What a program printed, less where each object lives (print(x.grad_fn) says so)."""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


@pytest.mark.cuda
def test_a_cell_on_the_gpu_records_the_graph_the_cpu_gives(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA on this machine")
    program = EXAMPLES["S2"].program.replace("requires_grad=True)", "requires_grad=True, "
                                             "device='cuda')")
    gpu = recorded(program, tmp_path)
    assert gpu.device.startswith("cuda")
    cpu = recorded(EXAMPLES["S2"].program, tmp_path)
    assert [(n.name, n.value, n.grad) for n in gpu.nodes] == [
        (n.name, n.value, n.grad) for n in cpu.nodes]
    namespace = run_cell(program.split("\nloss.backward()")[0] + "\n", tmp_path)
    graph, note = trace_tensor(namespace["loss"], namespace)  # the rehearsal, on the GPU
    assert note is not None and note.key == "notebook.rehearsal" and namespace["a"].grad is None
    assert [s.grad_outputs for s in graph.backward[0].steps] == [
        s.grad_outputs for s in cpu.backward[0].steps]
