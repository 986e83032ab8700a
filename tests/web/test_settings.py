from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from gradient_lab.runner.limits import Limits
from gradient_lab.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_limit_is_a_setting_with_the_same_default() -> None:
    for field in fields(Limits):
        assert field.name in Settings.model_fields
        assert Settings.model_fields[field.name].default == field.default


def test_app_graph_nodes_changes_the_setting_and_the_limits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_GRAPH_NODES", "123")
    assert Settings().graph_nodes == 123
    assert Settings().limits().graph_nodes == 123


def test_limits_carry_every_setting_of_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_WALL_SECONDS", "1.5")
    monkeypatch.setenv("APP_MEMORY_MB", "512")
    limits = Settings().limits()
    assert (limits.wall_seconds, limits.memory_mb) == (1.5, 512)


def test_a_zero_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_GRAPH_NODES", "0")
    with pytest.raises(ValueError, match="graph_nodes"):
        Settings()


def test_at_least_two_programs_run_at_once_by_default() -> None:
    assert Settings().runner_jobs >= 2 and Settings().runner_ready >= 1


def test_weaker_walls_are_off_unless_an_operator_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().runner_weak_walls is False
    monkeypatch.setenv("APP_RUNNER_WEAK_WALLS", "true")
    assert Settings().runner_weak_walls is True


def test_readme_lists_every_setting_with_its_description() -> None:
    readme = README.read_text(encoding="utf-8")
    for name, field in Settings.model_fields.items():
        row = next(
            (line for line in readme.splitlines() if line.startswith(f"| `APP_{name.upper()}` |")),
            None,
        )
        assert row is not None, f"README has no row for APP_{name.upper()}"
        assert field.description is not None and field.description in row
        if field.default == "":
            assert "| none |" in row
        elif field.default_factory is None:
            assert f"`{field.default}`" in row
