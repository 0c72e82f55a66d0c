"""The loopback port each kind cluster's API server is published on, chosen by the harness.

Left to kind, each `kind create cluster` picks a free port by binding port 0 and releasing it, and
Docker publishes it only later: clusters created side by side (a run's two landscapes start four
at once) can pick the same port, and the second `docker run` then fails with `port is already
allocated`. The harness picks the ports instead, outside the kernel's ephemeral range, and never
one that another cluster of this process holds. A port taken meanwhile by another process is
retried with a new one (`PORT_TAKEN`).
"""

from __future__ import annotations

import threading

from solar_conformance.components.probes import free_loopback_ports

# What Docker answers when the host port of a `--publish` is held already.
PORT_TAKEN = "port is already allocated"
ATTEMPTS = 3

_held: set[int] = set()
_choosing = threading.Lock()


def reserve() -> int:
    """A port free now that no other cluster of this process holds, until `release`."""
    with _choosing:
        while True:
            (port,) = free_loopback_ports(1)
            if port not in _held:
                _held.add(port)
                return port


def release(port: int | None) -> None:
    with _choosing:
        _held.discard(port or 0)
