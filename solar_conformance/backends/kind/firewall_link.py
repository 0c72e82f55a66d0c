"""The link of the target cluster's pods to the SolAr API server, which a fault cuts."""

from __future__ import annotations

from solar_conformance.backends.kind.cluster import KindCluster
from solar_conformance.backends.kind.cluster_errors import KindClusterError


class FirewallLink:
    """Cuts the target pods' route to the SolAr API server with a rule in the target node."""

    def __init__(self, node: KindCluster, destination: str, port: int) -> None:
        self._node = node
        self._rule = ["FORWARD", "-d", destination, "-p", "tcp", "--dport", str(port)]
        self._rule += ["-j", "REJECT", "--reject-with", "tcp-reset"]
        self._cut = False
        self._remove_leftovers()

    def _remove_leftovers(self) -> None:
        """A reused node may still carry the rule of a run that was killed."""
        for _ in range(10):
            try:
                self._node.exec(["iptables", "-D", *self._rule])
            except KindClusterError:
                return

    def cut(self) -> None:
        self._node.exec(["iptables", "-I", *self._rule])
        self._cut = True

    def restore(self) -> None:
        if self._cut:
            self._node.exec(["iptables", "-D", *self._rule])
            self._cut = False
