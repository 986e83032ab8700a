"""Who is asking: the one answer every per-client brake and cap uses.

The connection's peer is the client, unless the peer is a proxy the settings trust
(APP_TRUSTED_PROXIES): then X-Forwarded-For says who came before it. Caddy and nginx each add
the address they took the request from at its end, so the header is read from the right, past
every trusted proxy, and the first address no trusted proxy wrote is the client. Anything to its
left came from the client itself, which may write what it likes there. Without a trusted proxy
the header is never read (uvicorn's own reading of it is off: web/edge.py).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from gradient_lab.settings import Settings, get_settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_of(request: HTTPConnection, settings: Settings) -> str:
    """The client's address, as text ("10.0.4.17", "2001:db8::5"), through trusted proxies."""
    peer = request.client.host if request.client else ""
    trusted = trusted_networks(settings.trusted_proxies)
    address = _address(peer)
    if address is None or not _within(address, trusted):
        return str(address) if address is not None else peer
    forwarded = ",".join(request.headers.getlist("x-forwarded-for"))
    for hop in reversed(forwarded.split(",") if forwarded else []):
        written = _address(hop)
        if written is None:  # a trusted proxy passed on what it got: the client wrote it
            break
        address = written
        if not _within(address, trusted):
            break
    return str(address)


async def get_client(request: HTTPConnection,
                     settings: Annotated[Settings, Depends(get_settings)]) -> str:
    return client_of(request, settings)


ClientDep = Annotated[str, Depends(get_client)]


@lru_cache(maxsize=8)
def trusted_networks(setting: str) -> tuple[Network, ...]:
    """APP_TRUSTED_PROXIES as networks: "10.0.0.5, 172.16.0.0/12" (an address is a /32)."""
    return tuple(ipaddress.ip_network(item.strip(), strict=False)
                 for item in setting.split(",") if item.strip())


def _within(address: Address, networks: tuple[Network, ...]) -> bool:
    return any(address in network for network in networks)


def _address(text: str) -> Address | None:
    """An address as a proxy or a socket writes it: bare, "[v6]:port" or "v4:port"; None for
    anything else (a name, "unknown", a test client's "testclient")."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # a dual-stack socket's ::ffff:10.0.0.1 is 10.0.0.1
    return address
