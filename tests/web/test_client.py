"""Who the client is (gradient_lab/web/client.py): the peer, or behind a trusted proxy the
address that proxy saw; never what the client writes in X-Forwarded-For itself."""

from __future__ import annotations

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from gradient_lab.settings import Settings
from gradient_lab.web.client import client_of

PROXY = "172.18.0.3"  # Caddy in deploy/compose.yaml's network


def _who(peer: str, trusted: str, *forwarded: str) -> str:
    app = FastAPI()
    settings = Settings(trusted_proxies=trusted)

    @app.get("/who")
    async def who(request: Request) -> str:
        return client_of(request, settings)

    headers = [("x-forwarded-for", value) for value in forwarded]
    with TestClient(app, client=(peer, 40000)) as client:
        answer: str = client.get("/who", headers=headers).json()
    return answer


def test_without_a_trusted_proxy_the_peer_is_the_client_whatever_it_forwards() -> None:
    assert _who("203.0.113.9", "", "10.0.0.1") == "203.0.113.9"


def test_a_stranger_cannot_pose_as_another_client_by_writing_the_header() -> None:
    assert _who("203.0.113.9", "172.16.0.0/12", "10.0.0.1") == "203.0.113.9"


def test_behind_a_trusted_proxy_the_client_is_the_address_it_saw() -> None:
    # Caddy appends the peer it took the request from: what the student wrote comes first.
    assert _who(PROXY, "172.16.0.0/12", "6.6.6.6, 10.0.4.17") == "10.0.4.17"


def test_a_chain_of_trusted_proxies_is_read_past_each_of_them() -> None:
    chain = "10.0.4.17, 172.18.0.9"  # an ingress, then the proxy beside the app
    assert _who(PROXY, "172.16.0.0/12", chain) == "10.0.4.17"
    assert _who(PROXY, "172.16.0.0/12", "10.0.4.17", "172.18.0.9") == "10.0.4.17"


@pytest.mark.parametrize("garbage", ["unknown", "<script>", "lab.example", ""])
def test_a_hop_that_is_no_address_leaves_the_last_trusted_one_as_the_client(
        garbage: str) -> None:
    # Otherwise a client could write a fresh name each time and escape every per-client cap.
    assert _who(PROXY, "172.16.0.0/12", garbage) == PROXY
    assert _who(PROXY, "172.16.0.0/12", f"10.0.4.17, {garbage}") == PROXY


def test_addresses_are_written_one_way() -> None:
    assert _who("::ffff:10.0.4.17", "") == "10.0.4.17"
    assert _who(PROXY, PROXY, "[2001:DB8::5]:4711") == "2001:db8::5"
    assert _who(PROXY, PROXY, "10.0.4.17:4711") == "10.0.4.17"


def test_a_trusted_proxy_that_is_not_an_address_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="trusted_proxies"):
        Settings(trusted_proxies="caddy")
