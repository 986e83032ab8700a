"""The machine's addresses on its local networks: what a class types to reach a teacher's laptop.

No packet leaves the machine. The address of the default route comes first (a UDP socket
"connected" to an address that is never reached only asks the kernel which source address it
would use), then every other interface's IPv4 address (the SIOCGIFCONF ioctl, on Linux).
Loopback (127/8) and link-local (169.254/16) addresses are left out: no other machine can use them.
"""

from __future__ import annotations

import array
import fcntl
import ipaddress
import socket
import struct

_SIOCGIFCONF = 0x8912
# struct ifreq on Linux: 16 bytes of name, then a union of 24 (a sockaddr_in is its first 16).
_IFREQ_BYTES = 40
_MAX_INTERFACES = 128
# Never reached: connect() on a UDP socket sends nothing. TEST-NET-1, then a private range
# (a machine whose only route is a LAN with no default gateway still has that one).
_PROBES = ("192.0.2.1", "10.255.255.255")


def lan_addresses() -> list[str]:
    """The machine's IPv4 addresses others on its networks can reach, the default route's first."""
    found: list[str] = []
    for address in [*_route_addresses(), *_interface_addresses()]:
        if address not in found and _reachable_from_elsewhere(address):
            found.append(address)
    return found


def _reachable_from_elsewhere(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def _route_addresses() -> list[str]:
    addresses = []
    for probe in _PROBES:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))
                addresses.append(udp.getsockname()[0])
        except OSError:
            continue
    return addresses


def _interface_addresses() -> list[str]:
    buffer = array.array("B", bytes(_IFREQ_BYTES * _MAX_INTERFACES))
    address, _ = buffer.buffer_info()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            request = struct.pack("iL", len(buffer), address)
            length = struct.unpack("iL", fcntl.ioctl(udp.fileno(), _SIOCGIFCONF, request))[0]
    except OSError:
        return []
    raw = buffer.tobytes()[:length]
    # Each entry's sockaddr_in holds the address at offset 4 (after family and port).
    return [socket.inet_ntoa(raw[start + 20:start + 24])
            for start in range(0, len(raw), _IFREQ_BYTES)]


def urls(host: str, port: int) -> list[str]:
    """The addresses to open for a server listening on host:port: this machine's first, then,
    when it listens on every address (0.0.0.0 or ::), those of the machine on its networks."""
    everywhere = host in ("0.0.0.0", "::", "")
    here = "127.0.0.1" if everywhere else host
    shown = [f"[{here}]" if ":" in here else here]
    if everywhere:
        shown += lan_addresses()
    return [f"http://{address}:{port}/" for address in shown]
