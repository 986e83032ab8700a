"""The address a class opens to join: one the students' devices can reach, or a reason why
there is none (the teacher's panel says it, with the one-line fix)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request

from gradient_lab.lan import lan_addresses
from gradient_lab.settings import Settings

_ALL_INTERFACES = {"0.0.0.0", "::", ""}  # noqa: S104 - what the setting says, not a bind here
_CONTAINER_MARKS = ("/.dockerenv", "/run/.containerenv")  # Docker's and podman's


@dataclass(frozen=True, slots=True)
class JoinBase:
    url: str  # ends in "/"
    unreachable: Literal["loopback", "container"] | None = None  # no other device opens url


def join_base(request: Request, settings: Settings) -> JoinBase:
    """Where students join: APP_PUBLIC_URL if set; else the address the teacher opened, unless
    it is this machine's loopback, which is replaced by its LAN address when the server
    listens on every interface (outside a container, whose addresses are its own)."""
    if settings.public_url:
        return JoinBase(settings.public_url.rstrip("/") + "/")
    opened = str(request.base_url)
    if not _is_loopback(request.url.hostname or ""):
        return JoinBase(opened)
    if any(os.path.exists(mark) for mark in _CONTAINER_MARKS):
        return JoinBase(opened, "container")
    addresses = lan_addresses() if settings.host in _ALL_INTERFACES else []
    if not addresses:
        return JoinBase(opened, "loopback")
    port = request.url.port
    return JoinBase(f"{request.url.scheme}://{addresses[0]}{f':{port}' if port else ''}/")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
