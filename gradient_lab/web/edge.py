"""The HTTP edge: how uvicorn serves the lab (one function, `uvicorn_options`), the bounds it
puts on each connection, and the names the API answers to.

One client must not take the server down by how it connects: its request line and headers
are bounded in size (h11's limit: a 400 at 32 KiB rather than seconds of parsing) and in time
(`EdgeProtocol`: a head not sent within APP_HEADER_SECONDS is a 408 and the connection closes,
however slowly its bytes trickle in; an idle one closes too); it holds at most
APP_CONNECTIONS_PER_CLIENT connections, and the process at most APP_CONNECTIONS_MAX, sized
within the descriptor limit, which the server raises to its hard limit at start.

DNS rebinding: a page on evil.example has its name re-pointed at a lab on the student's
network, and its requests are then same-origin ones (Origin and Host both evil.example), which
the cross-site check lets through. The API answers only under a name of its own: an address,
localhost, this machine's name, or one the operator lists (APP_ALLOWED_HOSTS).
"""

from __future__ import annotations

import asyncio
import ipaddress
import resource
import socket
from collections import Counter
from typing import Any, ClassVar
from urllib.parse import urlsplit

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from gradient_lab.settings import Settings, load_settings
from gradient_lab.web.client import trusted_networks

# Descriptors kept for everything but connections: the runner's pipes and pidfds (three a
# child), the room and kept stores, logs, the zygote's socket, and room to breathe.
_SPARE_DESCRIPTORS = 256
_PER_CHILD_DESCRIPTORS = 3
# Past APP_CONNECTIONS_MAX uvicorn answers a 503; this many more and a connection is closed
# unanswered, so that a flood never reaches the descriptor limit.
_OVERFLOW = 64
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """uvicorn.run's keyword arguments for this server, all but the app: uvicorn.run(
    "gradient_lab.main:app", **uvicorn_options(settings)). Raises this process's descriptor
    limit first (its workers inherit it), since the connections it allows are sized by it."""
    descriptors = raise_descriptor_limit()
    children = settings.runner_ready + settings.runner_jobs + settings.runner_long_jobs
    room = descriptors - _SPARE_DESCRIPTORS - _PER_CHILD_DESCRIPTORS * children - _OVERFLOW
    return {
        "host": settings.host, "port": settings.port, "workers": settings.workers,
        "http": "gradient_lab.web.edge:EdgeProtocol",
        "h11_max_incomplete_event_size": settings.header_bytes,
        "limit_concurrency": max(16, min(settings.connections_max, room)),
        "timeout_keep_alive": 5,
        # Who the client is, is web/client.py's to say, from APP_TRUSTED_PROXIES alone:
        # uvicorn's own reading of X-Forwarded-For trusts 127.0.0.1 whatever they say.
        "proxy_headers": False,
        "server_header": False,
    }


def raise_descriptor_limit() -> int:
    """Raise the soft limit on open descriptors to the hard one, as any process may; the
    limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # a kernel's nr_open below the hard limit: keep it
            pass
    return soft


class EdgeProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline for each request's head and caps on
    connections, overall and per client (a trusted proxy, which carries many, is not
    capped: client.py's per-client caps see through it)."""

    _per_peer: ClassVar[Counter[str]] = Counter()

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        settings = load_settings()
        self._head_seconds = settings.header_seconds
        self._per_client = settings.connections_per_client
        self._overall = (config.limit_concurrency or settings.connections_max) + _OVERFLOW
        self._trusted = trusted_networks(settings.trusted_proxies)
        self._peer: str | None = None
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else ""
        if len(self.connections) > self._overall or (
                self._per_peer[peer] >= self._per_client and not self._is_proxy(peer)):
            transport.abort()  # before it costs more than its descriptor, briefly
            return
        self._peer = peer
        self._per_peer[peer] += 1
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._peer is not None:
            self._per_peer[self._peer] -= 1
            if not self._per_peer[self._peer]:
                del self._per_peer[self._peer]
            self._peer = None
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in: the app has the request
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # the next request's, on a kept-alive connection

    def _await_head(self) -> None:
        self._stop_waiting()
        self._head_timer = self.loop.call_later(self._head_seconds, self._head_too_late)

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # part of a head came: say why it ends
            self.transport.write(_TIMED_OUT)
        self.transport.close()

    def _is_proxy(self, peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self._trusted)


def allowed_hosts(settings: Settings) -> frozenset[str]:
    """The names besides addresses and localhost that the API answers to: this machine's,
    the one it listens on, APP_PUBLIC_URL's, and APP_ALLOWED_HOSTS ("*": any, for a proxy
    that checks them)."""
    name = socket.gethostname().lower()
    listed = {host.strip().lower().rstrip(".") for host in settings.allowed_hosts.split(",")}
    public = (urlsplit(settings.public_url).hostname or "") if settings.public_url else ""
    return frozenset({name, f"{name}.local", settings.host.lower(), public, *listed} - {""})


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
