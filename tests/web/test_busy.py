"""A server with every place taken says when to try again (issue 25 item 4)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from gradient_lab.main import create_app
from gradient_lab.settings import load_settings
from tests.helpers import assert_error


@pytest.fixture(scope="module")
def crowded() -> Iterator[TestClient]:
    """One place, one aside, and a queue of a fifth of a second."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in {"APP_RUNNER_JOBS": "1", "APP_RUNNER_LONG_JOBS": "0",
                           "APP_QUEUE_SECONDS": "0.2", "APP_RUNNER_READY": "1"}.items():
            patch.setenv(key, value)
        load_settings.cache_clear()
        try:
            with TestClient(create_app()) as client:
                yield client
        finally:
            load_settings.cache_clear()


def test_a_request_that_waited_its_whole_queue_time_is_a_503_with_retry_after(
        crowded: TestClient) -> None:
    long = threading.Thread(target=crowded.post, args=("/api/graph",), kwargs={"json": {
        "code": f"# {uuid.uuid4().hex}\nimport time\ntime.sleep(1.5)\n"}})
    long.start()
    try:
        threading.Event().wait(0.4)  # the sleeper holds the one place
        response = crowded.post("/api/graph", json={"code": f"# {uuid.uuid4().hex}\nx = 1\n"})
        assert_error(response, 503, "busy")
        assert response.headers["retry-after"] == "2"
    finally:
        long.join()
