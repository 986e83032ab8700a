"""deploy/compose.yaml and its .env: the replicas share one room store, and each is walled in as
the Kubernetes pods are. (scripts/compose-check.sh runs the stack itself, under podman.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _env() -> dict[str, str]:
    lines = (DEPLOY / ".env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_replicas_share_rooms_in_the_stacks_redis() -> None:
    services = _compose()["services"]
    store = _env()["APP_ROOM_STORE"]
    assert store.startswith("redis://redis:6379/")
    assert "redis" in services and "redis" in services["app"]["depends_on"]
    redis = services["redis"]
    assert redis["read_only"] is True and redis["cap_drop"] == ["ALL"]
    assert redis["command"][:3] == ["redis-server", "--save", ""]  # rooms are not kept on disk
    assert "ports" not in redis  # reached by the replicas only, on the stack's own network


def test_each_replica_is_walled_in_as_a_pod_is() -> None:
    app = _compose()["services"]["app"]
    assert app["read_only"] is True and app["tmpfs"] == ["/tmp"]
    assert app["cap_drop"] == ["ALL"] and "no-new-privileges:true" in app["security_opt"]
    assert "seccomp=unconfined" not in app.get("security_opt", [])
