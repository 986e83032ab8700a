"""One version, written once in pyproject.toml, shown where two builds must be told apart:
the package, `gradient-lab --version` (tests/test_cli.py), /healthz and every page's footer."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import gradient_lab

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["/", "/descent", "/training", "/lessons"]


def test_the_package_version_is_pyprojects() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert gradient_lab.__version__ == project["version"]


def test_healthz_and_the_schema_name_the_version(client: TestClient) -> None:
    assert client.get("/healthz").json()["version"] == gradient_lab.__version__
    assert client.get("/openapi.json").json()["info"]["version"] == gradient_lab.__version__


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("path", PAGES)
def test_every_pages_footer_shows_the_version(client: TestClient, path: str, lang: str) -> None:
    html = client.get(path, params={"lang": lang}).text
    footer = html[html.index('<footer class="foot">'):html.index("</footer>")]
    assert f'<span class="version">{gradient_lab.__version__}</span>' in footer
    assert 'href="/docs"' in footer and "MIT" in footer


def test_the_licence_is_mit_and_the_wheel_says_so() -> None:
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
