"""How a broken SolAr of the catalogue reaches into the target cluster: the sim's kubelet runs on
the target cluster, so its client is the target cluster's, remembered each time it reconciles."""

from __future__ import annotations

from typing import Any

from tests.mutants.model import Patch

_REMEMBERED: dict[str, Any] = {}


def target_cluster() -> Any | None:
    """A client of the target cluster, once the sim's kubelet has run; else None."""
    return _REMEMBERED.get("client")


def _remember(original: Any) -> Any:
    def reconcile_all(self: Any) -> float:
        _REMEMBERED["client"] = self.target
        return float(original(self))

    return reconcile_all


REMEMBER_TARGET_CLUSTER = Patch(
    "solar_conformance.simulators.memory.kubelet:SimKubelet.reconcile_all", _remember
)
