"""The LAN addresses a class is shown: this machine's own, and none only it can use."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess

import pytest

from gradient_lab.lan import lan_addresses


def test_every_address_is_one_this_machine_can_listen_on() -> None:
    for address in lan_addresses():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((address, 0))  # EADDRNOTAVAIL for an address not on this machine


def test_loopback_and_link_local_are_left_out() -> None:
    for address in lan_addresses():
        ip = ipaddress.ip_address(address)
        assert not ip.is_loopback and not ip.is_link_local, address


def test_the_interfaces_ipv4_addresses_are_all_there() -> None:
    if shutil.which("hostname") is None:
        pytest.skip("no hostname command to compare with")
    # `hostname -I` (Debian's hostname) lists every configured address but loopback's.
    shown = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    expected = {a for a in shown if ipaddress.ip_address(a).version == 4
                and not ipaddress.ip_address(a).is_link_local}
    assert expected <= set(lan_addresses())
