from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from gradient_lab.main import create_app


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c
