from __future__ import annotations

import pickle
from dataclasses import fields
from pathlib import Path

import pytest

from app.sandbox.limits import Limits
from app.settings import Settings

README = Path(__file__).resolve().parent.parent / "README.md"


def test_every_limit_is_a_setting_with_the_same_default() -> None:
    for field in fields(Limits):
        assert field.name in Settings.model_fields
        assert Settings.model_fields[field.name].default == field.default


def test_app_steps_changes_the_setting_and_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_STEPS", "123")
    assert Settings().steps == 123
    assert Settings().limits().steps == 123


def test_limits_carry_every_setting_of_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_WALL_SECONDS", "1.5")
    monkeypatch.setenv("APP_WORKER_MEMORY_MB", "512")
    limits = Settings().limits()
    assert (limits.wall_seconds, limits.worker_memory_mb) == (1.5, 512)


def test_limits_cross_a_pickle_whole() -> None:
    limits = Limits(**{f.name: i + 1 for i, f in enumerate(fields(Limits))})
    copy = pickle.loads(pickle.dumps(limits, pickle.HIGHEST_PROTOCOL))
    assert copy == limits and copy != Limits()


def test_a_changed_copy_of_the_settings_has_its_own_limits() -> None:
    settings = Settings()
    assert settings.limits() is settings.limits()  # made once
    changed = settings.model_copy(update={"steps": 7})
    assert (changed.limits().steps, settings.limits().steps) == (7, Limits().steps)
    with pytest.raises(ValueError):
        settings.steps = 7  # type: ignore[misc]  # frozen, so what limits() made stays true


def test_a_zero_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_STEPS", "0")
    with pytest.raises(ValueError, match="steps"):
        Settings()


def test_there_are_at_least_two_sandbox_workers_by_default() -> None:
    assert Settings().sandbox_workers >= 2


def test_readme_lists_every_setting_with_its_description() -> None:
    readme = README.read_text(encoding="utf-8")
    for name, field in Settings.model_fields.items():
        row = next(
            (line for line in readme.splitlines() if line.startswith(f"| `APP_{name.upper()}` |")),
            None,
        )
        assert row is not None, f"README has no row for APP_{name.upper()}"
        assert field.description is not None and field.description in row
        if field.default_factory is None:
            assert f"`{field.default}`" in row
