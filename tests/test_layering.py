"""The domain modules may import only torch, the stdlib and app.errors: never the web stack."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"
DOMAIN = ["runner", "graph.py", "tracing.py", "describing.py", "recording.py", "gradchecks.py",
          "surfaces.py", "optimizers.py", "race.py", "sweeps.py", "presets.py", "tensors.py",
          "training"]
WEB = {"fastapi", "starlette", "pydantic", "pydantic_settings"}


def _domain_files() -> list[Path]:
    files: list[Path] = []
    for name in DOMAIN:
        path = APP / name
        if path.is_dir():
            files.extend(sorted(path.rglob("*.py")))
        elif path.exists():
            files.append(path)
    return files


def _imported_packages(path: Path) -> set[str]:
    packages: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            packages.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            packages.add(node.module.split(".")[0])
    return packages


def test_the_runner_package_is_checked() -> None:
    assert APP / "runner" / "limits.py" in _domain_files()


@pytest.mark.parametrize("path", _domain_files(), ids=lambda p: str(p.relative_to(APP)))
def test_domain_module_does_not_import_the_web_stack(path: Path) -> None:
    assert _imported_packages(path) & WEB == set()
