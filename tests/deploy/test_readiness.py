"""/readyz, the readiness check of a replica behind a load balancer or in Kubernetes: 503 while
the server cannot run learners' programs, while /healthz (the liveness check) stays 200."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from fastapi.testclient import TestClient

from gradient_lab.main import create_app


@dataclass
class _Config:
    weak_walls: bool
    device: str = "cpu"


@dataclass
class _Pool:
    """What the health routes read of the runner's pool, for a kernel that lacks walls."""

    missing: list[str]
    config: _Config = field(default_factory=lambda: _Config(weak_walls=False))

    def health(self) -> dict[str, object]:
        return {"ready": 2, "running": 0, "long": 0, "forked": 2,
                "walls": {"landlock": 0 if "landlock" in self.missing else 7, "seccomp": True}}

    def missing_walls(self) -> list[str]:
        return self.missing

    def trouble(self) -> str | None:
        return None


def _without_runner(pool: _Pool | None) -> TestClient:
    """A client of an app whose lifespan has not run (no pool), with `pool` put in its place."""
    app = create_app()
    if pool is not None:
        app.state.pool = pool
    return TestClient(app)


def test_readyz_is_200_with_every_wall_up(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["walls_missing"] == []


def test_readyz_is_503_while_a_wall_is_missing_and_healthz_stays_200() -> None:
    client = _without_runner(_Pool(missing=["landlock"]))
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "not ready" and ready.json()["walls_missing"] == ["landlock"]
    live = client.get("/healthz")
    assert live.status_code == 200 and live.json()["walls_missing"] == ["landlock"]


def test_weak_walls_make_a_server_without_a_wall_ready() -> None:
    client = _without_runner(_Pool(missing=["landlock"], config=_Config(weak_walls=True)))
    assert client.get("/readyz").status_code == 200


def test_readyz_is_503_before_the_runner_starts() -> None:
    client = _without_runner(None)
    assert client.get("/readyz").status_code == 503
    assert client.get("/healthz").status_code == 200


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rpartition(")")[2].split()[1])
            except (OSError, ValueError):
                continue
            if parent == pid:
                found.append(int(entry))
    return found


def test_readyz_is_503_while_ready_children_keep_dying_and_says_why() -> None:
    # As the OOM killer, or a device the children cannot open, would: each ready child ends
    # before any program reaches it, and the pool forks another, again and again.
    others = set(_children_of(os.getpid()))  # the session's own server's zygote among them
    with TestClient(create_app()) as client:
        assert client.get("/readyz").status_code == 200
        zygote = next(pid for pid in set(_children_of(os.getpid())) - others
                      if b"gradient_lab.jobs" in Path(f"/proc/{pid}/cmdline").read_bytes())
        killed: set[int] = set()
        deadline = time.monotonic() + 30
        while len(killed) < 5 and time.monotonic() < deadline:
            for child in set(_children_of(zygote)) - killed:
                os.kill(child, signal.SIGKILL)
                killed.add(child)
            time.sleep(0.05)
        for _ in range(100):  # the zygote's word on each end reaches the pool
            if client.get("/healthz").json()["runner"]["ended_early"] >= 5:
                break
            time.sleep(0.05)
        ready = client.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.json()["status"] == "not ready"
        assert "ended" in ready.json()["why"] and ready.json()["why"] == ready.json()["trouble"]
        live = client.get("/healthz")
        assert live.status_code == 200 and live.json()["runner"]["ended_early"] >= 5
