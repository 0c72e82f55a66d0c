"""Each kind cluster's API server on a host port of its own (solar_conformance/backends/kind/
api_ports.py): clusters created side by side never pick the same one, and a port another process
took meanwhile is retried with a new one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from solar_conformance.backends.kind import api_ports
from solar_conformance.backends.kind.cluster import KindCluster
from solar_conformance.backends.kind.cluster_errors import KindClusterError
from solar_conformance.components.probes import ephemeral_port_range

TAKEN = (
    "docker: Error response from daemon: driver failed programming external connectivity on "
    "endpoint c-control-plane (0f5e): Bind for 127.0.0.1:41123 failed: port is already allocated"
)


class _Toolchain:
    def path(self, artifact: str) -> Path:
        return Path("/nonexistent") / artifact


def test_clusters_created_side_by_side_get_distinct_ports_outside_the_ephemeral_range() -> None:
    with ThreadPoolExecutor(8) as pool:
        ports = list(pool.map(lambda _: api_ports.reserve(), range(64)))
    try:
        assert len(set(ports)) == len(ports)
        low, high = ephemeral_port_range()
        assert not [port for port in ports if low <= port <= high]
    finally:
        for port in ports:
            api_ports.release(port)


class _Kind(KindCluster):
    """`kind` answers from a script: each create fails with the given errors, then succeeds."""

    def __init__(self, errors: list[str], tmp: Path) -> None:
        super().__init__("c", "node:test", _Toolchain(), report=lambda _line: None)  # type: ignore[arg-type]
        self.errors = errors
        self.calls: list[tuple[str, int]] = []  # (command, port in the config at that time)
        self.config = tmp / "kind-config.yaml"

    def _kind_command(self, arguments: list[str], log_name: str) -> str:
        port = yaml.safe_load(self.config.read_text())["networking"]["apiServerPort"]
        self.calls.append((arguments[0], port))
        if arguments[0] == "create" and self.errors:
            raise KindClusterError(self.errors.pop(0))
        return ""


def _create(kind: _Kind, tmp: Path) -> None:
    kind._create_on_a_port_of_its_own(kind.config, tmp / "audit", ["create", "cluster"])


def test_a_port_taken_meanwhile_is_given_up_for_a_new_one(tmp_path: Path) -> None:
    kind = _Kind([TAKEN], tmp_path)
    _create(kind, tmp_path)
    (create, first), (delete, _), (again, second) = kind.calls
    assert (create, delete, again) == ("create", "delete", "create")
    assert first != second
    kind.stop()


def test_other_failures_and_the_last_attempt_are_not_retried(tmp_path: Path) -> None:
    kind = _Kind(["no space left on device"], tmp_path)
    with pytest.raises(KindClusterError, match="no space left"):
        _create(kind, tmp_path)
    assert [command for command, _ in kind.calls] == ["create"]
    kind = _Kind([TAKEN] * api_ports.ATTEMPTS, tmp_path)
    with pytest.raises(KindClusterError, match=api_ports.PORT_TAKEN):
        _create(kind, tmp_path)
    assert [c for c, _ in kind.calls].count("create") == api_ports.ATTEMPTS
