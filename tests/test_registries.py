"""One concept, one declaration (issue 29 item 4): an optimizer, a surface and a lesson added to
their registries, in a copy of the package, reach the schema, the page data and the tests with
no other line changed. The copy is edited as a newcomer would edit the source (ARCHITECTURE.md,
"Where to add"): a lesson is a new module of gradient_lab/training that declares it, its panel
and its drawing; here it answers as the accumulation lesson does, with that lesson's reply,
panel and drawing, and asks for its own keywords."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradient_lab.training.precision import Accumulation
from gradient_lab.web import schemas

ROOT = Path(__file__).resolve().parent.parent

# Each entry, written into its registry's source just after the registry's opening line (or,
# for an import, after the line it follows).
ADDITIONS = {
    "gradient_lab/optimizers.py": (
        "OPTIMIZERS: dict[str, OptimizerKind] = {\n",
        '    "dummy": OptimizerKind(SGD, {}, _SGD, {"en": "Dummy", "zh-CN": "假的"},\n'
        '                           "#000000", "star", "dot", _sgd_rule, lr_like="sgd"),\n'),
    "gradient_lab/descent/surfaces.py": (
        "SURFACES: dict[str, Surface] = {s.name: s for s in (\n",
        '    Surface("dummybowl", "x**2 + y**2", r"x^2 + y^2", _quadratic,\n'
        "            x_range=(-2, 2), y_range=(-2, 2), start=(-1.5, 1.8), minima=((0, 0),),\n"
        '            lrs={"sgd": 0.1, "momentum": 0.05, "adam": 0.1}, steps=60),\n'),
}
# The new lesson's module (the one place that declares it), panel and drawing: new files.
LESSON_MODULE = '''"""A newcomer's lesson: the accumulation lesson's answer, under its own name."""

from typing import Annotated

import torch
from typing_extensions import Doc

from gradient_lab.training.lessons import Lesson
from gradient_lab.training.models import Count
from gradient_lab.training.precision import Accumulation, accumulate


def dummy_lesson(*, micro_batches: Annotated[Count, Doc("Backward calls per step.")] = 3,
                 micro_batch: Count = 8, seed: int, device: torch.device) -> Accumulation:
    return accumulate(micro_batches=micro_batches, micro_batch=micro_batch, seed=seed,
                      device=device)


LESSONS = (Lesson("dummy", dummy_lesson, tab=0),)
'''
COPIES = {"templates/training/dummy.html": "templates/training/accumulation.html",
          "static/training/dummy.js": "static/training/accumulation.js"}

# Run in the copy: what the schema and the pages say of the three new entries.
PROBE = """
import json, re
from fastapi.testclient import TestClient
from gradient_lab.main import create_app

with TestClient(create_app()) as client:
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    page = client.get("/descent").text
    training_page = client.get("/training").text
    lesson = client.post("/api/training/dummy", json={"micro_batches": 2, "micro_batch": 4})
    refused = client.post("/api/training/dummy", json={"micro_batches": 0})
    script = client.get("/static/training/dummy.js")
data = json.loads(re.search(r'id="page-data">(.*?)</script>', page, re.S).group(1))
choices = json.loads(re.search(r'id="page-data">(.*?)</script>', training_page,
                               re.S).group(1))["choices"]
print(json.dumps({
    "lessons": choices["lessons"],
    "lesson_defaults": choices["defaults"].get("dummy"),
    "training_optimizer": choices["optimizer_labels"].get("dummy"),
    "lesson_panel": 'id="panel-dummy"' in training_page and 'id="tab-dummy"' in training_page,
    "lesson_reply": [lesson.status_code, sorted(lesson.json())],
    "lesson_refused": refused.status_code,
    "lesson_request": schema["DummyRequest"]["properties"],
    "lesson_script": script.status_code,
    "optimizer_names": schema["RunIn"]["properties"]["optimizer"]["enum"],
    "surface_names": schema["DescentRequest"]["properties"]["surface"]["anyOf"][0]["enum"],
    "paths": sorted(create_app().openapi()["paths"]),
    "page_optimizers": sorted(data["optimizers"]),
    "page_surfaces": sorted(s["name"] for s in data["surfaces"]),
}))
"""


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package and its tests, copied, with the three entries added to their registries."""
    root = tmp_path_factory.mktemp("newcomer")
    ignore = shutil.ignore_patterns("__pycache__", "artifacts", "*.pyc")
    for part in ("gradient_lab", "tests", "templates", "static", "pyproject.toml"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, root / part, ignore=ignore)
        else:
            shutil.copy(source, root / part)
    for name, (after, entry) in ADDITIONS.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        assert text.count(after) == 1, f"{name} no longer has the line {after!r}"
        path.write_text(text.replace(after, after + entry), encoding="utf-8")
    (root / "gradient_lab/training/dummy.py").write_text(LESSON_MODULE, encoding="utf-8")
    for name, source in COPIES.items():
        text = (root / source).read_text(encoding="utf-8")
        (root / name).write_text(text.replace("accumulation", "dummy"), encoding="utf-8")
    return root


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_new_entries_reach_the_schema_and_the_pages(copy: Path) -> None:
    done = _run(copy, "-c", PROBE)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "dummy" in seen["optimizer_names"] and "dummy" in seen["page_optimizers"]
    assert seen["training_optimizer"] == {"en": "Dummy", "zh-CN": "假的"}
    assert "dummybowl" in seen["surface_names"] and "dummybowl" in seen["page_surfaces"]
    assert "/api/training/dummy" in seen["paths"]
    # The lesson has its tab (first: tab 0), its form's defaults and its request's bounds and
    # descriptions from its function's signature, its panel, a route that runs it and answers
    # its function's dataclass, and its drawing served by name.
    assert seen["lessons"] == ["dummy", *schemas.LESSONS]
    assert seen["lesson_defaults"] == {"device": "auto", "micro_batches": 3, "micro_batch": 8}
    assert seen["lesson_request"]["micro_batches"]["description"] == "Backward calls per step."
    assert seen["lesson_request"]["micro_batch"]["minimum"] == 1
    assert seen["lesson_refused"] == 422
    assert seen["lesson_panel"]
    assert seen["lesson_reply"] == [200, sorted(f.name for f in dataclasses.fields(Accumulation))]
    assert seen["lesson_script"] == 200


def test_the_registries_tests_take_the_new_entries(copy: Path) -> None:
    # Collected from the copy: each test parametrized over a registry has a case for the new
    # entry; the surface's own checks (formula as typed, minimum, lr) also pass for it.
    done = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co",
                "tests/descent/test_surfaces.py", "tests/test_optimizers.py")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "[dummybowl]" in done.stdout and "[dummy]" in done.stdout
    ran = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "tests/descent/test_surfaces.py", "-k", "dummybowl")
    assert ran.returncode == 0 and " passed" in ran.stdout, ran.stdout[-3000:]
