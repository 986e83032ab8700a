"""What the server sets up once, before its first request."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient

from gradient_lab.main import create_app


def test_what_start_up_made_is_left_out_of_the_collectors_walks() -> None:
    # A full collection walking the server's imports, routes and pool held a class's first
    # burst of requests 120 ms (bench/class_follows.py): start-up sets them aside once.
    gc.unfreeze()  # what an earlier app of this test process set aside
    with TestClient(create_app()) as client:
        pool = client.app.state.pool  # type: ignore[attr-defined]
        assert gc.get_freeze_count() > 0
        assert not any(thing is pool for thing in gc.get_objects())
        assert client.get("/healthz").status_code == 200
