from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

# Each test server keeps its replies in its own memory, so that what one test ran is never
# another's (or another session's) kept reply; tests/kept/ and tests/browser hold the shared
# stores, SQLite and Redis, to their promise.
os.environ.setdefault("APP_KEPT_STORE", "memory")
# Nor does a test server compute the built-in lessons at start-up, unless a test asks it to
# (tests/web/test_ahead.py): each would run some forty jobs for nothing.
os.environ.setdefault("APP_COMPUTE_AHEAD", "false")
# TestClient's requests name the server "testserver": one of its names, as an operator would
# list a proxy's public name (gradient_lab/web/edge.py).
os.environ.setdefault("APP_ALLOWED_HOSTS", "testserver")
# The tests are one client running many programs at once (tests/web/test_client_cap.py holds
# the cap to its promise).
os.environ.setdefault("APP_CLIENT_PROGRAMS", "1000")
# Class rooms in a folder of this session's own, not the user's /tmp/gradient-lab-<uid>: the
# tests run in parallel processes (pytest-xdist), and no two may share one SQLite file.
_STORE = tempfile.mkdtemp(prefix="gradient-lab-tests-")
os.environ.setdefault("APP_ROOM_STORE", os.path.join(_STORE, "rooms.sqlite3"))
# Set before gradient_lab.main is imported: it builds an app, which reads the settings once.

import pytest  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from gradient_lab.main import create_app  # noqa: E402


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_STORE, ignore_errors=True)


@pytest.fixture(scope="session")
def _shared_client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


@pytest.fixture
def client(_shared_client: TestClient) -> Iterator[TestClient]:
    """One app for the session, with no cookies from the test before (a ?lang= is remembered in
    one, and made the next test's English page Chinese)."""
    _shared_client.cookies.clear()
    yield _shared_client
    _shared_client.cookies.clear()
