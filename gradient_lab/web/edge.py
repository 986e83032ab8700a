"""The HTTP edge: the names the API answers to.

DNS rebinding: a page on evil.example has its name re-pointed at a lab on the student's
network, and its requests are then same-origin ones (Origin and Host both evil.example), which
the cross-site check lets through. The API answers only under a name of its own: an address,
localhost, this machine's name, or one the operator lists (APP_ALLOWED_HOSTS).
"""

from __future__ import annotations

import ipaddress
import socket

from gradient_lab.settings import Settings


def allowed_hosts(settings: Settings) -> frozenset[str]:
    """The names besides addresses and localhost that the API answers to: this machine's,
    the one it listens on, and APP_ALLOWED_HOSTS ("*": any, for a proxy that checks them)."""
    name = socket.gethostname().lower()
    listed = {host.strip().lower().rstrip(".") for host in settings.allowed_hosts.split(",")}
    return frozenset({name, f"{name}.local", settings.host.lower(), *listed} - {""})


def host_allowed(host: str, allowed: frozenset[str]) -> bool:
    """Whether a Host header ("lab.example:8000", "[::1]:8000") names this server."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    name = name.rstrip(".")
    try:
        ipaddress.ip_address(name)
        return True  # an address is no name a stranger's DNS can re-point
    except ValueError:
        pass
    return name == "localhost" or name.endswith(".localhost") or name in allowed or \
        "*" in allowed
