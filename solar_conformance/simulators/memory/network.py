"""Who can reach whom in the sim: API servers by URL, registries by host; links can be cut."""

from __future__ import annotations

from solar_conformance.core.api import Unreachable
from solar_conformance.core.credentials import same_server
from solar_conformance.simulators.memory.client import InMemoryClient
from solar_conformance.simulators.memory.cluster import InMemoryCluster
from solar_conformance.simulators.memory.registry import InMemoryRegistry, InMemoryRegistryClient


class SimNetwork:
    def __init__(self) -> None:
        self.clusters: dict[str, InMemoryCluster] = {}
        self.registries: dict[str, InMemoryRegistry] = {}
        self.cut: set[str] = set()

    def _gate(self, address: str) -> None:
        if address in self.cut:
            raise Unreachable(address)

    def connect_cluster(self, server: str, token: str, field_manager: str) -> InMemoryClient:
        """The API server `server` names, however it is written (a host in capitals, a trailing
        slash), as a client's resolver and the server's router read the URL."""
        address = next((url for url in self.clusters if same_server(url, server)), None)
        if address is None:
            raise Unreachable(server)
        client = self.clusters[address].with_token(token, field_manager)
        client.gate = lambda: self._gate(address)
        return client

    def connect_registry(
        self, host: str, username: str | None, password: str | None
    ) -> InMemoryRegistryClient:
        registry = self.registries.get(host)
        if registry is None:
            raise Unreachable(host)
        client = registry.client(username, password)
        client.gate = lambda: self._gate(host)
        return client
