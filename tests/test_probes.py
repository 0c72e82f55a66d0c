"""Loopback ports for local components: distinct, free, away from the ephemeral range."""

from __future__ import annotations

import socket
from itertools import chain, repeat

import pytest

from solar_conformance.components import probes


def test_ports_are_distinct_free_and_outside_the_ephemeral_range() -> None:
    low, high = probes.ephemeral_port_range()
    ports = probes.free_loopback_ports(12)
    assert len(set(ports)) == 12
    assert all(not low <= port <= high for port in ports), (ports, (low, high))
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
            listener.bind(("127.0.0.1", port))


def test_a_port_in_use_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        monkeypatch.setattr(probes, "_candidates", lambda: chain([busy, busy], repeat(0)))
        ports = probes.free_loopback_ports(2)
    assert busy not in ports and len(set(ports)) == 2


def test_the_kernel_chooses_when_the_ephemeral_range_leaves_no_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(probes, "ephemeral_port_range", lambda: (1, 65535))
    ports = probes.free_loopback_ports(3)
    assert len(set(ports)) == 3 and all(port > 0 for port in ports)
